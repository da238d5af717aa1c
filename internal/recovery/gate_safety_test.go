// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// runningBetweenCrashes is a peer's status in the part of a crash-loop
// cycle where its container runs again: Running, not Ready, restarted,
// last ended ago before the repair.
func runningBetweenCrashes(ago time.Duration, ready bool) corev1.PodStatus {
	s := readyStatus()
	cs := &s.ContainerStatuses[0]
	cs.Ready = ready
	if !ready {
		s.Conditions[0].Status = corev1.ConditionFalse
	}
	cs.RestartCount = 5
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: "Error", ExitCode: 1,
		StartedAt:  metav1.NewTime(testStart.Add(-ago - 30*time.Second)),
		FinishedAt: metav1.NewTime(testStart.Add(-ago)),
	}}
	return s
}

// TestSafety02_PeerRunningBetweenCrashesBlocks: a peer that crash-loops
// with the same error but is Running at the moment of the click (between
// two crashes) blocks the repair; its previous log is read whatever its
// state. A peer that restarted long ago and has run since does not.
func TestSafety02_PeerRunningBetweenCrashesBlocks(t *testing.T) {
	tests := []struct {
		name    string
		status  corev1.PodStatus
		refused bool
	}{
		{"running, not ready, crashed 40s ago", runningBetweenCrashes(40*time.Second, false), true},
		{"running and ready, crashed 10m ago", runningBetweenCrashes(10*time.Minute, true), true},
		{"terminated right now", func() corev1.PodStatus {
			s := runningBetweenCrashes(time.Minute, false)
			s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}
			return s
		}(), true},
		{"restarted, end time unknown", func() corev1.PodStatus {
			s := runningBetweenCrashes(time.Minute, true)
			s.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{}
			return s
		}(), true},
		{"restarted 3h ago, healthy since", runningBetweenCrashes(3*time.Hour, true), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := seedCluster(t)
			c.peer.Status = tc.status
			c.logs[c.peer.Name] = offsetCrashLog(t) // its previous instance died the same way
			h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
			s := h.r.Repair(context.Background(), request(), &recorder{})
			if !tc.refused {
				if s.Outcome != OutcomeRepaired {
					t.Fatalf("outcome %s, want repaired (the peer's old restart is not recent):\n%s", s.Outcome, s.Text)
				}
				return
			}
			if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "safety gate "+GatePeersHealthy+" refused") ||
				!strings.Contains(s.Text, "foobar-kafka-broker-1 shows the same fatal error (metadata-log-offset-mismatch") {
				t.Fatalf("outcome %s, want the peer gate to refuse:\n%s", s.Outcome, s.Text)
			}
			if w := h.writes(); len(w) > 0 {
				t.Errorf("a refused repair wrote to the cluster: %v", w)
			}
		})
	}
}

