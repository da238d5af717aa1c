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
