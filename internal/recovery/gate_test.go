// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
		{"running with restarts", ContainerStateForTest{running: true, restarts: 9}, false},
		{"creating", ContainerStateForTest{waiting: "ContainerCreating"}, false},
	}
	for _, tc := range tests {
		if got := crashLooping(tc.c.state()); got != tc.want {
			t.Errorf("%s: crashLooping = %t, want %t", tc.name, got, tc.want)
		}
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
	restarts   int32
}

func (c ContainerStateForTest) state() *diagnose.ContainerState {
	s := &diagnose.ContainerState{Name: "kafka", WaitingReason: c.waiting, Running: c.running, RestartCount: c.restarts}
	if c.terminated {
		s.Terminated = &diagnose.Termination{Reason: "Error", ExitCode: 1}
	}
	return s
}
