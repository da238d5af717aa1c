// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// TestSafety08_RejectOnOneReplicaStopsApproveOnAnother: two bot replicas
// serve one workspace, and Slack hands each click to either connection.
// Replica A gets a Reject; before Slack shows the rejected message (its
// update is lost here) an approver clicks Approve on the stale buttons,
// and that click reaches replica B. B reads the decision record A wrote in
// the cluster and refuses: no debug pod, no repair Lease, the volume
// untouched, and the approver is told who rejected it.
func TestSafety08_RejectOnOneReplicaStopsApproveOnAnother(t *testing.T) {
	w := newWorld(t, "kafka-e2e-decision", worldOptions{})
	_, vol := w.seedCluster()
	before := readTree(t, vol)
	debugPods := w.recordDebugPods()
	w.startBot("kafkabot-a")

	m := w.diagnose("diagnose broker-0")
	if ids := actionIDs(t, m.Blocks); !slices.Contains(ids, actionApprove) || !slices.Contains(ids, actionReject) {
		t.Fatalf("the diagnosis offers %v, want Approve and Reject", ids)
	}
	// The Reject's message update is lost, so the buttons stay on screen.
	w.emu.InjectFault("chat.update", slackemu.Fault{Error: "internal_error"})
	w.click(m, actionReject, requester) // the only connection: replica A
	w.waitThread(m, "rejected the repair")
	if ids := actionIDs(t, w.message(m).Blocks); !slices.Contains(ids, actionApprove) {
		t.Fatalf("the message lost its buttons (%v); the test needs the stale view", ids)
	}

	// Replica B connects; Slack now delivers to its connection.
	w.startBot("kafkabot-b")
	w.click(m, actionApprove, approver)
	w.waitSlack("the approver to be told", func() bool {
		return slices.ContainsFunc(w.emu.Ephemerals(channel, approver), func(e slackemu.Message) bool {
			return strings.Contains(e.Text, "already rejected by <@"+requester+">")
		})
	})

	// The refusal is told at the end of the click's handling, after the
	// point where an applied Approve would have started the repair.
	th := w.threadTexts(m)
	if threadHas(th, "approved. Starting") || threadHas(th, "Take the repair lease") {
		t.Errorf("a repair started after the rejection:\n%s", strings.Join(th, "\n---\n"))
	}
	if d := before.diff(readTree(t, vol)); len(d) > 0 {
		t.Errorf("the volume changed:\n%s", strings.Join(d, "\n"))
	}
	if n := len(debugPods.pods()); n != 0 {
		t.Errorf("%d debug pods were created", n)
	}
	_, err := w.admin.CoordinationV1().Leases(w.ns).Get(w.ctx(), kube.RepairLeaseName(seedBroker), metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("reading the repair Lease: %v, want NotFound (no repair taken)", err)
	}
}
