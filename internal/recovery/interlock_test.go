// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// The bot side of the interlock (issue 12 item 4): Kafka must be stopped at
// the moment of the move, and a live broker is never deleted.

// setBrokerKafka rewrites the approved broker's Kafka container state in
// the fake cluster, as its kubelet would: running (the CrashLoopBackOff
// back-off expired) or waiting after another crash, with restarts.
func setBrokerKafka(t *testing.T, h *harness, running bool, restarts int32) {
	t.Helper()
	obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
	if err != nil {
		t.Errorf("reading the broker: %v", err)
		return
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	cs := &pod.Status.ContainerStatuses[0]
	cs.RestartCount = restarts
	if running {
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(testStart)}}
	} else {
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: backOffMessage("5m0s")}}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Error", ExitCode: 1, StartedAt: metav1.NewTime(h.clock.Now().Add(-10 * time.Second)), FinishedAt: metav1.NewTime(h.clock.Now()),
		}}
	}
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Errorf("updating the broker: %v", err)
	}
}

// backOffMessage is the kubelet's CrashLoopBackOff message for the broker.
func backOffMessage(backOff string) string {
	return "back-off " + backOff + " restarting failed container=kafka pod=" + brokerName + "_" + testNS + "(" + brokerUID + ")"
}

// brokerKafkaState says how the broker's Kafka container is, in the fake.
func brokerKafkaState(h *harness) string {
	obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
	if err != nil {
		return "gone"
	}
	cs := obj.(*corev1.Pod).Status.ContainerStatuses[0]
	if cs.State.Running != nil {
		return "running"
	}
	return "stopped"
}

// repairWithin runs a repair, failing the test if it does not end within
// a generous real-time bound (a bot that never gives the go waits on the
// fake clock for ever).
func repairWithin(t *testing.T, h *harness, rec *recorder) <-chan Summary {
	t.Helper()
	done := make(chan Summary, 1)
	go func() { done <- h.r.Repair(context.Background(), request(), rec) }()
	return done
}

func awaitSummary(t *testing.T, done <-chan Summary) Summary {
	t.Helper()
	select {
	case s := <-done:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("the repair did not end within 30s (a wait that never ends: no go signal, or waiting on the wrong state)")
		return Summary{}
	}
}

// TestSafety04_GoSignalOnlyWhileKafkaIsStopped: the CrashLoopBackOff
// back-off expires while the debug pod is scheduled, so Kafka runs again
// when the script is ready. The bot must not give the go then; it waits
// for the next crash, gives the go with Kafka stopped, and records the
// restart count it saw. Before the fix nothing checked Kafka at the moment
// of the move (the script moved as soon as it started).
func TestSafety04_GoSignalOnlyWhileKafkaIsStopped(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	h.onDebugCreate = func() { setBrokerKafka(t, h, true, 8) }
	var stateAtGo string
	h.onGo = func() { stateAtGo = brokerKafkaState(h) }
	rec := &recorder{}
	done := repairWithin(t, h, rec)
	waitUntil(t, "the bot to see Kafka running again", func() bool { return strings.Contains(rec.text(), "is running again") })
	h.mu.Lock()
	early := h.goSignals
	h.mu.Unlock()
	if early != 0 {
		t.Fatal("the go was given while Kafka was running")
	}
	setBrokerKafka(t, h, false, 9) // it crashes again
	s := awaitSummary(t, done)
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	if stateAtGo != "stopped" {
		t.Errorf("Kafka was %q when the go was given", stateAtGo)
	}
	if got := h.lease().Annotations[annoGoRestarts]; got != "9" {
		t.Errorf("lease records restart count %q at the go, want 9", got)
	}
	if strings.Contains(s.Text, "INTERLOCK") {
		t.Errorf("a clean interlock warns:\n%s", s.Text)
	}
}

// TestSafety04_LoudWhenKafkaRestartsDuringTheMove: the broker restarts
// between the go and the end of the script. The bot says so loudly in the
// thread and the summary. Before the fix nothing looked.
func TestSafety04_LoudWhenKafkaRestartsDuringTheMove(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	h.onGo = func() { setBrokerKafka(t, h, false, 8) } // restarted and crashed again during the move
	rec := &recorder{}
	s := awaitSummary(t, repairWithin(t, h, rec))
	for _, text := range []string{s.Text, rec.text()} {
		if !strings.Contains(text, "INTERLOCK: Kafka on "+brokerName+" restarted during the move (restart count 7 -> 8)") {
			t.Errorf("no loud warning:\n%s", text)
		}
	}
}

