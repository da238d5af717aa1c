// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Issue 27 item 5: the gates hold until the move.

// TestContainment5_GatesReRunBeforeTheGo (review finding 6): between the
// click's gates and the go (up to REPAIR_TIMEOUT, more with re-signals),
// the cluster can turn: a peer crash-loops with the same fatal error, the
// controller goes NotReady, the cluster is escalated. The peer, quorum and
// escalation gates run again, with the same reads, right before the go,
// and refuse: no go, nothing moved.
func TestContainment5_GatesReRunBeforeTheGo(t *testing.T) {
	notReady := func(t *testing.T, h *harness, name string) {
		obj, err := h.tracker().Get(podsGVR, testNS, name)
		if err != nil {
			t.Errorf("get %s: %v", name, err)
			return
		}
		p := obj.(*corev1.Pod).DeepCopy()
		p.Status = crashLoopStatus() // not Ready, CrashLoopBackOff
		if err := h.tracker().Update(podsGVR, p, testNS); err != nil {
			t.Errorf("update %s: %v", name, err)
		}
	}
	tests := []struct {
		name string
		gate string
		turn func(t *testing.T, h *harness)
	}{
		{"a peer crash-loops with the same fatal error", GatePeersHealthy, func(t *testing.T, h *harness) {
			h.logs.set("foobar-kafka-broker-1", offsetCrashLog(t))
			notReady(t, h, "foobar-kafka-broker-1")
		}},
		{"the controller goes NotReady", GateQuorumHealthy, func(t *testing.T, h *harness) {
			notReady(t, h, "foobar-kafka-controller-0")
		}},
		{"the cluster is escalated", GateNotEscalated, func(t *testing.T, h *harness) {
			// The record as kube.Escalate writes it, put straight into the
			// store (a call through h.cs from a reactor would deadlock).
			scratch := fake.NewClientset()
			key := kube.KafkaClusterKeyOf(testNS, "foobar")
			_, _, err := kube.New(scratch, kube.Options{}).Escalate(context.Background(), kube.Escalation{Key: key,
				Pod: "foobar-kafka-broker-1", ApprovalID: "OTHER", Reason: "crashed again after its repair", At: testStart})
			if err != nil {
				t.Errorf("escalating: %v", err)
				return
			}
			l, err := scratch.CoordinationV1().Leases(testNS).Get(context.Background(), kube.EscalationLeaseName(key), metav1.GetOptions{})
			if err == nil {
				err = h.tracker().Create(leasesGVR, l, testNS)
			}
			if err != nil {
				t.Errorf("escalating: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
			h.onDebugCreate = func() { tt.turn(t, h) }
			s := awaitSummary(t, repairWithin(t, h, &recorder{}))
			h.mu.Lock()
			goes := h.goSignals
			h.mu.Unlock()
			if goes > 0 {
				t.Fatalf("the go was given (the move ran) although, before it, %s:\n%s", tt.name, s.Text)
			}
			if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, tt.gate) {
				t.Errorf("outcome %s, want %s refused by %s:\n%s", s.Outcome, OutcomeGateFailed, tt.gate, s.Text)
			}
			if strings.Contains(s.Text, "the move may have happened") {
				t.Errorf("no go was given, yet the summary doubts the move:\n%s", s.Text)
			}
		})
	}
}

// TestContainment5_ResumeReadsAFinishedDebugPodFirst (review finding 7):
// the bot gave the go, the script moved __cluster_metadata-0 (the debug
// pod Succeeded with a "moved" result), and the bot died before reading
// it. Meanwhile Kafka came back up on the same pod. A resumed repair reads
// and records the finished debug pod's result before any gate; the thread
// never hears "Nothing was changed", and the result is kept in the Lease.
func TestContainment5_ResumeReadsAFinishedDebugPodFirst(t *testing.T) {
	c := seedCluster(t)
	c.broker.Status = readyStatus() // Kafka running again (same pod UID), not Ready yet
	c.broker.Status.Conditions[0].Status = corev1.ConditionFalse
	c.broker.Status.ContainerStatuses[0].Ready = false
	c.broker.Status.ContainerStatuses[0].RestartCount = 8
	lease := leftLease(t, "bot-a", testStart, "Wait for debug pod")
	leaseObj(lease).Annotations[annoGoRestarts] = "7"
	dbg := leftDebugPod(corev1.PodSucceeded)
	dbg.Annotations = map[string]string{AnnotationGo: testApproval + ".1796000000"}
	c.extra = append(c.extra, *lease, dbg)
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	h.logs.set(dbg.Name, movedResult(StatusMoved))
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	s := th.only(t).summary
	if s == nil {
		t.Fatal("no summary")
	}
	if strings.Contains(s.Text, "Nothing was changed") {
		t.Errorf("the thread is told nothing was changed although the debug pod's log says the metadata log was moved:\n%s", s.Text)
	}
	if got := h.lease().Annotations[annoResult]; !strings.Contains(got, `"Status":"moved"`) {
		t.Errorf("the lease records result %q, want the debug pod's moved result", got)
	}
	if !strings.Contains(s.Text, "kafkabot-backup-") {
		t.Errorf("the summary does not name the backup:\n%s", s.Text)
	}
	if !strings.Contains(s.Text, "INTERLOCK") {
		t.Errorf("the restart count went from 7 to 8 after the go, yet no INTERLOCK warning:\n%s", s.Text)
	}
}

// TestContainment5_ResumedGateRefusalAfterAGoDoubtsTheMove (review
// finding 7): when a go was given and the result is unknown, a resumed
// repair's gate refusal says the move may have happened and points at the
// backup, never "Nothing was changed".
func TestContainment5_ResumedGateRefusalAfterAGoDoubtsTheMove(t *testing.T) {
	c := seedCluster(t)
	c.broker.Status = readyStatus() // Kafka runs again: still-crash-looping refuses
	c.broker.Status.Conditions[0].Status = corev1.ConditionFalse
	c.broker.Status.ContainerStatuses[0].Ready = false
	lease := leftLease(t, "bot-a", testStart, "Wait for debug pod")
	leaseObj(lease).Annotations[annoGoRestarts] = "7"
	dbg := leftDebugPod(corev1.PodRunning) // the script still runs: no result yet
	dbg.Annotations = map[string]string{AnnotationGo: testApproval + ".1796000000"}
	c.extra = append(c.extra, *lease, dbg)
	h := newHarness(t, c, kubeletPlan{debug: "hang", broker: "ready"})
	th := &threads{}
	if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
		t.Fatal(err)
	}
	s := th.only(t).summary
	if s == nil {
		t.Fatal("no summary")
	}
	if s.Outcome != OutcomeGateFailed {
		t.Fatalf("outcome %s, want a gate refusal:\n%s", s.Outcome, s.Text)
	}
	if strings.Contains(s.Text, "Nothing was changed") || !strings.Contains(s.Text, "the move may have happened; see the backup") {
		t.Errorf("a resumed refusal after a go must say the move may have happened and point at the backup:\n%s", s.Text)
	}
}

// TestContainment5_ClusterLeaseKeyedFromTheSnapshot (review finding 9):
// the per-cluster repair Lease is named from the snapshot the gates read
// (cluster foobar), not from the empty snapshot the plan was built with
// (the namespace-wide Lease).
func TestContainment5_ClusterLeaseKeyedFromTheSnapshot(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	s := awaitSummary(t, repairWithin(t, h, &recorder{}))
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	want := kube.ClusterLeaseName(kube.KafkaClusterKeyOf(testNS, "foobar"))
	leases, err := h.cs.CoordinationV1().Leases(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range leases.Items {
		names = append(names, l.Name)
		if l.Name == want && l.Labels[kube.LabelCluster] != "foobar" {
			t.Errorf("%s is labelled cluster %q, want foobar", l.Name, l.Labels[kube.LabelCluster])
		}
	}
	if !strings.Contains(strings.Join(names, " "), want) {
		t.Errorf("no %s for cluster foobar; leases: %v", want, names)
	}
	if got := h.lease().Annotations[annoClusterLease]; got != want {
		t.Errorf("the repair Lease names cluster lease %q, want %s", got, want)
	}
}
