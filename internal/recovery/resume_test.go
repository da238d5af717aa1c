// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// leftLease is the Lease a bot replica that died during step leaves.
func leftLease(t *testing.T, holderID string, renewed time.Time, step string) *runtime.Object {
	t.Helper()
	script, err := jsonString(ScriptInput{
		Action: "move-metadata-log", Target: "__cluster_metadata-0", NodeID: "100",
		MountRoot: DefaultMountRoot, BackupName: BackupName(testApproval, testStart.Add(-time.Hour)),
	})
	if err != nil {
		t.Fatal(err)
	}
	lock := &repairLock{identity: holderID, duration: 5*time.Minute + leaseSlack, key: testRecordKey}
	l := lock.leaseFor(request(), "foobar", map[string]string{annoScript: script, annoDebugPod: DebugPodName(brokerName)}, renewed)
	l.Annotations[annoStep] = step
	var obj runtime.Object = l
	return &obj
}

func leftDebugPod(phase corev1.PodPhase) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: DebugPodName(brokerName), Namespace: testNS, UID: "uid-debug-left",
			Labels: map[string]string{kube.LabelManagedBy: kube.ManagedByBot, kube.LabelRepairID: testApproval},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: DebugContainerName, Image: kafkaDigest}}},
		Status: corev1.PodStatus{Phase: phase},
	}
	if phase == corev1.PodSucceeded {
		finishDebugPod(pod, true)
	}
	return pod
}

// threads records the reporters Resume asks for, by Slack thread.
type threads struct {
	mu   sync.Mutex
	reps []*recorder
}

func (th *threads) newReporter(channel, threadTS string) Reporter {
	th.mu.Lock()
	defer th.mu.Unlock()
	r := &recorder{channel: channel, threadTS: threadTS}
	th.reps = append(th.reps, r)
	return r
}

func (th *threads) only(t *testing.T) *recorder {
	t.Helper()
	th.mu.Lock()
	defer th.mu.Unlock()
	if len(th.reps) != 1 {
		t.Fatalf("Resume reported to %d threads, want 1", len(th.reps))
	}
	return th.reps[0]
}

func TestResume(t *testing.T) {
	const waitStep = "Wait for debug pod kafkabot-repair-foobar-kafka-broker-0-155373950a to finish (up to 5m0s)"
	tests := []struct {
		name string
		// debugPod is the debug pod left behind (nil: gone).
		debugPod *corev1.Pod
		// plan is how the kubelet treats a debug pod created by Resume.
		plan          kubeletPlan
		wantCreate    bool
		wantDetail    string
		wantOutcome   Outcome
		brokerRunning bool
	}{
		{
			name:     "debug pod finished: finish the repair",
			debugPod: leftDebugPod(corev1.PodSucceeded),
			plan:     kubeletPlan{broker: "ready", brokerLog: recoveredLog},
			// The left pod's log says moved.
			wantDetail: "Moved /kafka-data/0/data/__cluster_metadata-0", wantOutcome: OutcomeRepaired,
		},
		{
			name:       "debug pod gone, result unknown: re-run the idempotent script",
			plan:       kubeletPlan{debug: "succeed", debugLog: movedResult(StatusAlreadyMoved), broker: "ready", brokerLog: recoveredLog},
			wantCreate: true, wantDetail: "Already moved by an earlier run:", wantOutcome: OutcomeRepaired,
		},
		{
			name:          "debug pod gone and the broker runs: stop, never touch a live broker",
			plan:          kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"},
			brokerRunning: true,
			wantDetail:    "is not crash-looping any more", wantOutcome: OutcomeGateFailed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := seedCluster(t)
			if tc.brokerRunning {
				c.broker.Status = readyStatus()
			}
			c.extra = append(c.extra, *leftLease(t, "bot-dead", testStart.Add(-time.Hour), waitStep))
			if tc.debugPod != nil {
				c.extra = append(c.extra, tc.debugPod)
				c.logs[tc.debugPod.Name] = movedResult(StatusMoved)
			}
			h := newHarness(t, c, tc.plan)
			th := &threads{}
			if err := resumeStepping(t, h, th); err != nil {
				t.Fatal(err)
			}
			rep := th.only(t)
			if rep.channel != "C0KAFKA" || rep.threadTS != "1764417600.000100" {
				t.Errorf("reported to %s/%s, want the repair's own thread", rep.channel, rep.threadTS)
			}
			progress := rep.text()
			if !strings.Contains(progress, `bot restarted during step "`+waitStep+`"`) {
				t.Errorf("no restart notice:\n%s", progress)
			}
			if !strings.Contains(progress, tc.wantDetail) {
				t.Errorf("progress lacks %q:\n%s", tc.wantDetail, progress)
			}
			if rep.summary == nil || rep.summary.Outcome != tc.wantOutcome {
				t.Fatalf("summary %+v, want outcome %s\n%s", rep.summary, tc.wantOutcome, progress)
			}
			writes := strings.Join(h.writes(), "\n")
			if got := strings.Contains(writes, "create pods/"); got != tc.wantCreate {
				t.Errorf("created a debug pod = %t, want %t; writes:\n%s", got, tc.wantCreate, writes)
			}
			if got := strings.Contains(writes, "delete pods/"+brokerName); got != (tc.wantOutcome == OutcomeRepaired) {
				t.Errorf("broker restarted = %t; writes:\n%s", got, writes)
			}
			l := h.lease()
			wantState := leaseDone
			if tc.wantOutcome != OutcomeRepaired {
				wantState = leaseFailed
			}
			if l.Annotations[annoState] != wantState || l.Spec.HolderIdentity != nil {
				t.Errorf("lease state %q holder %v, want %s and released", l.Annotations[annoState], l.Spec.HolderIdentity, wantState)
			}
		})
	}
}