// TestSafety04_NeverDeletesARunningReadyBroker: a resumed repair whose
// script result is recorded finds the broker Running and Ready. Before the
// fix it deleted it anyway.
func TestSafety04_NeverDeletesARunningReadyBroker(t *testing.T) {
	c := seedCluster(t)
	c.broker.Status = readyStatus()
	lease := leftLease(t, "bot-a", testStart, "Delete debug pod")
	l := (*lease).(interface{ GetAnnotations() map[string]string })
	res, err := jsonString(ScriptResult{Status: StatusMoved, Action: "move-metadata-log",
		Source: "/kafka-data/0/data/__cluster_metadata-0", Destination: "/kafka-data/0/b/data/__cluster_metadata-0", Bytes: 1, Files: 1})
	if err != nil {
		t.Fatal(err)
	}
	l.GetAnnotations()[annoResult] = res
	c.extra = append(c.extra, *lease)
	h := newHarness(t, c, kubeletPlan{broker: "ready", brokerLog: recoveredLog})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	for _, w := range h.writes() {
		if w == "delete pods/"+brokerName {
			t.Fatalf("deleted the Running and Ready broker; writes: %v", h.writes())
		}
	}
	rep := th.only(t)
	if rep.summary == nil || rep.summary.Outcome == OutcomeRepaired {
		t.Fatalf("resumed repair of a live broker: %+v", rep.summary)
	}
	if !strings.Contains(rep.summary.Text, "Running and Ready") && !strings.Contains(rep.summary.Text, "not crash-looping") {
		t.Errorf("summary does not say why it stopped:\n%s", rep.summary.Text)
	}
	_ = kube.LabelManagedBy
}

// TestSafety12_SuccessIsReadyAndStillReadyAfterTheSettlePeriod: a broker
// that is Ready for a moment and then crashes (its first metadata fetch, a
// liveness kill) is not repaired. Before the fix the first Ready counted as
// success.
func TestSafety12_SuccessIsReadyAndStillReadyAfterTheSettlePeriod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		crashes bool
		want    Outcome
	}{
		{"crashes during the settle period", true, OutcomeCrashAgain},
		{"stays Ready", false, OutcomeRepaired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
			h.r.opts.Settle = time.Minute
			rec := &recorder{}
			done := repairWithin(t, h, rec)
			waitUntil(t, "the settle watch", func() bool { return strings.Contains(rec.text(), "watching that it stays Ready") })
			if tc.crashes {
				obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
				if err != nil {
					t.Fatal(err)
				}
				pod := obj.(*corev1.Pod).DeepCopy()
				pod.Status = crashLoopStatus()
				pod.Status.ContainerStatuses[0].RestartCount = 1
				if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
					t.Fatal(err)
				}
			} else {
				waitForTimer(t, h)
				h.clock.Step(time.Minute)
			}
			if s := awaitSummary(t, done); s.Outcome != tc.want {
				t.Fatalf("outcome %s, want %s:\n%s", s.Outcome, tc.want, s.Text)
			}
		})
	}
}

// TestSafety12_SlowLogRecoveryGetsMoreTime: a large broker recovering its
// logs is not Ready within the repair timeout though Kafka runs fine. The
// wait scales: while Kafka runs without crashing it waits another timeout
// (renewing the Lease). Before the fix the repair failed at the first
// timeout.
func TestSafety12_SlowLogRecoveryGetsMoreTime(t *testing.T) {
	_, _, s := repairOfStartingBroker(t, recoveredLog, "is still starting after 5m0s")
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
}

