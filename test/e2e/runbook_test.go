// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControllerGetsRunbookNoButtons: a controller, or a combined node, that
// fails with the seed's fatal error is a KRaft voter; wiping its metadata
// log by script could lose committed records. The bot answers with the
// manual runbook and offers no Approve button, and touches nothing.
func TestControllerGetsRunbookNoButtons(t *testing.T) {
	w := newWorld(t, "kafka-e2e-runbook", worldOptions{})
	nodes := []struct {
		name string
		node kafkaNode
	}{
		{"controller", kafkaNode{name: "foobar-kafka-controller-0", component: "controller-eligible", roles: "controller", nodeID: "0", claim: "data-foobar-kafka-controller-0"}},
		{"combined", kafkaNode{name: "foobar-kafka-controller-1", component: "controller-eligible", roles: "controller,broker", nodeID: "1", claim: "data-foobar-kafka-controller-1"}},
	}
	uids := map[string]string{}
	for _, n := range nodes {
		pod := w.createNode(n.node, "")
		w.crashLoop(n.node.name, seedLog())
		uids[n.node.name] = string(pod.UID)
	}
	w.startBot("kafkabot-0")

	for _, n := range nodes {
		t.Run(n.name, func(t *testing.T) {
			m := w.diagnose("diagnose " + n.node.name)
			if ids := actionIDs(t, m.Blocks); len(ids) != 0 {
				t.Errorf("the diagnosis of a %s offers buttons %v, want none", n.name, ids)
			}
			// The message and its details reply.
			text := blockTexts(t, m.Blocks) + strings.Join(w.threadTexts(m), "\n")
			for _, want := range []string{
				w.ns + "/" + n.node.name,
				"KRaft metadata log diverged",
				"What to do",
				"Do not wipe this node", // the controller runbook's first step
				"kafka-metadata-quorum",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the diagnosis of a %s does not say %q:\n%s", n.name, want, text)
				}
			}
			if strings.Contains(text, "runs only after approval") {
				t.Errorf("the diagnosis of a %s describes an automated repair:\n%s", n.name, text)
			}
		})
	}

	// Nothing was done to the cluster.
	if left := w.debugPods(); len(left) != 0 {
		t.Errorf("%d debug pods exist", len(left))
	}
	leases, err := w.admin.CoordinationV1().Leases(w.ns).List(w.ctx(), metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedByBot})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) != 0 {
		t.Errorf("%d repair leases exist", len(leases.Items))
	}
	for _, n := range nodes {
		if p, err := w.pod(n.node.name); err != nil || string(p.UID) != uids[n.node.name] {
			t.Errorf("%s was replaced or is gone (err %v)", n.node.name, err)
		}
		if ev := w.botEvents(n.node.name); len(ev) != 0 {
			t.Errorf("the bot recorded %d Events on %s", len(ev), n.node.name)
		}
	}
}

// TestRootBrokerGetsRunbookNoButtons: a broker whose Kafka container runs
// as uid 0 would need a root debug pod, which the repair refuses without
// ALLOW_ROOT_BROKER. The diagnosis runs that same check on the pod it
// read: it offers no Approve, says up front that the automated repair
// will be refused and which setting allows it, and gives the runbook.
func TestRootBrokerGetsRunbookNoButtons(t *testing.T) {
	w := newWorld(t, "kafka-e2e-root", worldOptions{})
	n := broker(seedBroker, "100")
	n.root = true
	pod := w.createNode(n, "")
	w.crashLoop(n.name, seedLog())
	w.startBot("kafkabot-0")

	m := w.diagnose("diagnose " + n.name)
	if ids := actionIDs(t, m.Blocks); len(ids) != 0 {
		t.Errorf("the diagnosis of a root broker offers buttons %v, want none", ids)
	}
	msg := blockTexts(t, m.Blocks)
	for _, want := range []string{"KRaft metadata log diverged", "repair by hand", "I will not: the broker runs as uid 0", "ALLOW_ROOT_BROKER=true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the diagnosis does not say %q up front:\n%s", want, msg)
		}
	}
	if details := strings.Join(w.threadTexts(m), "\n"); !strings.Contains(details, "not on this pod") || strings.Contains(details, "runs only after approval") {
		t.Errorf("the details do not say the bot will not run the repair here:\n%s", details)
	}
	if left := w.debugPods(); len(left) != 0 {
		t.Errorf("%d debug pods exist", len(left))
	}
	if p, err := w.pod(n.name); err != nil || p.UID != pod.UID {
		t.Errorf("%s was replaced or is gone (err %v)", n.name, err)
	}
}
