// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Resume and the Lease of issue 12 items 3 and 12.

// leaseObj returns the Lease inside leftLease's object.
func leaseObj(obj *runtime.Object) *coordinationv1.Lease {
	return (*obj).(*coordinationv1.Lease)
}

// assertNoPodWrites fails when anything was written to a pod.
func assertNoPodWrites(t *testing.T, h *harness) {
	t.Helper()
	for _, w := range h.writes() {
		if strings.Contains(w, " pods/") {
			t.Fatalf("wrote %s; all writes: %v", w, h.writes())
		}
	}
}

// TestSafety03_ResumeRefusesForgedLease: anyone who can write Leases could
// plant a "running" repair record naming any pod and any Slack channel.
// Before the fix Resume built a debug pod for it, deleted the pod it named
// and posted to the channel it named. Now a record whose MAC does not
// verify is never acted on: no write, no post.
func TestSafety03_ResumeRefusesForgedLease(t *testing.T) {
	for _, tc := range []struct {
		name  string
		forge func(l *coordinationv1.Lease)
	}{
		{"no MAC", func(l *coordinationv1.Lease) { delete(l.Annotations, annoRecordMAC) }},
		{"signed, then pointed at the controller", func(l *coordinationv1.Lease) {
			l.Annotations[annoPod] = "foobar-kafka-controller-0"
			l.Annotations[annoPodUID] = "uid-controller-0"
		}},
		{"signed, then pointed at another channel", func(l *coordinationv1.Lease) { l.Annotations[annoChannel] = "C0ATTACKER" }},
		{"signed with another key", func(l *coordinationv1.Lease) { signRecord([]byte("some-other-key-0123456789abcdef!"), "", l) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seedCluster(t)
			c.controller.Status = crashLoopStatus()
			obj := leftLease(t, "bot-a", testStart, "Create debug pod")
			tc.forge(leaseObj(obj))
			c.extra = append(c.extra, *obj)
			h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
			th := &threads{}
			if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
				t.Fatal(err)
			}
			if w := h.writes(); len(w) != 0 {
				t.Errorf("Resume wrote for a forged record: %v", w)
			}
			if len(th.reps) != 0 {
				t.Errorf("Resume posted to %d thread(s) named by a forged record", len(th.reps))
			}
			if !strings.Contains(h.audit.String(), "its record does not verify") {
				t.Errorf("no log line about the unverified record:\n%s", h.audit.String())
			}
		})
	}
}

// TestSafety03_ResumeNeverSkipsTheNodeIDCheck: a (signed) record whose
// script input skips the node id check is refused; before the fix Resume
// ran the script with the check skipped.
func TestSafety03_ResumeNeverSkipsTheNodeIDCheck(t *testing.T) {
	c := seedCluster(t)
	obj := leftLease(t, "bot-a", testStart, "Create debug pod")
	l := leaseObj(obj)
	script, err := jsonString(ScriptInput{Action: "move-metadata-log", Target: "__cluster_metadata-0", SkipNodeIDCheck: true,
		MountRoot: DefaultMountRoot, BackupName: BackupName(testApproval, testStart)})
	if err != nil {
		t.Fatal(err)
	}
	l.Annotations[annoScript] = script
	signRecord(testRecordKey, "", l)
	c.extra = append(c.extra, *obj)
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	assertNoPodWrites(t, h)
	if s := th.only(t).summary; s == nil || s.Outcome == OutcomeRepaired || !strings.Contains(s.Text, "skips the node id check") {
		t.Fatalf("summary %+v", s)
	}
}

// TestSafety03_ResumeReRunsEveryGate: between the stop and the resume a
// peer started crash-looping with the same error. Before the fix Resume
// re-checked only the pod's UID and crash loop and ran the script again;
// now every gate runs before any resumed write.
func TestSafety03_ResumeReRunsEveryGate(t *testing.T) {
	c := seedCluster(t)
	c.peer.Status = crashLoopStatus()
	c.logs[c.peer.Name] = offsetCrashLog(t)
	c.extra = append(c.extra, *leftLease(t, "bot-a", testStart, "Create debug pod"))
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	assertNoPodWrites(t, h)
	if s := th.only(t).summary; s == nil || s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, GatePeersHealthy) {
		t.Fatalf("summary %+v", s)
	}
}