// repairOfStartingBroker runs a repair whose recreated broker pod runs
// Kafka (logging brokerLog) without getting Ready, steps the bot's clock
// until the thread says stillStarting, then makes the pod Ready and
// returns the repair's summary.
func repairOfStartingBroker(t *testing.T, brokerLog, stillStarting string) (*harness, *recorder, Summary) {
	t.Helper()
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "starting", brokerLog: brokerLog})
	rec := &recorder{}
	done := repairWithin(t, h, rec)
	waitUntil(t, "the new pod", func() bool {
		obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
		return err == nil && string(obj.(*corev1.Pod).UID) == newBrokerUID && strings.Contains(rec.text(), "started | Watch the new")
	})
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(rec.text(), stillStarting); {
		if time.Now().After(deadline) {
			t.Fatalf("the repair did not keep waiting for the starting broker (want %q); it reported:\n%s", stillStarting, rec.text())
		}
		if h.clock.HasWaiters() {
			h.clock.Step(time.Minute)
		}
		time.Sleep(time.Millisecond)
	}
	obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	if string(pod.UID) != newBrokerUID {
		t.Fatalf("the broker pod is %s, want the recreated %s", pod.UID, newBrokerUID)
	}
	pod.Status = readyStatus()
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Fatal(err)
	}
	return h, rec, awaitSummary(t, done)
}

// goDeadlines parses the go values the harness saw.
func goDeadlines(t *testing.T, h *harness) []time.Time {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []time.Time
	for _, v := range h.goValues {
		d, ok := parseGoValue(v, testApproval)
		if !ok {
			t.Errorf("go %q is not <repair id>.<unix seconds>", v)
		}
		out = append(out, d)
	}
	return out
}

// expireFirstGo starts a repair whose first go the script never sees in
// time, and steps the bot's clock past that go's deadline.
func expireFirstGo(t *testing.T, h *harness, rec *recorder) <-chan Summary {
	t.Helper()
	h.ignoreGoes = 1
	done := repairWithin(t, h, rec)
	waitUntil(t, "the first go", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.goValues) == 1 })
	first := goDeadlines(t, h)[0]
	// The seed broker exited at testStart-50s with a 5m0s back-off.
	if want := testStart.Add(-50*time.Second + 5*time.Minute - GoSafetyMargin); !first.Equal(want) {
		t.Errorf("first go's deadline %v, want %v", first, want)
	}
	// The wait for the debug pod (its third watch: the go step watches it
	// twice, before the go and while it waits for Kafka's stop) has set
	// its timer.
	waitUntil(t, "the wait for the debug pod", func() bool { return h.watchesOf(DebugPodName(brokerName)) >= 3 })
	h.clock.SetTime(first.Add(2 * time.Second))
	waitUntil(t, "the bot to see its go expire", func() bool { return strings.Contains(rec.text(), "the go's deadline") })
	return done
}

// TestSafety04_NewGoAfterTheGoExpires: the kubelet has not projected the go
// into the debug pod by its deadline, so the script will not move on it.
// The bot waits for Kafka's next stop (not while it runs, nor on the stale
// stop whose window has passed) and gives a new go with a later deadline;
// the move then happens on that go. Before the fix there was no deadline
// and no second go: the script moved whenever the go arrived.
func TestSafety04_NewGoAfterTheGoExpires(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	var stateAtGo string
	h.onGo = func() { stateAtGo = brokerKafkaState(h) }
	rec := &recorder{}
	done := expireFirstGo(t, h, rec)
	waitUntil(t, "the stale stop judged too short", func() bool { return strings.Contains(rec.text(), "cannot be sure it stays stopped") })
	setBrokerKafka(t, h, true, 8) // the back-off expired: Kafka runs
	waitUntil(t, "the bot to see Kafka running again", func() bool { return strings.Contains(rec.text(), "is running again (restart 8") })
	if n := len(goDeadlines(t, h)); n != 1 {
		t.Fatalf("%d goes given before Kafka stopped again", n)
	}
	setBrokerKafka(t, h, false, 9) // and crashes again, exiting now
	s := awaitSummary(t, done)
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	d := goDeadlines(t, h)
	if len(d) != 2 {
		t.Fatalf("%d goes, want 2: %v", len(d), d)
	}
	exit := testStart.Add(-50*time.Second + 5*time.Minute - GoSafetyMargin).Add(2 * time.Second) // the clock when it crashed
	if want := exit.Add(5*time.Minute - GoSafetyMargin); !d[1].Equal(want) || !d[1].After(d[0]) {
		t.Errorf("second go's deadline %v, want %v (after the first, %v)", d[1], want, d[0])
	}
	if stateAtGo != "stopped" {
		t.Errorf("Kafka was %q at the go the script used", stateAtGo)
	}
	if got := h.lease().Annotations[annoGoRestarts]; got != "9" {
		t.Errorf("lease records restart count %q at the go, want 9", got)
	}
	if !strings.Contains(rec.text(), "new go given") {
		t.Errorf("the thread does not say a new go was given:\n%s", rec.text())
	}
	if strings.Contains(s.Text, "INTERLOCK") {
		t.Errorf("a clean re-signal warns:\n%s", s.Text)
	}
}

