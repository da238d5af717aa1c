// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// repairSteps are the steps a fresh repair of the seed broker in
// namespace ns reports, in order, each started and then done.
func repairSteps(ns string) []string {
	return []string{
		"Re-check " + ns + "/" + seedBroker + " and the safety gates",
		"Build the debug pod and script",
		"Take the repair lease " + kube.RepairLeaseName(seedBroker),
		"Create debug pod",
		"Wait for debug pod",
		"Read the repair script's result",
		"Delete debug pod",
		"Restart " + seedBroker,
		"Watch the new " + seedBroker + " until Ready",
	}
}

// TestSeedIncidentRepairedEndToEnd is the seed incident from the chat to
// the disk: broker node 100 crash-loops on UnexpectedAppendOffsetException
// in __cluster_metadata-0, an on-call engineer asks the bot, an approver
// approves, and the bot moves the metadata log out of the log dir and
// restarts the broker, which comes back Ready.
func TestSeedIncidentRepairedEndToEnd(t *testing.T) {
	w := newWorld(t, "kafka-e2e-seed", worldOptions{})
	old, vol := w.seedCluster()
	before := readTree(t, vol)
	debugPods := w.recordDebugPods()
	bot := w.startBot("kafkabot-0")

	m := w.diagnose("diagnose broker-0")
	text := blockTexts(t, m.Blocks)
	for _, want := range []string{
		w.ns + "/" + seedBroker, "KRaft metadata log diverged", "__cluster_metadata-0",
		"data-" + seedBroker, // the claim the repair touches
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the diagnosis message does not mention %q:\n%s", want, text)
		}
	}
	if ids := actionIDs(t, m.Blocks); !slices.Contains(ids, actionApprove) || !slices.Contains(ids, actionReject) {
		t.Fatalf("the diagnosis offers %v, want Approve and Reject", ids)
	}

	w.click(m, actionApprove, approver)
	th := w.waitRepairEnd(m)

	// Slack: every step in the thread's checklist, in order, then the summary.
	var wants []string
	wants = append(wants, "approved. Starting")
	wants = append(wants, repairSteps(w.ns)...)
	wants = append(wants, "Repair succeeded: the broker is back")
	if missing := containsInOrder(th, wants...); missing != "" {
		t.Errorf("the thread lacks %q (in order); it reads:\n%s", missing, strings.Join(th, "\n---\n"))
	}
	for _, s := range repairSteps(w.ns) {
		if !threadHas(th, "✅ "+s) {
			t.Errorf("the thread does not show step %q done", s)
		}
	}
	summary := strings.Join(th, "\n")
	// (kubesim mounts the claim under a host directory, so the path the
	// script reports starts there; in a cluster it is /kafka-data/0/….)
	for _, want := range []string{"Repaired " + w.ns + "/" + seedBroker, "approved by <@" + approver + ">", "Backup: ", "/kafka-data/0/kafkabot-backup-"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	w.waitSlack("the parent message to say repaired", func() bool {
		return strings.Contains(blockTexts(t, w.message(m).Blocks), "Repair succeeded: the broker is back")
	})
	parent := w.message(m)
	if ids := actionIDs(t, parent.Blocks); len(ids) != 0 {
		t.Errorf("the parent message still offers %v after the repair", ids)
	}
	if pt := blockTexts(t, parent.Blocks); !strings.Contains(pt, "Approved by <@"+approver+">") {
		t.Errorf("the parent message does not say who approved:\n%s", pt)
	}

	// The volume: only __cluster_metadata-0 moved, to the backup folder at
	// the volume root, outside the log dir.
	backup := checkMetadataLogMoved(t, vol, before)
	if !strings.Contains(summary, backup) {
		t.Errorf("the summary does not name the backup folder %s:\n%s", backup, summary)
	}

	// The cluster: the broker was recreated and is Ready; the debug pod
	// ran once and is gone; the Lease is released; the repair is on record.
	checkBrokerReplaced(t, w, old)
	checkOneDebugPod(t, w, debugPods)
	checkEvents(t, w, old)
	checkNoSecrets(t, w, debugPods, bot.logs.String())
}