func TestResumeWaitsForALiveHolder(t *testing.T) {
	c := seedCluster(t)
	c.extra = append(c.extra, *leftLease(t, "bot-b", testStart, "Create debug pod"), leftDebugPod(corev1.PodSucceeded))
	c.logs[DebugPodName(brokerName)] = movedResult(StatusMoved)
	h := newHarness(t, c, kubeletPlan{broker: "ready", brokerLog: recoveredLog})
	th := &threads{}
	done := make(chan error)
	go func() { done <- h.r.Resume(context.Background(), th.newReporter) }()
	waitForTimer(t, h)
	if w := h.writes(); len(w) != 0 {
		t.Fatalf("Resume touched a repair a live replica holds: %v", w)
	}
	h.clock.Step(5*time.Minute + leaseSlack) // bot-b never renewed
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := th.only(t).summary; s == nil || s.Outcome != OutcomeRepaired {
		t.Fatalf("summary %+v, want repaired", s)
	}
}

// TestResumeTakesAHandedOffRepairAtOnce: a repair whose bot stopped
// mid-repair and handed its Lease off (no holder) is resumed by another
// replica at once, although the Lease is fresh: a Deployment's replacement
// pod has a new name and would otherwise wait for the Lease to expire.
func TestResumeTakesAHandedOffRepairAtOnce(t *testing.T) {
	c := seedCluster(t)
	c.extra = append(c.extra, *leftLease(t, "", testStart, "Wait for debug pod"), leftDebugPod(corev1.PodSucceeded))
	c.logs[DebugPodName(brokerName)] = movedResult(StatusMoved)
	h := newHarness(t, c, kubeletPlan{broker: "ready", brokerLog: recoveredLog})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	if s := th.only(t).summary; s == nil || s.Outcome != OutcomeRepaired {
		t.Fatalf("summary %+v, want repaired", s)
	}
}

// TestResumeLooksAgainBeforeTheLeaseExpires: while another replica holds a
// repair, Resume re-reads the Lease every resumeRecheck, so a hand-off made
// after its first look is taken without waiting for the expiry.
func TestResumeLooksAgainBeforeTheLeaseExpires(t *testing.T) {
	c := seedCluster(t)
	c.extra = append(c.extra, *leftLease(t, "bot-b", testStart, "Wait for debug pod"), leftDebugPod(corev1.PodSucceeded))
	c.logs[DebugPodName(brokerName)] = movedResult(StatusMoved)
	h := newHarness(t, c, kubeletPlan{broker: "ready", brokerLog: recoveredLog})
	th := &threads{}
	done := make(chan error)
	go func() { done <- h.r.Resume(context.Background(), th.newReporter) }()
	waitForTimer(t, h)
	l := h.lease()
	l.Spec.HolderIdentity = nil // bot-b stops and hands off
	if err := h.tracker().Update(leasesGVR, l, testNS); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(resumeRecheck)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := th.only(t).summary; s == nil || s.Outcome != OutcomeRepaired {
		t.Fatalf("summary %+v, want repaired", s)
	}
}