// TestSafety04_NoNewGoWhenTheScriptFinishesAfterTheDeadline: the script
// moved on the first go just before its deadline, and its pod's end is
// seen after it. The bot reads the result; it gives no second go.
func TestSafety04_NoNewGoWhenTheScriptFinishesAfterTheDeadline(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	rec := &recorder{}
	done := expireFirstGo(t, h, rec)
	obj, err := h.tracker().Get(podsGVR, testNS, DebugPodName(brokerName))
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	h.logs.set(pod.Name, movedResult(StatusMoved))
	finishDebugPod(pod, true)
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Fatal(err)
	}
	s := awaitSummary(t, done)
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	if n := len(goDeadlines(t, h)); n != 1 {
		t.Errorf("%d goes, want 1", n)
	}
}

// TestSafety04_ReSignalIsBoundedByTheRepairTimeout: after an expired go
// Kafka never stops again; the repair ends at its timeout with no second
// go, nothing moved.
func TestSafety04_ReSignalIsBoundedByTheRepairTimeout(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	rec := &recorder{}
	done := expireFirstGo(t, h, rec)
	setBrokerKafka(t, h, true, 8)
	waitUntil(t, "the bot to see Kafka running again", func() bool { return strings.Contains(rec.text(), "is running again (restart 8") })
	h.clock.Step(5 * time.Minute)
	s := awaitSummary(t, done)
	if s.Outcome == OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "timed out") && !strings.Contains(s.Text, ErrTimeout.Error()) {
		t.Errorf("the summary does not say it timed out:\n%s", s.Text)
	}
	if n := len(goDeadlines(t, h)); n != 1 {
		t.Errorf("%d goes, want 1", n)
	}
	for _, w := range h.writes() {
		if w == "delete pods/"+brokerName {
			t.Errorf("deleted the broker after a repair that never moved; writes: %v", h.writes())
		}
	}
}

// setBrokerExited rewrites the broker's Kafka container as a real kubelet
// reports it right after an exit, for the whole back-off until its next sync:
// Terminated, with no waiting state and so no back-off message.
func setBrokerExited(t *testing.T, h *harness, restarts int32, finished time.Time) {
	t.Helper()
	obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
	if err != nil {
		t.Fatalf("reading the broker: %v", err)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	cs := &pod.Status.ContainerStatuses[0]
	cs.RestartCount = restarts
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: "Error", ExitCode: 1, StartedAt: metav1.NewTime(finished.Add(-3 * time.Second)), FinishedAt: metav1.NewTime(finished)}}
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
		t.Fatalf("updating the broker: %v", err)
	}
}

// publishBackOff is what a kubelet's sync does to a Terminated container in
// its back-off: the waiting state with the back-off, the exit moved to the
// last termination state.
func publishBackOff(pod *corev1.Pod, backOff string) {
	cs := &pod.Status.ContainerStatuses[0]
	if cs.State.Terminated != nil {
		cs.LastTerminationState = corev1.ContainerState{Terminated: cs.State.Terminated}
	}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: backOffMessage(backOff)}}
}

