// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// TestContainment2_LookAlikeDebugPodDoesNotSatisfyTheQuorumGate (issue 27
// item 2, review finding 2): a pod the bot's identity may create (named
// kafkabot-repair-*, labelled managed-by=kafkabot) carrying Bitnami
// controller labels must not make an invisible controller quorum look
// visible and Ready. With the only controller out of sight and
// REPAIR_WITHOUT_VISIBLE_CONTROLLER unset, the repair is refused by the
// quorum gate. Before the fix it ran to "repaired".
func TestContainment2_LookAlikeDebugPodDoesNotSatisfyTheQuorumGate(t *testing.T) {
	c := seedCluster(t)
	c.controller = nil // the real controllers are where the bot cannot see them
	fake := bitnamiPod("kafkabot-repair-x", "controller-eligible", "uid-fake")
	fake.Labels["app.kubernetes.io/managed-by"] = "kafkabot"
	fake.Labels["kafkabot/repair-id"] = "x"
	fake.Labels["kafkabot/broker"] = "x"
	c.extra = append(c.extra, fake)
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	s := h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "no controller pod of cluster") {
		t.Errorf("outcome %s, want refused by %s (no visible controller): a look-alike debug pod counted as a controller:\n%s", s.Outcome, GateQuorumHealthy, s.Text)
	}
}

// TestContainment2_PeersNeverIncludeTheBotsDebugPods: the gates' peer list
// leaves out pods named as the bot's debug pods, whatever their snapshot
// says (a snapshot carries no labels).
func TestContainment2_PeersNeverIncludeTheBotsDebugPods(t *testing.T) {
	in := &gateInput{snap: diagnose.Snapshot{Namespace: "kafka", Pod: "foobar-kafka-broker-0", KafkaCluster: "foobar"}}
	all := []diagnose.Snapshot{
		{Namespace: "kafka", Pod: "foobar-kafka-controller-0", KafkaCluster: "foobar", Role: diagnose.RoleController},
		{Namespace: "kafka", Pod: DebugPodName("foobar-kafka-broker-1"), KafkaCluster: "foobar", Role: diagnose.RoleController},
	}
	got := peersOf(in, all)
	if len(got) != 1 || got[0].Pod != "foobar-kafka-controller-0" {
		t.Errorf("peersOf = %v, want only the real controller", got)
	}
}