func TestResumeLeavesFinishedRepairs(t *testing.T) {
	c := seedCluster(t)
	obj := *leftLease(t, "bot-dead", testStart.Add(-time.Hour), "Watch")
	obj.(metav1.Object).GetAnnotations()[annoState] = leaseDone
	c.extra = append(c.extra, obj)
	h := newHarness(t, c, kubeletPlan{})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	if len(th.reps) != 0 || len(h.writes()) != 0 {
		t.Errorf("Resume acted on a finished repair: %d reports, writes %v", len(th.reps), h.writes())
	}
}

// TestRepairInterruptedThenResumed stops the bot while the debug pod runs
// (SIGTERM cancels the context), then restarts it: the Lease stays
// running, the debug pod stays, and Resume finishes in the same thread
// without a second debug pod.
func TestRepairInterruptedThenResumed(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "hang", broker: "ready", brokerLog: recoveredLog})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan Summary)
	go func() { done <- h.r.Repair(ctx, request(), &recorder{}) }()
	waitForTimer(t, h)
	stop()
	s := <-done
	if s.Outcome != OutcomeFailed || !strings.Contains(s.Text, "the repair lease stays running so a restarted bot resumes it") {
		t.Fatalf("interrupted repair: %s\n%s", s.Outcome, s.Text)
	}
	// Handed off: still running, no holder, so any replica resumes it at once.
	if l := h.lease(); l.Annotations[annoState] != leaseRunning || l.Spec.HolderIdentity != nil {
		t.Fatalf("lease after the stop: state %q holder %q, want running and handed off (no holder)", l.Annotations[annoState], holder(l))
	}
	if strings.Contains(strings.Join(h.writes(), "\n"), "delete pods/") {
		t.Fatalf("a stopping bot deleted pods: %v", h.writes())
	}

	// The debug pod finishes while the bot is down.
	name := DebugPodName(brokerName)
	obj, err := h.tracker().Get(podsGVR, testNS, name)
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	finishDebugPod(pod, true)
	h.logs.set(name, movedResult(StatusMoved))
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Fatal(err)
	}

	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	rep := th.only(t)
	if rep.summary == nil || rep.summary.Outcome != OutcomeRepaired {
		t.Fatalf("resumed: %+v\n%s", rep.summary, rep.text())
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
	if l := h.lease(); l.Annotations[annoState] != leaseDone {
		t.Errorf("lease state %q, want done", l.Annotations[annoState])
	}
}

// resumeStepping runs Resume while moving the fake clock on whenever it
// waits: a Lease of another holder is stale only after a whole Lease
// duration on this replica's own clock.
// brokerExitedNow moves a crash-looping broker's last exit to the fake
// clock's now, as its kubelet would after the next crash while the clock
// steps: a status frozen at testStart would make the go's window (exit plus
// back-off) look passed, and the bot rightly gives no go on it.
func brokerExitedNow(t *testing.T, h *harness) {
	t.Helper()
	obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
	if err != nil {
		return
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	cs := &pod.Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.LastTerminationState.Terminated == nil {
		return
	}
	cs.LastTerminationState.Terminated.FinishedAt = metav1.NewTime(h.clock.Now())
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Errorf("updating the broker: %v", err)
	}
}

func resumeStepping(t *testing.T, h *harness, th *threads) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.r.Resume(context.Background(), th.newReporter) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("Resume did not return")
		}
		// Only while the Lease is not taken over yet: after that the waits
		// are the repair's own timeouts.
		obj, err := h.tracker().Get(leasesGVR, testNS, kube.RepairLeaseName(brokerName))
		if err == nil && holder(obj.(*coordinationv1.Lease)) != "bot-a" && h.clock.HasWaiters() {
			h.clock.Step(time.Minute)
			brokerExitedNow(t, h)
		}
	}
}
