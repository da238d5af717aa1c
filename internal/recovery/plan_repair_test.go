// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

func TestRepairSuccess(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	rep := &recorder{}
	s := h.r.Repair(context.Background(), request(), rep)
	actions := h.cs.Actions()
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s, want repaired; summary:\n%s\nprogress:\n%s", s.Outcome, s.Text, rep.text())
	}
	if rep.summary == nil || rep.summary.Outcome != OutcomeRepaired {
		t.Fatalf("Finish not called with the outcome: %+v", rep.summary)
	}
	for _, want := range []string{
		"kafkabot-backup-20261129T120000Z-appr-0001/data/__cluster_metadata-0", "73400320 bytes",
		"New pod " + brokerName + " (UID " + newBrokerUID + "): Ready", "approved by U0APPROVER",
	} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, s.Text)
		}
	}
	progress := rep.text()
	for _, want := range []string{
		"done | Read the repair script's result | took 0s\nMoved /kafka-data/0/data/__cluster_metadata-0 to /kafka-data/0/kafkabot-backup",
		"Transitioning from RECOVERY to RUNNING",
		"started | Create debug pod " + DebugPodName(brokerName),
	} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}

	wantWrites := []string{
		"create leases/" + kube.ClusterLeaseName(kube.KafkaClusterKeyOf(testNS, "foobar")), // the gates group the seed pods by app.kubernetes.io/instance
		"create leases/kafkabot-repair-" + brokerName,
		"create pods/" + DebugPodName(brokerName),
		"patch pods/" + DebugPodName(brokerName), // the go signal
		"delete pods/" + DebugPodName(brokerName),
		"delete pods/" + brokerName,
	}
	writes := h.writes()
	var podAndLease []string
	for _, w := range writes {
		if strings.Contains(w, " pods/") || strings.HasPrefix(w, "create leases/") {
			podAndLease = append(podAndLease, w)
		}
	}
	if !slices.Equal(podAndLease, wantWrites) {
		t.Errorf("pod and lease writes:\n%s\nwant:\n%s", strings.Join(podAndLease, "\n"), strings.Join(wantWrites, "\n"))
	}

	l := h.lease()
	if l.Annotations[annoState] != leaseDone || l.Annotations[annoApprovalID] != testApproval || l.Spec.HolderIdentity != nil {
		t.Errorf("lease after success: state %q approval %q holder %v", l.Annotations[annoState], l.Annotations[annoApprovalID], l.Spec.HolderIdentity)
	}
	if !strings.Contains(l.Annotations[annoResult], `"Status":"moved"`) {
		t.Errorf("lease lacks the result: %q", l.Annotations[annoResult])
	}

	events, err := h.cs.CoreV1().Events(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		if e.InvolvedObject.Name != brokerName || e.InvolvedObject.Kind != "Pod" {
			t.Errorf("event %s is about %s/%s", e.Name, e.InvolvedObject.Kind, e.InvolvedObject.Name)
		}
		reasons = append(reasons, e.Reason)
	}
	if !slices.Contains(reasons, EventReasonStep) || !slices.Contains(reasons, EventReasonFinished) {
		t.Errorf("event reasons %v lack %s and %s", reasons, EventReasonStep, EventReasonFinished)
	}

	audit := h.audit.String()
	for _, want := range []string{`"msg":"repair approved"`, `"msg":"repair finished"`, `"outcome":"repaired"`, `"approver":"U0APPROVER"`, `"requester":"U0REQUESTER"`} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}

	// Report the request count of the success path (before this test's own reads).
	counts := map[string]int{}
	for _, a := range actions {
		key := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			key += "/" + sub
		}
		counts[key]++
	}
	t.Logf("success path: %d API requests: %v", len(actions), counts)
	// The interlock costs about ten: the go patch, a watch of the debug pod
	// and of the broker, two broker reads (stayed stopped; never delete a
	// live one), and the Lease renewals and Events of its two steps. The
	// peer, quorum and escalation gates run again right before the go
	// (issue 27 item 5): five more, the Kafka pod lists and the escalation
	// records (50 before, 55 measured after). While it waits for Kafka's
	// stop it also watches the debug pod, so a refusal the script makes
	// before any go is read at once: two more (57). (On a real kubelet one
	// more per stop: the broker's status refresh, which this fake does not
	// need.)
	if n := len(actions); n > 57 {
		t.Errorf("success path made %d API requests, budget 57", n)
	}
}