func TestRecentlyFailed(t *testing.T) {
	now := testStart
	ended := func(ago time.Duration) *diagnose.Termination {
		return &diagnose.Termination{Reason: "Error", ExitCode: 1, FinishedAt: now.Add(-ago)}
	}
	tests := []struct {
		name string
		c    diagnose.ContainerState
		want bool
	}{
		{"never restarted, running", diagnose.ContainerState{Running: true, Ready: true}, false},
		{"never restarted, creating", diagnose.ContainerState{WaitingReason: "ContainerCreating"}, false},
		{"back-off", diagnose.ContainerState{WaitingReason: "CrashLoopBackOff", RestartCount: 3, LastTerminated: ended(time.Minute)}, true},
		{"terminated first time", diagnose.ContainerState{Terminated: &diagnose.Termination{Reason: "Error", ExitCode: 1}}, true},
		{"waiting after a restart", diagnose.ContainerState{WaitingReason: "ContainerCreating", RestartCount: 1, LastTerminated: ended(5 * time.Hour)}, true},
		{"running, ended inside the window", diagnose.ContainerState{Running: true, RestartCount: 2, LastTerminated: ended(PeerRecentWindow - time.Second)}, true},
		{"running, ended outside the window", diagnose.ContainerState{Running: true, RestartCount: 2, LastTerminated: ended(PeerRecentWindow)}, false},
		{"running, restarts but no end time", diagnose.ContainerState{Running: true, RestartCount: 2}, true},
	}
	for _, tc := range tests {
		if got := recentlyFailed(&tc.c, now); got != tc.want {
			t.Errorf("%s: recentlyFailed = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestSafety07_NoVisibleControllerRefuses: with no controller pod of the
// cluster visible, the quorum gate refuses and names the setting that
// opts out; with the setting, it proceeds and warns.
func TestSafety07_NoVisibleControllerRefuses(t *testing.T) {
	c := seedCluster(t)
	c.controller = nil
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	s := h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "safety gate "+GateQuorumHealthy+" refused: no controller pod of cluster kafka/foobar is visible") {
		t.Fatalf("outcome %s, want the quorum gate to refuse:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "set REPAIR_WITHOUT_VISIBLE_CONTROLLER=true") {
		t.Errorf("the refusal does not name the setting that opts out:\n%s", s.Text)
	}
	if w := h.writes(); len(w) > 0 {
		t.Errorf("a refused repair wrote to the cluster: %v", w)
	}

	c = seedCluster(t)
	c.controller = nil
	h = newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	h.r.opts.Gates.AllowNoVisibleController = true
	s = h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("with %s=true: outcome %s, want repaired:\n%s", SettingNoVisibleController, s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "Warning: controller-quorum-ready: no controller pod of this cluster is visible") {
		t.Errorf("summary lacks the quorum warning:\n%s", s.Text)
	}
}

// TestSafety02_CrashAgainEscalatesCluster: after a repair whose broker
// crashes again, the bot leaves a durable per-cluster escalation record
// (the Lease kafkabot-escalated-<key>); every later automated repair of a
// broker of that cluster is refused, naming how a person clears it, until
// the record is cleared.
func TestSafety02_CrashAgainEscalatesCluster(t *testing.T) {
	c := seedCluster(t)
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "crash", brokerLog: offsetCrashLog(t)})
	ctx := context.Background()
	s := h.r.Repair(ctx, request(), &recorder{})
	if s.Outcome != OutcomeCrashAgain {
		t.Fatalf("outcome %s, want crashed-again:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "cluster kafka/foobar is now escalated") || !strings.Contains(s.Text, "bot escalation clear kafka/foobar") {
		t.Errorf("the summary does not say the cluster is escalated and how to clear it:\n%s", s.Text)
	}
	key := kube.KafkaClusterKeyOf(testNS, "foobar")
	if _, err := h.cs.CoordinationV1().Leases(testNS).Get(ctx, kube.EscalationLeaseName(key), metav1.GetOptions{}); err != nil {
		t.Fatalf("no escalation record: %v", err)
	}

	// A new approval of the recreated broker, crash-looping with the same
	// finding: refused by the escalation, nothing written.
	again := request()
	again.ApprovalID, again.PodUID, again.Approver = "appr-0002", newBrokerUID, "U0SECOND"
	before := len(h.writes())
	s = h.r.Repair(ctx, again, &recorder{})
	if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "safety gate "+GateNotEscalated+" refused: cluster kafka/foobar is escalated") {
		t.Fatalf("second repair: outcome %s, want the escalation gate to refuse:\n%s", s.Outcome, s.Text)
	}
	if w := h.writes()[before:]; len(w) > 0 {
		t.Errorf("a repair refused by the escalation wrote: %v", w)
	}

	// A person clears it; the gate no longer refuses.
	if _, err := h.kc.ClearEscalation(ctx, key, ""); err != nil {
		t.Fatal(err)
	}
	again.ApprovalID, again.DryRun = "appr-0003", true // the gates, and no write
	s = h.r.Repair(ctx, again, &recorder{})
	if s.Outcome != OutcomeDryRun || strings.Contains(s.Text, GateNotEscalated) {
		t.Errorf("after clearing, the escalation gate still refuses:\n%s", s.Text)
	}
}

func TestClusterKeyOverlaps(t *testing.T) {
	tests := []struct {
		a, b kube.KafkaClusterKey
		want bool
	}{
		{kube.KafkaClusterKey{Namespace: "kafka", Cluster: "a"}, kube.KafkaClusterKey{Namespace: "kafka", Cluster: "a"}, true},
		{kube.KafkaClusterKey{Namespace: "kafka", Cluster: "a"}, kube.KafkaClusterKey{Namespace: "kafka", Cluster: "b"}, false},
		{kube.KafkaClusterKey{Namespace: "kafka", Cluster: ""}, kube.KafkaClusterKey{Namespace: "kafka", Cluster: "b"}, true},
		{kube.KafkaClusterKey{Namespace: "kafka", Cluster: "a"}, kube.KafkaClusterKey{Namespace: "kafka", Cluster: ""}, true},
		{kube.KafkaClusterKey{Namespace: "kafka", Cluster: "a"}, kube.KafkaClusterKey{Namespace: "other", Cluster: "a"}, false},
	}
	for _, tc := range tests {
		if got := tc.a.Overlaps(tc.b); got != tc.want {
			t.Errorf("%s overlaps %s = %t, want %t", tc.a, tc.b, got, tc.want)
		}
	}
}