// TestSafety03_ResumeRefusesPastApprovalExpiry: a repair is resumed only
// until its approval's expiry plus REPAIR_TIMEOUT. Before the fix a Lease
// was resumed however old it was.
func TestSafety03_ResumeRefusesPastApprovalExpiry(t *testing.T) {
	c := seedCluster(t)
	obj := leftLease(t, "bot-a", testStart, "Create debug pod")
	l := leaseObj(obj)
	l.Annotations[annoExpiresAt] = testStart.Add(-6 * time.Minute).Format(time.RFC3339) // timeout is 5m
	signRecord(testRecordKey, "", l)
	c.extra = append(c.extra, *obj)
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	assertNoPodWrites(t, h)
	s := th.only(t).summary
	if s == nil || s.Outcome != OutcomeFailed || !strings.Contains(s.Text, "the approval expired at") {
		t.Fatalf("summary %+v", s)
	}
	if got := h.lease().Annotations[annoState]; got != leaseFailed {
		t.Errorf("lease state %q, want failed (so new repairs are not blocked)", got)
	}
}

// TestSafety12_LeaseTakenByAnotherHolderStopsTheRun: fencing. Another
// replica takes the repair Lease while this one runs (it judged this one
// gone). The next Lease update is refused and this replica writes nothing
// more: no go signal, no broker delete, no release of a Lease it no longer
// holds. Before the fix the refusal was only logged and the run went on.
func TestSafety12_LeaseTakenByAnotherHolderStopsTheRun(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	h.onDebugCreate = func() {
		obj, err := h.tracker().Get(leasesGVR, testNS, kube.RepairLeaseName(brokerName))
		if err != nil {
			t.Error(err)
			return
		}
		l := obj.(*coordinationv1.Lease).DeepCopy()
		other := "bot-b"
		l.Spec.HolderIdentity = &other
		l.ResourceVersion = bumpRV(l.ResourceVersion)
		if err := h.tracker().Update(leasesGVR, l, testNS); err != nil {
			t.Error(err)
		}
	}
	s := awaitSummary(t, repairWithin(t, h, &recorder{}))
	if s.Outcome == OutcomeRepaired || !strings.Contains(s.Text, "taken by another holder") {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	for _, w := range h.writes() {
		if strings.HasPrefix(w, "patch pods/") || w == "delete pods/"+brokerName || strings.HasPrefix(w, "delete pods/kafkabot-") {
			t.Errorf("a fenced replica wrote %s", w)
		}
	}
	if l := h.lease(); holder(l) != "bot-b" || l.Annotations[annoState] != leaseRunning {
		t.Errorf("lease holder %q state %q: the fenced replica touched it", holder(l), l.Annotations[annoState])
	}
}

// TestSafety12_StalenessJudgedByLocalClock: another replica's Lease whose
// renew time, written by its own (skewed) clock, lies an hour in the past
// is not stale until it has stayed unchanged for a whole Lease duration on
// this replica's clock, as in client-go's leader election; a renewal during
// that time starts the wait again. Before the fix Resume took it at once.
func TestSafety12_StalenessJudgedByLocalClock(t *testing.T) {
	c := seedCluster(t)
	c.extra = append(c.extra, *leftLease(t, "bot-b", testStart.Add(-time.Hour), "Create debug pod"), leftDebugPod(corev1.PodSucceeded))
	c.logs[DebugPodName(brokerName)] = movedResult(StatusMoved)
	h := newHarness(t, c, kubeletPlan{broker: "ready", brokerLog: recoveredLog})
	th := &threads{}
	done := make(chan error, 1)
	go func() { done <- h.r.Resume(context.Background(), th.newReporter) }()
	waitForTimer(t, h)
	if w := h.writes(); len(w) != 0 {
		t.Fatalf("took a Lease whose skewed renew time looked old: %v", w)
	}
	// bot-b renews (its clock still an hour behind).
	obj, err := h.tracker().Get(leasesGVR, testNS, kube.RepairLeaseName(brokerName))
	if err != nil {
		t.Fatal(err)
	}
	l := obj.(*coordinationv1.Lease).DeepCopy()
	l.ResourceVersion = bumpRV(l.ResourceVersion)
	if err := h.tracker().Update(leasesGVR, l, testNS); err != nil {
		t.Fatal(err)
	}
	duration := 5*time.Minute + leaseSlack
	h.clock.Step(duration) // Resume looks again, sees the renewal: waits anew
	waitForTimer(t, h)
	if w := h.writes(); len(w) != 0 {
		t.Fatalf("took a Lease renewed during the wait: %v", w)
	}
	h.clock.Step(duration) // unchanged for a whole duration now
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Resume never took the stale Lease")
	}
	if s := th.only(t).summary; s == nil || s.Outcome != OutcomeRepaired {
		t.Fatalf("summary %+v", s)
	}
}
