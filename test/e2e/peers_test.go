// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// TestSecondBrokerSameErrorBlocksRepair: two brokers of one cluster crash on
// the same fatal error. The same fault on two nodes points at the
// controllers, and wiping brokers one after another would spread the
// outage, so the click-time gate refuses the approved repair with a clear
// message, and nothing changes on either volume.
func TestSecondBrokerSameErrorBlocksRepair(t *testing.T) {
	w := newWorld(t, "kafka-e2e-peers", worldOptions{})
	old, vol0 := w.seedCluster()
	const peer = "foobar-kafka-broker-1"
	vol1 := newBrokerVolume(t, "101")
	peerPod := w.createNode(broker(peer, "101"), vol1)
	w.crashLoop(peer, seedLog())
	before0, before1 := readTree(t, vol0), readTree(t, vol1)
	debugPods := w.recordDebugPods()
	w.startBot("kafkabot-0")

	m := w.diagnose("diagnose broker-0")
	// The diagnosis of one pod does not look at its peers; the buttons
	// are offered, and the gates decide at click time.
	if ids := actionIDs(t, m.Blocks); !slices.Contains(ids, actionApprove) {
		t.Fatalf("the diagnosis offers %v, want an Approve button to click", ids)
	}
	w.click(m, actionApprove, approver)
	th := w.waitRepairEnd(m)
	summary := outcomeText(th)
	if !strings.Contains(summary, "Repair stopped by a safety check") {
		t.Fatalf("the approved repair was not stopped by a safety check; the thread reads:\n%s", strings.Join(th, "\n---\n"))
	}
	for _, want := range []string{
		"Repair stopped by a safety check: nothing was changed",
		recovery.GatePeersHealthy,
		peer + " shows the same fatal error",
		"escalate",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, summary)
		}
	}
	if stepRan(th, "Create debug pod") {
		t.Errorf("the thread shows a debug pod step run after the refusal:\n%s", strings.Join(th, "\n---\n"))
	}
	w.waitSlack("the parent message to show the refusal", func() bool {
		return strings.Contains(blockTexts(t, w.message(m).Blocks), "stopped by a safety check")
	})

	// Nothing changed: volumes, pods, no debug pod ever created.
	for _, v := range []struct {
		name   string
		dir    string
		before tree
	}{{seedBroker, vol0, before0}, {peer, vol1, before1}} {
		if d := v.before.diff(readTree(t, v.dir)); len(d) > 0 {
			t.Errorf("the volume of %s changed:\n%s", v.name, strings.Join(d, "\n"))
		}
	}
	if n := len(debugPods.pods()); n != 0 {
		t.Errorf("%d debug pods were created", n)
	}
	for _, p := range []struct{ name, uid string }{{seedBroker, string(old.UID)}, {peer, string(peerPod.UID)}} {
		if now, err := w.pod(p.name); err != nil || string(now.UID) != p.uid {
			t.Errorf("%s was restarted or is gone (err %v)", p.name, err)
		}
	}
}
