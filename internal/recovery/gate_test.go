// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

func TestGatesRefuse(t *testing.T) {
	tests := []struct {
		name string
		// change alters the seed cluster or the request.
		change   func(t *testing.T, c *cluster, req *Request)
		gate     string
		seen     string
		runbook  bool
		noWrites bool
	}{
		{
			name:   "namespace outside KAFKA_NAMESPACES",
			change: func(_ *testing.T, c *cluster, _ *Request) { c.namespaces = []string{"other"} },
			gate:   GateNamespace, seen: `namespace "kafka" is outside KAFKA_NAMESPACES`,
		},
		{
			name:   "pod recreated since the diagnosis",
			change: func(_ *testing.T, _ *cluster, req *Request) { req.PodUID = "uid-of-the-old-pod" },
			gate:   GateSamePod, seen: "was recreated since the diagnosis (UID uid-broker-0, approved UID uid-of-the-old-pod)",
		},
		{
			name:   "pod gone",
			change: func(_ *testing.T, c *cluster, _ *Request) { c.broker.Name = "foobar-kafka-broker-9" },
			gate:   GateSamePod, seen: "no longer exists",
		},
		{
			name:   "container running again",
			change: func(_ *testing.T, c *cluster, _ *Request) { c.broker.Status = readyStatus() },
			gate:   GateCrashLooping, seen: "is not crash-looping any more (running and ready, 0 restarts)",
		},
		{
			name: "another finding now",
			change: func(t *testing.T, c *cluster, _ *Request) {
				c.logs[brokerName] = readTestdata(t, "21-lost-found-strimzi-gke.log")
			},
			gate: GateSameFinding, seen: "the approved finding metadata-log-offset-mismatch is no longer diagnosed",
		},
		{
			name: "role unknown (Bitnami controller-eligible)",
			change: func(_ *testing.T, c *cluster, _ *Request) {
				c.broker.Labels["app.kubernetes.io/component"] = "controller-eligible"
			},
			gate: GateBrokerOnly, seen: "has role unknown", runbook: true,
		},
		{
			name: "controller by process.roles",
			change: func(_ *testing.T, c *cluster, _ *Request) {
				delete(c.broker.Labels, "app.kubernetes.io/component")
				c.broker.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "controller"}}
			},
			gate: GateBrokerOnly, seen: "has role controller", runbook: true,
		},
		{
			name: "next offset equals log start offset",
			change: func(t *testing.T, c *cluster, _ *Request) {
				c.logs[brokerName] = strings.Replace(offsetCrashLog(t), "Log start offset = 57054787", "Log start offset = 57876669", 1)
			},
			gate: GateOffsets, seen: "next offset 57876669 is not greater than log start offset 57876669", runbook: true,
		},
		{
			name:   "claim pending",
			change: func(_ *testing.T, c *cluster, _ *Request) { c.claims[0] = pvc("data-"+brokerName, corev1.ClaimPending) },
			gate:   GateClaimsBound, seen: "claim data-foobar-kafka-broker-0 is Pending, not Bound",
		},
		{
			name: "claim ReadWriteOncePod",
			change: func(_ *testing.T, c *cluster, _ *Request) {
				c.claims[0] = pvc("data-"+brokerName, corev1.ClaimBound, corev1.ReadWriteOncePod)
			},
			gate: GateNoRWOP, seen: "claim data-foobar-kafka-broker-0 is ReadWriteOncePod",
		},
		{
			name: "another broker of the cluster under repair",
			change: func(t *testing.T, c *cluster, _ *Request) {
				other := request()
				other.Pod, other.PodUID, other.ApprovalID, other.Approver = "foobar-kafka-broker-1", "uid-broker-1", "appr-other", "U0OTHER"
				l := (&repairLock{identity: "bot-b", duration: leaseSlack, key: testRecordKey}).leaseFor(other, "foobar", map[string]string{}, testStart)
				c.extra = append(c.extra, runtime.Object(l))
			},
			gate: GateNoRepair, seen: "broker foobar-kafka-broker-1 of the same cluster is under repair (approved by U0OTHER",
		},
		{
			name: "a peer crash-loops with the same error",
			change: func(t *testing.T, c *cluster, _ *Request) {
				c.peer.Status = crashLoopStatus()
				c.logs[c.peer.Name] = offsetCrashLog(t)
			},
			gate: GatePeersHealthy, seen: "foobar-kafka-broker-1 shows the same fatal error (metadata-log-offset-mismatch; now waiting: CrashLoopBackOff",
		},
		{
			name: "a controller is not Ready",
			change: func(_ *testing.T, c *cluster, _ *Request) {
				c.controller.Status.Conditions = nil
				c.controller.Status.ContainerStatuses[0].Ready = false
			},
			gate: GateQuorumHealthy, seen: "foobar-kafka-controller-0 of 1 seen are not Ready",
		},
		{
			name:   "approved remedy differs",
			change: func(_ *testing.T, _ *cluster, req *Request) { req.Target = "lost+found" },
			gate:   GateSameFinding, seen: `not the approved "move-metadata-log" on "lost+found"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := seedCluster(t)
			req := request()
			tc.change(t, c, &req)
			h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
			rep := &recorder{}
			s := h.r.Repair(context.Background(), req, rep)
			if s.Outcome != OutcomeGateFailed {
				t.Fatalf("outcome %s, want gate-failed; summary:\n%s", s.Outcome, s.Text)
			}
			if !strings.Contains(s.Text, "safety gate "+tc.gate+" refused") || !strings.Contains(s.Text, tc.seen) {
				t.Errorf("summary does not name gate %s and %q:\n%s", tc.gate, tc.seen, s.Text)
			}
			if got := strings.Contains(s.Text, "Manual runbook:\n1. "); got != tc.runbook {
				t.Errorf("runbook in summary = %t, want %t:\n%s", got, tc.runbook, s.Text)
			}
			if w := h.writes(); len(w) > 0 {
				t.Errorf("a refused repair wrote to the cluster: %v", w)
			}
		})
	}
}

func TestCrashLooping(t *testing.T) {
	tests := []struct {
		name string
		c    ContainerStateForTest
		want bool
	}{
		{"back-off", ContainerStateForTest{waiting: "CrashLoopBackOff", restarts: 3}, true},
		{"terminated after restarts", ContainerStateForTest{terminated: true, restarts: 2}, true},
		{"terminated first time", ContainerStateForTest{terminated: true}, false},
		{"creating", ContainerStateForTest{waiting: "ContainerCreating"}, false},
		// A real broker runs 20 to 40 s before its fatal fault: between
		// two crashes it is running, not Ready, its last run ended in an
		// error a back-off ago.
		{"running 25s after a 40s back-off", runningAfterCrash(40*time.Second, 25*time.Second), true},
		{"running 25s after the longest back-off", runningAfterCrash(5*time.Minute, 25*time.Second), true},
		{"running 2m50s, a large broker loading its logs", runningAfterCrash(10*time.Second, 170*time.Second), true},
		{"running, start time not reported", func() ContainerStateForTest {
			c := runningAfterCrash(40*time.Second, 25*time.Second)
			c.runningFor = 0
			return c
		}(), true},
		{"running and ready after a crash", func() ContainerStateForTest {
			c := runningAfterCrash(40*time.Second, 25*time.Second)
			c.ready = true
			return c
		}(), false},
		{"running longer than the bound", runningAfterCrash(40*time.Second, 3*time.Minute+time.Second), false},
		{"running, last crash beyond the back-off window, start time not reported", func() ContainerStateForTest {
			c := runningAfterCrash(9*time.Minute, 0)
			c.runningFor = 0
			return c
		}(), false},
		{"running after a clean exit", func() ContainerStateForTest {
			c := runningAfterCrash(40*time.Second, 25*time.Second)
			c.lastExit = 0
			return c
		}(), false},
		{"running after restarts, last end unknown", ContainerStateForTest{running: true, restarts: 9}, false},
		{"running, never restarted", ContainerStateForTest{running: true, runningFor: 25 * time.Second}, false},
	}
	for _, tc := range tests {
		if got := crashLooping(tc.c.state(testStart), testStart); got != tc.want {
			t.Errorf("%s: crashLooping = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// runningAfterCrash is a Kafka container running for runningFor, not
// Ready, restarted 4 times, its last run ended with exit 1 backOff before
// it started.
func runningAfterCrash(backOff, runningFor time.Duration) ContainerStateForTest {
	return ContainerStateForTest{running: true, restarts: 4, runningFor: runningFor, lastExit: 1, lastEnded: backOff + runningFor}
}

// TestGateAdmitsABrokerRunningBetweenCrashes: an approval given while a
// crash-looping broker's JVM runs between two crashes (restarted, not
// Ready, its last run ended in an error within the back-off) passes the
// still-crash-looping gate; the interlock then gives the go only once
// Kafka has crashed again, and the repair succeeds. A Ready broker, or one
// running longer than a crash loop's run, is still refused. Before, every
// running container was refused ("not crash-looping any more (running, not
// ready, N restarts)"), so an operator had to click during a back-off.
func TestGateAdmitsABrokerRunningBetweenCrashes(t *testing.T) {
	tests := []struct {
		name string
		// ready, running for ran, the last run ended ago before the click.
		ready    bool
		ran, ago time.Duration
		refused  string // the refusal's words; "" = admitted
	}{
		{name: "running 25s, crashed 55s ago", ran: 25 * time.Second, ago: 55 * time.Second},
		{name: "running 2m, crashed after the longest back-off", ran: 2 * time.Minute, ago: 7 * time.Minute},
		{name: "Ready", ready: true, ran: 25 * time.Second, ago: 55 * time.Second,
			refused: "is not crash-looping any more (running and ready, 7 restarts, running for 25s, last ended (Error, exit 1) 55s ago)"},
		{name: "running 4m, not Ready", ran: 4 * time.Minute, ago: 4*time.Minute + 10*time.Second,
			refused: "is not crash-looping any more (running, not ready, 7 restarts, running for 4m0s, last ended (Error, exit 1) 4m10s ago)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := seedCluster(t)
			cs := &c.broker.Status.ContainerStatuses[0]
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(testStart.Add(-tc.ran))}}
			cs.Ready = tc.ready
			cs.LastTerminationState.Terminated.FinishedAt = metav1.NewTime(testStart.Add(-tc.ago))
			cs.LastTerminationState.Terminated.StartedAt = metav1.NewTime(testStart.Add(-tc.ago - 30*time.Second))
			h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
			var stateAtGo string
			h.onGo = func() { stateAtGo = brokerKafkaState(h) }
			rec := &recorder{}
			done := repairWithin(t, h, rec)
			if tc.refused != "" {
				s := awaitSummary(t, done)
				if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "safety gate "+GateCrashLooping+" refused") || !strings.Contains(s.Text, tc.refused) {
					t.Fatalf("outcome %s, want %s to refuse with %q:\n%s", s.Outcome, GateCrashLooping, tc.refused, s.Text)
				}
				if w := h.writes(); len(w) > 0 {
					t.Errorf("a refused repair wrote to the cluster: %v", w)
				}
				return
			}
			waitUntil(t, "the interlock to wait for Kafka to stop", func() bool { return strings.Contains(rec.text(), "is running again") })
			h.mu.Lock()
			early := h.goSignals
			h.mu.Unlock()
			if early != 0 {
				t.Fatal("the go was given while Kafka was running")
			}
			setBrokerKafka(t, h, false, 8) // the fatal fault, again
			s := awaitSummary(t, done)
			if s.Outcome != OutcomeRepaired {
				t.Fatalf("outcome %s, want repaired:\n%s", s.Outcome, s.Text)
			}
			if stateAtGo != "stopped" {
				t.Errorf("Kafka was %q when the go was given", stateAtGo)
			}
		})
	}
}

func TestGateErrorIs(t *testing.T) {
	err := error(refuse(GateSamePod, "seen %d", 1))
	var ge *GateError
	if !errors.As(err, &ge) || ge.Gate != GateSamePod || err.Error() != "safety gate same-pod-uid refused: seen 1" {
		t.Errorf("GateError = %v", err)
	}
}

// ContainerStateForTest builds a diagnose.ContainerState briefly.
type ContainerStateForTest struct {
	waiting    string
	terminated bool
	running    bool
	ready      bool
	restarts   int32
	// runningFor is how long a running container has run (0: not
	// reported); lastEnded, how long ago its last instance ended with
	// lastExit (0: no last instance).
	runningFor, lastEnded time.Duration
	lastExit              int32
}

func (c ContainerStateForTest) state(now time.Time) *diagnose.ContainerState {
	s := &diagnose.ContainerState{Name: "kafka", WaitingReason: c.waiting, Running: c.running, Ready: c.ready, RestartCount: c.restarts}
	if c.terminated {
		s.Terminated = &diagnose.Termination{Reason: "Error", ExitCode: 1}
	}
	if c.running && c.runningFor > 0 {
		s.RunningSince = now.Add(-c.runningFor)
	}
	if c.lastEnded > 0 {
		reason := "Error"
		if c.lastExit == 0 {
			reason = "Completed"
		}
		s.LastTerminated = &diagnose.Termination{Reason: reason, ExitCode: c.lastExit, FinishedAt: now.Add(-c.lastEnded)}
	}
	return s
}