func refusedResult(reason string) string {
	return "kafkabot: REFUSED (" + reason + "): wrong volume\n" +
		"KAFKABOT_RESULT v=1 status=refused action=move-metadata-log reason=" + reason + " source= destination= bytes=0 files=0\n"
}

// assertCleanedUp checks the debug pod was deleted, the broker was not,
// and the Lease was released with state failed.
func assertCleanedUp(t *testing.T, h *harness) {
	t.Helper()
	writes := strings.Join(h.writes(), "\n")
	if !strings.Contains(writes, "delete pods/"+DebugPodName(brokerName)) {
		t.Errorf("debug pod not deleted; writes:\n%s", writes)
	}
	if strings.Contains(writes, "delete pods/"+brokerName+"\n") || strings.HasSuffix(writes, "delete pods/"+brokerName) {
		t.Errorf("broker deleted although the move failed; writes:\n%s", writes)
	}
	l := h.lease()
	if l.Annotations[annoState] != leaseFailed || l.Spec.HolderIdentity != nil {
		t.Errorf("lease state %q holder %v, want failed and released", l.Annotations[annoState], l.Spec.HolderIdentity)
	}
}

func TestRepairDebugPodRefuses(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "fail", debugLog: refusedResult(ReasonNodeIDMismatch), broker: "ready"})
	s := h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeFailed {
		t.Fatalf("outcome %s, want failed:\n%s", s.Outcome, s.Text)
	}
	for _, want := range []string{`stopped at "Read the repair script's result"`, "refused (node-id-mismatch)", "nothing was moved"} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, s.Text)
		}
	}
	assertCleanedUp(t, h)
}

func TestRepairDebugPodTimesOut(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "hang", broker: "ready"})
	done := make(chan Summary)
	go func() { done <- h.r.Repair(context.Background(), request(), &recorder{}) }()
	waitForTimer(t, h)
	h.clock.Step(6 * time.Minute)
	s := <-done
	if s.Outcome != OutcomeFailed {
		t.Fatalf("outcome %s, want failed:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "waiting to give the debug pod its go: timed out after 5m0s") {
		t.Errorf("summary does not say the wait timed out:\n%s", s.Text)
	}
	assertCleanedUp(t, h)
}

// waitForTimer blocks until the repair waits on the fake clock.
func waitForTimer(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !h.clock.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the repair never started waiting")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRepairCrashesAgain(t *testing.T) {
	c := seedCluster(t)
	// After the wipe the broker re-downloads the controllers' snapshot and
	// fails on it: next offset == log start offset.
	again := strings.Replace(offsetCrashLog(t), "Log start offset = 57054787", "Log start offset = 57876669", 1)
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "crash", brokerLog: again})
	rep := &recorder{}
	s := h.r.Repair(context.Background(), request(), rep)
	if s.Outcome != OutcomeCrashAgain {
		t.Fatalf("outcome %s, want crashed-again:\n%s", s.Outcome, s.Text)
	}
	for _, want := range []string{"crashed again after the repair", "(metadata-log-offset-mismatch)", "misaligned snapshot", "no other broker was touched", "Backup: /kafka-data/0/kafkabot-backup"} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, s.Text)
		}
	}
	for _, w := range h.writes() {
		if strings.Contains(w, "broker-1") || strings.Contains(w, "controller-0") {
			t.Errorf("touched another node: %s", w)
		}
	}
	if got := h.lease().Annotations[annoState]; got != leaseFailed {
		t.Errorf("lease state %q, want failed", got)
	}
}

