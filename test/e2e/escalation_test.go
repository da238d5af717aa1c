// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"io"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// TestSafety02_CrashAgainEscalatesEndToEnd: the repaired broker crashes
// again. The repair stops, the cluster gets its escalation record, and
// the thread says so with a Clear escalation button. A new approval of the
// same broker is refused by the escalation gate before any write; once an
// approver clears the escalation with the button, the record is gone.
func TestSafety02_CrashAgainEscalatesEndToEnd(t *testing.T) {
	w := newWorld(t, "kafka-e2e-escalate", worldOptions{})
	w.seedCluster()
	w.startBot("kafkabot-0")
	w.kubelet.OnRestart(w.ns, seedBroker, kubesim.RestartOutcome{CrashLog: seedLog()})

	m := w.diagnose("diagnose broker-0")
	w.click(m, actionApprove, approver)
	th := w.waitThread(m, "is *escalated*")
	key := kube.KafkaClusterKeyOf(w.ns, clusterName)
	if !threadHas(th, "crashed again") {
		t.Errorf("the thread does not say the broker crashed again:\n%s", strings.Join(th, "\n---\n"))
	}
	if _, err := w.admin.CoordinationV1().Leases(w.ns).Get(w.ctx(), kube.EscalationLeaseName(key), metav1.GetOptions{}); err != nil {
		t.Fatalf("no escalation record %s: %v", kube.EscalationLeaseName(key), err)
	}

	// The recreated broker crash-loops with the same error: a new approval
	// of it (dry run: the gates, then stop) is refused by the escalation,
	// before any write.
	debugPods := w.recordDebugPods()
	now, err := w.pod(seedBroker)
	if err != nil {
		t.Fatal(err)
	}
	p := w.newBotParts("kafkabot-1")
	s := p.repairer.Repair(w.ctx(), recovery.Request{
		ApprovalID: "SECONDAPPROVAL", Namespace: w.ns, Pod: seedBroker, PodUID: string(now.UID),
		Rule: recovery.RuleMetadataLogOffsetMismatch, Action: "move-metadata-log", Target: "__cluster_metadata-0",
		Requester: requester, Approver: approver, Channel: channel, DryRun: true,
	}, recovery.NewTextReporter(io.Discard, nil))
	if s.Outcome != recovery.OutcomeGateFailed || !strings.Contains(s.Text, recovery.GateNotEscalated) ||
		!strings.Contains(s.Text, "bot escalation clear "+key.String()) {
		t.Errorf("a new approval of the escalated cluster: outcome %s, want refused by %s:\n%s", s.Outcome, recovery.GateNotEscalated, s.Text)
	}
	if n := len(debugPods.pods()); n != 0 {
		t.Errorf("%d debug pods were created while the cluster is escalated", n)
	}

	// An approver clears it with the button in the first thread.
	var button slackemu.Message
	for _, r := range w.emu.Thread(channel, m.TS) {
		if strings.Contains(r.Text, "is *escalated*") {
			button = r
		}
	}
	w.click(button, "kafkabot.escalation.clear", approver)
	w.waitThread(m, "cleared the escalation")
	_, err = w.admin.CoordinationV1().Leases(w.ns).Get(w.ctx(), kube.EscalationLeaseName(key), metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the escalation record after the clear: %v, want NotFound", err)
	}
}
