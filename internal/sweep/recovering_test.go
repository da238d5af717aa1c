// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// recovering is the broker's pod after a repair recreated it: a new pod
// (new UID, no restarts) whose Kafka runs but is not Ready yet, because
// it is recovering its logs.
func recovering(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.UID = types.UID(string(p.UID) + "-after-move")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready, cs.RestartCount = false, 0
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	cs.LastTerminationState = corev1.ContainerState{}
	return p
}

// TestRecoveringBrokerIsNotRealerted (issue 23 item 6): after a repair, the
// recreated broker recovers its logs, Running and not Ready, for as long
// as Kafka needs (here 45 minutes of sweeps): the sweep never alerts about
// it again (no new alert, no repeat, no "finding changed"), so no new
// Approve is offered, and its alert is not resolved either until it is
// Ready.
func TestRecoveringBrokerIsNotRealerted(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	e.engine.set("kafka-broker-0", metadataFinding("__cluster_metadata-0"))
	s, _ := e.start(e.options("bot-a"), true)
	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	waitFor(t, "the alert", func() bool { return len(e.notes.of("notify")) == 1 })
	settle(t, s)

	e.update(recovering(brokerPod("kafka-broker-0")))
	for range 45 {
		sweepNow(t, s)
		e.clock.Step(time.Minute)
	}
	settle(t, s)
	if kinds := e.notes.kinds(); strings.Join(kinds, ",") != "notify" {
		t.Errorf("notifications %v while the repaired broker recovers its logs, want only the first alert", kinds)
	}
}

// TestRecoveringBrokerLogOffersNoApprove: the log of a broker recovering
// its logs (real Kafka 3.7.2 and 4.4.0: "Recovering unflushed segment",
// "The broker is in RECOVERY.", and a corrupt segment Kafka truncates
// itself) on a Running, not Ready pod is not
// unhealthy to the sweep, and the engine offers no repair on it: a
// /kafka diagnose of it shows no Approve.
func TestRecoveringBrokerLogOffersNoApprove(t *testing.T) {
	for version, says := range map[string][]string{
		"3.7.2": {"Recovering unflushed segment 0. 0/1 recovered for orders-0.", "The broker is in RECOVERY."},
		"4.4.0": {"Recovering unflushed segment 0. 0 recovered for orders-0.", "Waiting for the broker to be unfenced"},
	} {
		t.Run(version, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/recovering-" + version + ".log")
			if err != nil {
				t.Fatal(err)
			}
			log := string(raw)
			for _, want := range says {
				if !strings.Contains(log, want) {
					t.Fatalf("the recording lacks %q", want)
				}
			}
			pod := recovering(brokerPod("kafka-broker-0"))
			if det := NewDetector(3, 10*time.Minute).Observe(pod, t0); det.Unhealthy() {
				t.Errorf("the sweep finds the recovering broker unhealthy: %+v", det)
			}
			snap := diagnose.Snapshot{
				Namespace: testNS, Pod: pod.Name, UID: string(pod.UID), Phase: "Running", KafkaCluster: testCluster,
				Role: diagnose.RoleBroker, NodeID: "2", KafkaContainer: "kafka",
				Containers: []diagnose.ContainerState{{Name: "kafka", Running: true, Image: "bitnami/kafka:3.9"}},
				Log:        log, LogBytes: len(log),
			}
			for _, f := range diagnose.Default().Diagnose(snap) {
				t.Logf("finding %s (automated %t)", f.Rule, f.Remedy.Automated)
				if slackview.Repairable(snap, f) {
					t.Errorf("the recovering broker would get Approve for %s (%s on %s)", f.Rule, f.Remedy.Action, f.Remedy.Target)
				}
			}
		})
	}
}