// TestSafety04_KubeletAskedForTheBackOffOfAFreshStop: a real kubelet
// reports a container that just exited as Terminated, without its back-off,
// until its next sync (when the back-off expires, or a minute later): no go
// can be given on that. The bot sets the broker's status-refresh annotation,
// once per stop, and the kubelet's sync that follows publishes the back-off;
// the go then comes on this stop with the deadline the published back-off
// gives. Before the fix the go waited for a stop long enough to outlast the
// kubelet's resync (on real Kafka the sixth, 4 to 5 minutes after approval).
func TestSafety04_KubeletAskedForTheBackOffOfAFreshStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		// kubelet is how the broker's kubelet answers the refresh: it
		// publishes the back-off, does nothing, or the patch is refused.
		kubelet string
	}{
		{"the kubelet publishes the back-off", "publish"},
		{"the kubelet does not answer: the bot waits for its resync", "silent"},
		{"the annotation is refused: the bot waits for the resync", "refuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
			exit := testStart.Add(-2 * time.Second)
			h.onDebugCreate = func() { setBrokerExited(t, h, 3, exit) }
			h.onRefresh = func(pod *corev1.Pod) error {
				switch tc.kubelet {
				case "publish":
					publishBackOff(pod, "40s")
				case "refuse":
					return apierrors.NewForbidden(podsGVR.GroupResource(), pod.Name, errors.New("denied by the admission policy"))
				}
				return nil
			}
			var stateAtGo string
			h.onGo = func() { stateAtGo = brokerKafkaState(h) }
			rec := &recorder{}
			done := repairWithin(t, h, rec)
			waitUntil(t, "the status refresh", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.refreshes) == 1 })
			if tc.kubelet != "publish" {
				// More status updates of the same stop (the kubelet's own
				// writes): no second refresh, no go without a back-off.
				// (The watch delivers it before the resync below: by the
				// go, the bot has seen it.)
				setBrokerExited(t, h, 3, exit)
				obj, err := h.tracker().Get(podsGVR, testNS, brokerName)
				if err != nil {
					t.Fatal(err)
				}
				pod := obj.(*corev1.Pod).DeepCopy()
				publishBackOff(pod, "40s") // the kubelet's resync
				if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
					t.Fatal(err)
				}
			}
			s := awaitSummary(t, done)
			if s.Outcome != OutcomeRepaired {
				t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
			}
			h.mu.Lock()
			refreshes := slices.Clone(h.refreshes)
			h.mu.Unlock()
			if want := []string{labelValue(testApproval) + ".3"}; !slices.Equal(refreshes, want) {
				t.Errorf("status refreshes %q, want %q (one per stop)", refreshes, want)
			}
			d := goDeadlines(t, h)
			if want := exit.Add(40*time.Second - GoSafetyMargin).Truncate(time.Second); len(d) != 1 || !d[0].Equal(want) {
				t.Errorf("go deadlines %v, want [%v] (the exit plus the published back-off, less the margin)", d, want)
			}
			if stateAtGo != "stopped" {
				t.Errorf("Kafka was %q at the go", stateAtGo)
			}
			refused := strings.Contains(rec.text(), "could not annotate "+brokerName)
			if refused != (tc.kubelet == "refuse") {
				t.Errorf("the thread says the refresh failed: %v, want %v:\n%s", refused, tc.kubelet == "refuse", rec.text())
			}
		})
	}
}

// TestSafety04_ARefusalBeforeTheGoIsReadAtOnce: the script refuses on the
// volume (a check of its own) while Kafka runs between two crashes. The bot
// reads the ended debug pod at once and reports the refusal, without
// waiting for Kafka's next stop, and gives no go. Before the fix the bot
// went on waiting for a stop it could trust (on the real node the refusal
// reached the thread 238 s after the approval, the pod had ended after 1 s).
func TestSafety04_ARefusalBeforeTheGoIsReadAtOnce(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: refusedResult(ReasonNodeIDMismatch), broker: "ready"})
	h.onDebugCreate = func() { setBrokerKafka(t, h, true, 8) }
	rec := &recorder{}
	done := repairWithin(t, h, rec)
	waitUntil(t, "the bot to wait for Kafka's stop", func() bool { return strings.Contains(rec.text(), "is running again") })
	obj, err := h.tracker().Get(podsGVR, testNS, DebugPodName(brokerName))
	if err != nil {
		t.Fatal(err)
	}
	dbg := obj.(*corev1.Pod).DeepCopy()
	h.logs.set(dbg.Name, h.plan.debugLog)
	finishDebugPod(dbg, false) // the script refused, Kafka still running
	if err := h.tracker().Update(podsGVR, dbg, testNS); err != nil {
		t.Fatal(err)
	}
	s := awaitSummary(t, done)
	if s.Outcome == OutcomeRepaired || !strings.Contains(s.Text, ReasonNodeIDMismatch) {
		t.Errorf("want the script's refusal (%s) in the summary, got %s:\n%s", ReasonNodeIDMismatch, s.Outcome, s.Text)
	}
	if n := len(goDeadlines(t, h)); n != 0 {
		t.Errorf("%d goes given to a debug pod that had ended", n)
	}
	if brokerKafkaState(h) != "running" {
		t.Errorf("the broker was touched: %s", brokerKafkaState(h))
	}
}