// checkNoSecrets scans what the repair left in the cluster (Events, the
// Lease, the debug pod as the apiserver admitted it) and the bot's log for
// the Slack tokens and the approval secret.
func checkNoSecrets(t *testing.T, w *world, debugPods *debugPodRecorder, botLog string) {
	t.Helper()
	events, err := w.admin.CoreV1().Events(w.ns).List(w.ctx(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leases, err := w.admin.CoordinationV1().Leases(w.ns).List(w.ctx(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 || len(leases.Items) == 0 {
		t.Fatalf("nothing to scan: %d events, %d leases", len(events.Items), len(leases.Items))
	}
	outputs := map[string]any{"events": events, "leases": leases, "debug pods": debugPods.pods()}
	for what, obj := range outputs {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		outputs[what] = string(b)
	}
	outputs["bot log"] = botLog
	for what, text := range outputs {
		for name, secret := range map[string]string{
			"the app token": slackemu.DefaultAppToken, "the bot token": slackemu.DefaultBotToken,
			"the approval secret": string(approvalSecret),
		} {
			if strings.Contains(text.(string), secret) {
				t.Errorf("%s contains %s", what, name)
			}
		}
	}
}

// threadHas reports whether a reply contains all of parts.
func threadHas(th []string, parts ...string) bool {
	return slices.ContainsFunc(th, func(s string) bool {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				return false
			}
		}
		return true
	})
}

// stepRan reports whether the checklist shows step started: running, done,
// skipped or failed (a planned step not run shows ⏸).
func stepRan(th []string, step string) bool {
	for _, mark := range []string{"⏳ ", "✅ ", "⏭️ ", "❌ "} {
		if threadHas(th, mark+step) {
			return true
		}
	}
	return false
}

// checkBrokerReplaced checks that the broker pod is a new instance (new
// UID) and Ready.
func checkBrokerReplaced(t *testing.T, w *world, old *corev1.Pod) {
	t.Helper()
	now, err := w.pod(old.Name)
	if err != nil {
		t.Fatalf("reading %s after the repair: %v", old.Name, err)
	}
	if now.UID == old.UID {
		t.Errorf("%s still has UID %s: it was not recreated", old.Name, old.UID)
	}
	if !kube.PodReady(now) {
		t.Errorf("%s is not Ready after the repair: %+v", old.Name, now.Status)
	}
}

// checkOneDebugPod checks that exactly one debug pod was created, on the
// broker's node, and that none is left.
func checkOneDebugPod(t *testing.T, w *world, rec *debugPodRecorder) *corev1.Pod {
	t.Helper()
	created := rec.pods()
	if len(created) != 1 {
		t.Fatalf("%d debug pods were created, want 1", len(created))
	}
	if left := w.debugPods(); len(left) != 0 {
		t.Errorf("debug pods left behind: %d", len(left))
	}
	return created[0]
}

// checkEvents checks the Kubernetes Events the bot recorded on the broker:
// the steps and a final "repaired" one, as `kubectl describe pod` shows.
func checkEvents(t *testing.T, w *world, old *corev1.Pod) {
	t.Helper()
	events := w.botEvents(old.Name)
	var steps, finished int
	for _, e := range events {
		switch e.Reason {
		case recovery.EventReasonStep:
			steps++
		case recovery.EventReasonFinished:
			finished++
			if e.Type != corev1.EventTypeNormal || !strings.HasPrefix(e.Message, string(recovery.OutcomeRepaired)) {
				t.Errorf("the final Event is %s %q, want Normal and %q", e.Type, e.Message, recovery.OutcomeRepaired)
			}
		}
	}
	if steps == 0 || finished != 1 {
		t.Errorf("the bot recorded %d step Events and %d final Events on %s, want some and 1", steps, finished, old.Name)
	}
}