func TestRepairSameApprovalNeverRunsTwice(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "fail", debugLog: refusedResult(ReasonNoSpace), broker: "ready"})
	if s := h.r.Repair(context.Background(), request(), &recorder{}); s.Outcome != OutcomeFailed {
		t.Fatalf("first run: outcome %s:\n%s", s.Outcome, s.Text)
	}
	before := len(h.writes())
	s := h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "approval appr-0001 already ran on this broker (state failed") {
		t.Fatalf("second run: outcome %s:\n%s", s.Outcome, s.Text)
	}
	if after := h.writes(); len(after) != before {
		t.Errorf("the repeated approval wrote: %v", after[before:])
	}

	// A different approval may reuse the finished Lease.
	next := request()
	next.ApprovalID = "appr-0002"
	h.plan.debugLog = movedResult(StatusMoved)
	h.plan.debug = "succeed"
	if s := h.r.Repair(context.Background(), next, &recorder{}); s.Outcome != OutcomeRepaired {
		t.Fatalf("new approval: outcome %s:\n%s", s.Outcome, s.Text)
	}
	if got := h.lease().Annotations[annoApprovalID]; got != "appr-0002" {
		t.Errorf("lease approval %q, want appr-0002", got)
	}
}

func TestRepairConcurrentApprovalRefused(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "hang", broker: "ready", brokerLog: recoveredLog})
	first := make(chan Summary)
	go func() { first <- h.r.Repair(context.Background(), request(), &recorder{}) }()
	waitForTimer(t, h) // the first repair waits for its debug pod

	second := request()
	second.ApprovalID, second.Approver = "appr-0002", "U0SECOND"
	s := h.r.Repair(context.Background(), second, &recorder{})
	if s.Outcome != OutcomeGateFailed {
		t.Fatalf("second approval: outcome %s:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, `a repair of this broker is already running (approved by U0APPROVER, step "Give the debug pod its go`) {
		t.Errorf("second approval's refusal does not say who runs which step:\n%s", s.Text)
	}

	// Let the first finish: the kubelet reports the debug pod done.
	name := DebugPodName(brokerName)
	obj, err := h.tracker().Get(podsGVR, testNS, name)
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	h.logs.set(name, movedResult(StatusMoved))
	finishDebugPod(pod, true)
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Fatal(err)
	}
	if s := <-first; s.Outcome != OutcomeRepaired {
		t.Fatalf("first approval: outcome %s:\n%s", s.Outcome, s.Text)
	}
	creates := 0
	for _, w := range h.writes() {
		if strings.HasPrefix(w, "create pods/") {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d debug pods created, want 1", creates)
	}
}

func TestRepairDryRunWritesNothing(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
	req := request()
	req.DryRun = true
	rep := &recorder{}
	s := h.r.Repair(context.Background(), req, rep)
	if s.Outcome != OutcomeDryRun {
		t.Fatalf("outcome %s, want dry-run:\n%s", s.Outcome, s.Text)
	}
	if w := h.writes(); len(w) != 0 {
		t.Errorf("dry run wrote: %v", w)
	}
	progress := rep.text()
	for _, want := range []string{"Debug pod spec (dry run)", "name: " + DebugPodName(brokerName), "KB_ACTION", "Script the debug pod runs (dry run)", "KAFKABOT_RESULT"} {
		if !strings.Contains(progress, want) {
			t.Errorf("dry-run report lacks %q", want)
		}
	}
}

// BenchmarkRepairSuccess measures one whole repair against the fake
// cluster: gates, Lease, debug pod, restart and watches.
func BenchmarkRepairSuccess(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		h := newHarness(b, seedCluster(b), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
		b.StartTimer()
		if s := h.r.Repair(context.Background(), request(), &recorder{}); s.Outcome != OutcomeRepaired {
			b.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
		}
	}
}
