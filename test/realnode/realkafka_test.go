// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// The repairs on real Apache Kafka: a KRaft cluster of 3 controllers and 3
// brokers from the version's image, a topic with replication factor 3 and
// records written before each fault; the fault planted on a stopped
// broker's volume as the incident left it; the bot alerts, diagnoses from
// the real crash log, is approved in the Slack emulator and repairs; Kafka's
// own tools prove recovery. One cluster per version serves its scenarios in
// order (a cluster's start-up is the expensive part).

// The versions: the newest 4.x for every scenario, 3.7.2 for the seed too.
const (
	newestKafka = "4.4.0"
	oldestKafka = "3.7.2"
)

// faultCase is one fault: how it is planted and what the bot must make of it.
type faultCase struct {
	name string
	// plant changes the stopped node's log dir and says what it did.
	plant func(t *testing.T, logDir string) string
	// diagnosis is what the diagnosis must say; crash is what the real
	// crash log must say.
	diagnosis, crash string
	// moved is the entry of the log dir the remedy moves to the backup
	// (the card names it, and the test watches it leave the log dir).
	moved string
}

// seedFault is the seed incident's fault on a real broker: its local
// metadata log ends inside one of the quorum leader's batches.
var seedFault = faultCase{
	name: "move-metadata-log",
	plant: func(t *testing.T, logDir string) string {
		first, next, err := splitMetadataBatch(logDir)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("__cluster_metadata-0 cut inside the leader's batch at offset %d: the local log now ends at %d", first, next)
	},
	diagnosis: "KRaft metadata log diverged",
	crash:     "Unexpected offset in append to __cluster_metadata-0",
	moved:     "__cluster_metadata-0",
}

var foreignDirFault = faultCase{
	name: "move-foreign-dir",
	plant: func(t *testing.T, logDir string) string {
		if err := plantForeignDir(logDir, "oldbackup"); err != nil {
			t.Fatal(err)
		}
		return "a directory oldbackup/ (not a topic-partition) put into the log dir"
	},
	diagnosis: "not a Kafka partition",
	crash:     "is not in the form of topic-partition",
	moved:     "oldbackup",
}

var checkpointFault = faultCase{
	name: "move-checkpoint-file",
	plant: func(t *testing.T, logDir string) string {
		if err := breakCheckpoint(logDir, "recovery-point-offset-checkpoint"); err != nil {
			t.Fatal(err)
		}
		return "recovery-point-offset-checkpoint's last line torn (its offset missing)"
	},
	diagnosis: "checkpoint file",
	crash:     "Malformed line in checkpoint file",
	moved:     "recovery-point-offset-checkpoint",
}

// TestRealKafkaRepairs runs the refusal on a combined node, then two
// branches side by side: the seed incident on 3.7.2 followed by the
// script's on-disk refusals on a small newest-Kafka cluster, and every
// automated repair and the gates' refusals on the newest Kafka, each
// cluster shared by its scenarios. The clusters are separate Kafka
// clusters to the bot (its one-repair-at-a-time and peer gates are per
// cluster), and most of each scenario's time is the real crash loop's
// back-off, so they overlap well.
func TestRealKafkaRepairs(t *testing.T) {
	t.Run(newestKafka+"-combined", func(t *testing.T) {
		k := newKafkaCluster(t, "c"+strings.ReplaceAll(newestKafka, ".", ""), newestKafka, 0, true, bitnamiLayout)
		k.writeData("start")
		t.Run("refused-on-a-combined-node", func(t *testing.T) { k.refusedOnVoter(t, k.pods()[2]) })
	})
	// What the two branches wait for in each other, each closed once (a
	// branch filtered out by -test.run has them closed at once):
	// oldUp, the 3.7.2 cluster formed (or failed to): the 4.4.0 cluster
	// starts then, not at the same time, as six JVMs starting at once on
	// this 2-core machine are the heaviest moment; seedDone, the 3.7.2 seed
	// ended: a bot pod may be deleted mid-repair; botBack, that repair
	// ended: the on-disk refusals may ask the bot; oldDone, the first
	// branch ended: the node may be cordoned.
	oldUp, seedDone, botBack, oldDone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	oldRan, newRan := false, false
	t.Run(oldestKafka+"-then-on-disk-refusals", func(t *testing.T) {
		oldRan = true
		t.Parallel()
		defer close(oldDone)
		upOnce := sync.OnceFunc(func() { close(oldUp) })
		defer upOnce()
		seedOnce := sync.OnceFunc(func() { close(seedDone) })
		defer seedOnce()
		t.Run(oldestKafka, func(t *testing.T) {
			// Strimzi's JBOD layout: the seed's backup must land on the root
			// of the volume holding the metadata log, nothing on the second.
			k := newKafkaCluster(t, "k"+strings.ReplaceAll(oldestKafka, ".", ""), oldestKafka, 3, false, strimziJBOD)
			upOnce()
			k.writeData("start")
			// The seed with the sweep's alert from the real crash loop (the
			// crash-to-alert time is measured).
			t.Run(seedFault.name, func(t *testing.T) { k.repairOne(t, seedFault, repairHow{alert: true}) })
		})
		seedOnce()
		// The 3.7.2 cluster is gone (its subtest's cleanup); the node has
		// room for a small one.
		t.Run("on-disk-refusals-"+newestKafka, func(t *testing.T) { onDiskRefusals(t, botBack) })
	})
	t.Run(newestKafka, func(t *testing.T) {
		newRan = true
		t.Parallel()
		backOnce := sync.OnceFunc(func() { close(botBack) })
		defer backOnce()
		waitOrLog(t, oldUp, 10*time.Minute, "the "+oldestKafka+" cluster did not form within 10 minutes; starting anyway")
		k := newKafkaCluster(t, "k"+strings.ReplaceAll(newestKafka, ".", ""), newestKafka, 3, false, bitnamiLayout)
		k.writeData("start")
		if !t.Run(foreignDirFault.name, func(t *testing.T) { k.repairOne(t, foreignDirFault, repairHow{}) }) {
			return
		}
		// A torn recovery-point-offset-checkpoint: Kafka halts with "Shutdown
		// broker because all log dirs in … have failed", which the diagnosis
		// ties to the file through the LogDirFailureChannel's error in the
		// same run. The bot pod running it is deleted mid-repair (once the
		// 3.7.2 seed is over, and before the on-disk refusals ask the bot,
		// so only this repair is resumed): a replica takes it over from the
		// Lease hand-off.
		ok := t.Run(checkpointFault.name, func(t *testing.T) {
			k.repairOne(t, checkpointFault, repairHow{deleteBotAfter: seedDone})
		})
		backOnce()
		if !ok {
			return
		}
		// The seed on broker 102, with broker 101 failing at once: it
		// leaves 101 crash-looping for the refusals below.
		if !t.Run("two-brokers-one-repair", func(t *testing.T) { k.twoBrokers(t) }) {
			return
		}
		if !t.Run("refused-on-a-controller", func(t *testing.T) { k.refusedOnVoter(t, k.pods()[2]) }) {
			return
		}
		// Last: it leaves the quorum without a leader. Controller 2 is down
		// since the test above; broker 101 still has the foreign dir. It
		// cordons the node, which would hold the other cluster's debug pod
		// and recreated broker Pending: it waits for that cluster's
		// scenarios to end (a bound, not a deadlock, if -test.parallel=1
		// runs this one first).
		waitOrLog(t, oldDone, 25*time.Minute, "the other branch's scenarios did not end within 25 minutes; cordoning the node anyway")
		t.Run("refused-without-a-quorum-leader", func(t *testing.T) { k.noQuorumLeader(t, k.brokerPod(1), foreignDirFault) })
	})
	// Filtered out by -test.run: nothing to wait for.
	if !oldRan {
		close(oldUp)
		close(seedDone)
		close(oldDone)
	}
	if !newRan {
		close(botBack)
	}
}

// waitOrLog waits until done is closed, at most timeout (a bound, not a
// deadlock, should -test.parallel=1 run the waiting subtest first); on the
// timeout it logs why and returns.
func waitOrLog(t *testing.T, done <-chan struct{}, timeout time.Duration, why string) {
	t.Helper()
	start := time.Now()
	select {
	case <-done:
		if waited := time.Since(start); waited > time.Second {
			t.Logf("waited %s for the other cluster", waited.Round(time.Second))
		}
	case <-time.After(timeout):
		t.Log(why)
	}
}

// planted is a fault to plant on one node's volume.
type planted struct {
	pod   string
	fault faultCase
}

// plant stops the nodes of a StatefulSet above keep (its highest
// ordinals, by scaling it down: SIGTERM, Kafka's controlled shutdown),
// plants each fault on its node's stopped volume, and starts them again.
func (k *kafkaCluster) plant(set string, keep int32, faults ...planted) {
	t := k.t
	k.scale(set, keep)
	var pods []string
	for _, f := range faults {
		pods = append(pods, f.pod)
	}
	k.waitGone(pods...)
	for _, f := range faults {
		t.Logf("FAULT Kafka %s, %s (node %d): %s", k.version, f.pod, k.nodeID(f.pod), f.fault.plant(t, k.logDir(f.pod)))
	}
	k.scale(set, k.replicas(set))
}

// repairHow says what else a repair scenario does.
type repairHow struct {
	// alert waits for the sweep's alert and measures crash to alert.
	alert bool
	// deleteBotAfter, when set, waits until it is closed (or a bound has
	// passed) before the approval, then deletes the bot pod holding the
	// repair's Lease while the repair waits for its debug pod (the go now
	// comes at Kafka's next stop, seconds after the click: waiting after
	// the click would find the repair over).
	deleteBotAfter <-chan struct{}
}

// repairOne plants fc on the last broker (102 of three; stopped, then
// started), lets the bot repair it, and proves recovery with Kafka's tools.
func (k *kafkaCluster) repairOne(t *testing.T, fc faultCase, how repairHow) {
	defer k.on(t)()
	k.writeData(fc.name)
	last := int32(k.brokers - 1)
	pod := k.brokerPod(int(last))
	pods := watchPods(t)
	alerts := len(env.emu.Messages(alertChannel))
	k.plant(k.brokerSet(), last, planted{pod, fc})

	s := k.scenario(pod)
	crashing := s.waitCrashLoop(1)
	k.checkCrash(pod, fc)
	if how.alert {
		// The first crash as the pod watch saw it (a poll of a loaded API
		// server can miss the first termination and see the second).
		first := pods.firstExitOf(pod, crashing.UID)
		if m, ok := waitNewMessage(t, alertChannel, alerts, pod, 4*time.Minute); !ok {
			t.Errorf("no crash-loop alert for %s in %s", pod, alertChannel)
		} else {
			measure(t, "Kafka "+k.version+" "+fc.name+": crash to alert in Slack", slackTime(m.TS).Sub(first))
		}
	}
	if how.deleteBotAfter != nil {
		waitOrLog(t, how.deleteBotAfter, 5*time.Minute, "the other cluster's scenarios did not end within 5 minutes; deleting the bot pod anyway")
	}
	a := k.approveWhileRunning(pod, fc)
	if how.deleteBotAfter != nil {
		deleteRepairingBot(t, a)
	}
	k.proveRepair(pods, a, fc.name)
	checkEvents(t, pod)
	checkNoSecrets(t)
}

// deleteRepairingBot deletes the bot pod holding a's repair Lease once the
// repair waits for its debug pod, and waits until that pod is gone: the
// Deployment replaces it and a replica resumes the repair from the Lease
// hand-off.
func deleteRepairingBot(t *testing.T, a approval) {
	t.Helper()
	waitThreadFunc(t, a.m, "the wait for the debug pod", func(s string) bool {
		return strings.Contains(s, "⏳ Give the debug pod its go") || strings.Contains(s, "⏳ Wait for debug pod")
	}, 2*time.Minute)
	ctx := context.Background()
	lease, err := env.admin.CoordinationV1().Leases(kafkaNS).Get(ctx, kube.RepairLeaseName(a.pod), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	bot, err := env.admin.CoreV1().Pods(botNS).Get(ctx, holder, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the repair Lease's holder %q is not a bot pod: %v", holder, err)
	}
	deleted := time.Now()
	if err := env.admin.CoreV1().Pods(botNS).Delete(ctx, bot.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &bot.UID}}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		_, err := env.admin.CoreV1().Pods(botNS).Get(ctx, bot.Name, metav1.GetOptions{})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("the bot pod %s did not go: %v", bot.Name, err)
	}
	t.Logf("BOT %s (holder of %s's repair Lease) deleted mid-repair", bot.Name, a.pod)
	// A replica resumes at once from the hand-off, well before the Lease
	// would expire (REPAIR_TIMEOUT plus two minutes).
	waitThreadFunc(t, a.m, "the resumed repair", func(s string) bool { return strings.Contains(s, "bot restarted during step") }, resumeWait)
	measure(t, "bot pod deleted to the repair resumed by a replica", time.Since(deleted))
}

// resumeWait bounds the wait for a resumed repair: well under the Lease's
// expiry (REPAIR_TIMEOUT, 10 minutes, plus two), so only a hand-off passes.
const resumeWait = 3 * time.Minute

// setUnschedulable cordons or uncordons the node.
func setUnschedulable(t *testing.T, on bool) {
	t.Helper()
	patch := []byte(`{"spec":{"unschedulable":` + map[bool]string{true: "true", false: "false"}[on] + `}}`)
	if _, err := env.admin.CoreV1().Nodes().Patch(context.Background(), env.nodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// approval is an approved repair: the fault, the diagnosis it was given
// on, when, the broker pod then and when its running Kafka started, the
// backup folders its volume had, and the watch on its log dir for the move.
type approval struct {
	pod     string
	fault   faultCase
	m       slackemu.Message
	at      time.Time
	old     *corev1.Pod
	running time.Time
	backups []string
	rename  *renameWatch
}

// approveWhileRunning waits until pod's Kafka starts again between two
// crashes (restarted, not Ready: the JVM takes 20 to 40 s to reach the
// fault; a run already older than freshRun is let go, so the diagnosis
// and the click fit in the run), diagnoses it and approves the repair
// then: the broker restarts by itself in the repair window. The
// still-crash-looping gate takes such a broker as crash-looping; the
// interlock gives the go only once it has crashed again (proveRepair
// checks that against the container's lifecycle).
func (k *kafkaCluster) approveWhileRunning(pod string, fc faultCase) approval {
	t := k.t
	s := k.scenario(pod)
	var old *corev1.Pod
	if err := waitFor(k.ctx(7*time.Minute), 6*time.Minute, func() (bool, error) {
		p, err := s.pod(pod)
		if err != nil {
			return false, nil
		}
		c, ok := kafkaStatusOf(p)
		old = p
		return ok && c.State.Running != nil && !c.Ready && c.RestartCount > 0 && time.Since(c.State.Running.StartedAt.Time) < freshRun, nil
	}); err != nil {
		t.Fatalf("%s did not run again after a crash: %v", pod, err)
	}
	c := kafkaStatus(t, old)
	a := approval{pod: pod, fault: fc, old: old, running: c.State.Running.StartedAt.Time,
		backups: kafkabotBackups(t, k.volume(pod)), rename: watchRename(t, k.logDir(pod), fc.moved)}
	a.m = k.diagnosis(pod, fc, true)
	a.at = click(t, a.m, actionApprove, approver)
	t.Logf("APPROVED %s while its Kafka ran between crashes (restart %d, running since %s, %s before the click)",
		pod, c.RestartCount, c.State.Running.StartedAt.UTC().Format(time.TimeOnly), a.at.Sub(c.State.Running.StartedAt.Time).Round(time.Second))
	return a
}

// freshRun is how young a Kafka run approveWhileRunning approves in.
const freshRun = 10 * time.Second

// proveRepair waits for the approved repair's outcome, checks it succeeded
// (pod recreated, the moved entry in one new backup folder at the volume
// root, one debug pod from the broker's image by digest, none left, the
// move inside the interlock's window), proves recovery with Kafka's tools
// (down: brokers known to be down meanwhile) and measures.
func (k *kafkaCluster) proveRepair(pods *podWatch, a approval, what string, down ...string) {
	t := k.t
	th, summary, outcome := waitOutcome(t, a.m, 10*time.Minute)
	if !strings.Contains(summary, "Repair succeeded") {
		k.dump()
		t.Fatalf("the repair did not succeed:\n%s", strings.Join(th, "\n---\n"))
	}
	t.Logf("INTERLOCK %s: %s", a.pod, grepLines(strings.Join(th, "\n"), `Interlock|go given|running again|no go now|INTERLOCK`, 8))
	done := slackTime(outcome.TS)
	now, err := k.scenario(a.pod).pod(a.pod)
	if err != nil {
		t.Fatal(err)
	}
	if now.UID == a.old.UID {
		t.Errorf("%s was not recreated by the repair", a.pod)
	}
	k.checkBackup(a, summary)
	debug := pods.debugPods(a.pod)
	if len(debug) != 1 {
		t.Fatalf("%d debug pods ran, want 1", len(debug))
	}
	checkDebugPod(t, debug[0].pod, a.old, k.claim(a.pod), k.image.ManifestDigest)
	checkMoveWindow(t, a, pods.kafkaRuns(a.pod, a.old.UID), debug[0])
	if err := waitFor(k.ctx(2*time.Minute), time.Minute, func() (bool, error) { return len(k.debugPods()) == 0, nil }); err != nil {
		t.Errorf("debug pods left behind: %v", k.debugPods())
	}
	recovered := k.recovered(a.pod, 5*time.Minute, down...)
	t.Logf("AFTER Kafka %s %s: %s", k.version, what, startupLines(podLog(t, a.pod)))

	name := "Kafka " + k.version + " " + what + ": "
	if replies := env.emu.Thread(a.m.Channel, a.m.TS); len(replies) > 0 {
		measure(t, name+"  bot: approve to first thread message", slackTime(replies[0].TS).Sub(a.at))
	}
	measure(t, name+"  bot+kubelet: approve to debug pod created", debug[0].added.Sub(a.at))
	measure(t, name+"  kubelet+interlock: debug pod created to its container finished (waits for Kafka's next stop)", debug[0].finished.Sub(debug[0].added))
	ready, deleted := pods.readyAt(a.pod, now.UID), pods.deletedAt(a.pod, a.old.UID)
	measure(t, name+"approve to broker unfenced, caught up, ISR back", recovered.Sub(a.at))
	measure(t, name+"  bot: approve to broker pod deleted (gates, debug pod, interlock, move)", deleted.Sub(a.at))
	measure(t, name+"  kubelet+Kafka: pod deleted to new pod Ready (port 9092 open)", ready.Sub(deleted))
	measure(t, name+"  Kafka: pod Ready to unfenced, caught up, ISR back (as the tools saw it)", recovered.Sub(ready))
	measure(t, name+"approve to the bot's summary (settle included)", done.Sub(a.at))
	reqs := k.ownRequests(botRequests(t, a.at.Add(-time.Second), done.Add(time.Second)))
	t.Logf("MEASURE %s API requests of the repair (approve to summary; those naming another cluster's node left out): %d: %s", name, len(reqs), summarize(reqs))
}

// ownRequests leaves out the requests that name another cluster's node
// (every node of these clusters is <cluster>-kafka-<role>-<ordinal>, and
// the bot's per-broker Leases and debug pods carry its name); requests
// that name no node (lists, watches) stay.
func (k *kafkaCluster) ownRequests(reqs []auditEvent) []auditEvent {
	var out []auditEvent
	for _, r := range reqs {
		if !strings.Contains(r.RequestURI, "-kafka-") || strings.Contains(r.RequestURI, k.name+"-kafka-") {
			out = append(out, r)
		}
	}
	return out
}

// checkCrash checks the node's real crash log says what the fault makes
// Kafka say, and logs its key lines.
// A crash-looping container's previous log can be briefly unreadable
// (the kubelet answered "unable to retrieve container logs" while the
// container restarted): it is read again for up to a minute; every crash of
// the loop prints the same fault.
func (k *kafkaCluster) checkCrash(pod string, fc faultCase) {
	var log string
	_ = waitFor(k.ctx(2*time.Minute), time.Minute, func() (bool, error) {
		out, err := env.run(context.Background(), "-n", kafkaNS, "logs", pod, "--previous")
		if log = out; err != nil {
			log = fmt.Sprintf("%v\n%s", err, out)
		}
		return strings.Contains(log, fc.crash), nil
	})
	if !strings.Contains(log, fc.crash) {
		k.t.Fatalf("the real node's crash log lacks %q:\n%s", fc.crash, lastLines(log, 40))
	}
	k.t.Logf("CRASH Kafka %s %s: %s", k.version, fc.name, crashLines(log))
}

// diagnosis asks the bot to diagnose pod and checks what it found and
// whether it offers Approve. It asks once the crashed container runs
// again or waits in its back-off: asked while the kubelet still reported
// the crashed 3.7.2 broker Terminated, the diagnosis once came back
// unclassified-fatal.
func (k *kafkaCluster) diagnosis(pod string, fc faultCase, offered bool) slackemu.Message {
	t := k.t
	s := k.scenario(pod)
	var m slackemu.Message
	var text string
	for attempt := 0; ; attempt++ {
		var restarts int32
		if err := waitFor(k.ctx(3*time.Minute), 2*time.Minute, func() (bool, error) {
			p, err := s.pod(pod)
			if err != nil {
				return false, nil
			}
			c, ok := kafkaStatusOf(p)
			restarts = c.RestartCount
			return ok && c.State.Terminated == nil, nil
		}); err != nil {
			t.Fatalf("%s stayed terminated: %v", pod, err)
		}
		m = diagnose(t, "diagnose "+kafkaNS+"/"+pod)
		text = blockTexts(t, m.Blocks)
		if strings.Contains(text, fc.diagnosis) {
			break
		}
		// A known race, not fixed yet (docs/REALNODE.md): the bot read a
		// stale Terminated status, then the log of the run the kubelet had
		// just started, which holds no crash yet. Asked once more after the
		// next crash; a second miss fails.
		if attempt > 0 || !strings.Contains(text, "no known failure pattern matched") {
			t.Fatalf("the diagnosis of the real crash does not say %q:\n%s", fc.diagnosis, text)
		}
		t.Logf("RETRY the diagnosis of %s came back unclassified (a run in progress read as the crashed one); asking again after its next crash:\n%s", pod, text)
		if err := waitFor(k.ctx(5*time.Minute), 4*time.Minute, func() (bool, error) {
			p, err := s.pod(pod)
			if err != nil {
				return false, nil
			}
			c, ok := kafkaStatusOf(p)
			return ok && c.RestartCount > restarts, nil
		}); err != nil {
			t.Fatalf("%s did not restart again: %v", pod, err)
		}
	}
	if ids := actionIDs(t, m.Blocks); slices.Contains(ids, actionApprove) != offered {
		t.Fatalf("the diagnosis offers %v (Approve wanted: %v):\n%s", ids, offered, text)
	}
	if offered {
		// The card says what it will move, and where, before Approve.
		for _, want := range []string{kafkaNS + "/" + pod, fc.moved, k.claim(pod)} {
			if !strings.Contains(text, want) {
				t.Errorf("the diagnosis does not mention %q:\n%s", want, text)
			}
		}
	}
	return m
}

// refusedOnVoter plants the seed fault on a voter (a controller, or a
// combined node): the bot must give the runbook and never offer the move.
func (k *kafkaCluster) refusedOnVoter(t *testing.T, pod string) {
	defer k.on(t)()
	pods := watchPods(t)
	k.plant(k.controllerSet(), 2, planted{pod, seedFault})
	k.scenario(pod).waitCrashLoop(1)
	k.checkCrash(pod, seedFault)
	m := k.diagnosis(pod, seedFault, false)
	if text := blockTexts(t, m.Blocks); !strings.Contains(text, "no automated repair") {
		t.Errorf("the diagnosis of voter %s does not say there is no automated repair:\n%s", pod, text)
	}
	// The runbook is in the diagnosis' thread.
	th := strings.Join(waitThread(t, m, "Do not wipe this node", 2*time.Minute), "\n")
	if !strings.Contains(th, "voter") {
		t.Errorf("the runbook for voter %s does not say why (a voter):\n%s", pod, th)
	}
	t.Logf("RUNBOOK for voter %s: %s", pod, grepLines(th, `Do not wipe|voter|Role`, 6))
	if n := len(pods.debugPods(pod)); n != 0 {
		t.Errorf("%d debug pods ran for voter %s", n, pod)
	}
}

// twoBrokers plants different faults on brokers 102 (the seed) and 101 (a
// foreign dir) at once: the first approved repair runs and is proven, the
// second approval, given while the first runs, is refused with the reason
// in its thread. Broker 101 is left crash-looping.
func (k *kafkaCluster) twoBrokers(t *testing.T) {
	defer k.on(t)()
	k.writeData("two-brokers")
	a, b := k.brokerPod(2), k.brokerPod(1)
	pods := watchPods(t)
	k.plant(k.brokerSet(), 1, planted{a, seedFault}, planted{b, foreignDirFault})
	k.scenario(a).waitCrashLoop(1)
	k.checkCrash(a, seedFault)
	k.scenario(b).waitCrashLoop(1)
	k.checkCrash(b, foreignDirFault)
	first := k.approveWhileRunning(a, seedFault)
	// The first repair holds its Leases once its debug pod exists.
	if err := waitFor(k.ctx(3*time.Minute), 2*time.Minute, func() (bool, error) {
		return len(pods.debugPods(a)) > 0, nil
	}); err != nil {
		t.Fatalf("no debug pod for %s: %v", a, err)
	}
	mb := k.diagnosis(b, foreignDirFault, true)
	click(t, mb, actionApprove, approver)
	th := waitThreadFunc(t, mb, "a refusal", func(s string) bool {
		return strings.Contains(s, "under repair") || strings.Contains(s, "one broker at a time")
	}, 2*time.Minute)
	t.Logf("REFUSED %s while %s is repaired: %s", b, a, grepLines(strings.Join(th, "\n"), `refused|under repair`, 6))
	k.proveRepair(pods, first, "seed with a second broker failing", b)
	if got := k.debugPods(); len(got) != 0 {
		t.Errorf("debug pods left: %v", got)
	}
	if n := len(pods.debugPods(b)); n != 0 {
		t.Errorf("%d debug pods ran for the refused %s", n, b)
	}
	for _, r := range env.emu.Thread(mb.Channel, mb.TS) {
		if text := r.Text + "\n" + blocksText(r.Blocks); repairOutcome.MatchString(text) && strings.Contains(text, "succeeded") {
			t.Errorf("the second broker was repaired too: %s", text)
		}
	}
}

// noQuorumLeader stops a second controller while pod crash-loops (the
// node cordoned, the controller's pod deleted at once, so its replacement
// stays Pending), leaving one of three voters: no leader. An approval given
// then is refused with the reason in the thread, and nothing is moved.
func (k *kafkaCluster) noQuorumLeader(t *testing.T, pod string, fc faultCase) {
	defer k.on(t)()
	s := k.scenario(pod)
	m := k.diagnosis(pod, fc, true)
	stopped := k.pods()[1]
	setUnschedulable(t, true)
	t.Cleanup(func() { setUnschedulable(t, false) })
	ctx := k.ctx(2 * time.Minute)
	old, err := s.pod(stopped)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.admin.CoreV1().Pods(kafkaNS).Delete(ctx, stopped, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		p, err := s.pod(stopped)
		return err == nil && p.UID != old.UID && p.Status.Phase == "Pending", nil
	}); err != nil {
		t.Fatalf("%s was not replaced by a Pending pod: %v", stopped, err)
	}
	if out, err := k.tool(time.Minute, "", k.class("MetadataQuorumCommand"), "--bootstrap-server", k.bootstrap(pod), "describe", "--status"); err == nil {
		t.Logf("Kafka's view with two voters down: %s", out)
	} else {
		t.Logf("Kafka's view with two voters down: %v", err)
	}
	click(t, m, actionApprove, approver)
	th := waitThreadFunc(t, m, "a refusal naming the quorum", func(s string) bool { return strings.Contains(s, "quorum") }, 2*time.Minute)
	t.Logf("REFUSED without a quorum leader: %s", grepLines(strings.Join(th, "\n"), `refused|quorum`, 6))
	if got := k.debugPods(); len(got) != 0 {
		t.Errorf("debug pods ran without a quorum leader: %v", got)
	}
	if !strings.Contains(strings.Join(th, "\n"), "controller") {
		t.Errorf("the refusal does not name the controllers:\n%s", strings.Join(th, "\n"))
	}
}

// firstExitOf is the pod's earliest container exit the watch saw.
func (pw *podWatch) firstExitOf(name string, uid types.UID) time.Time {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if r := pw.pods[uid]; r != nil && r.pod.Name == name {
		return r.firstExit
	}
	return time.Time{}
}

// waitNewMessage waits for a top-level message in ch, after the first
// skip ones, containing want.
func waitNewMessage(t *testing.T, ch string, skip int, want string, timeout time.Duration) (slackemu.Message, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var found slackemu.Message
	err := env.emu.WaitFor(ctx, func() bool {
		msgs := env.emu.Messages(ch)
		for _, m := range msgs[min(skip, len(msgs)):] {
			if strings.Contains(m.Text, want) || strings.Contains(string(m.Blocks), want) {
				found = m
				return true
			}
		}
		return false
	})
	return found, err == nil
}

// podLog is the node's current container's log.
func podLog(t *testing.T, pod string) string {
	t.Helper()
	out, err := env.run(context.Background(), "-n", kafkaNS, "logs", pod)
	if err != nil {
		t.Fatalf("reading %s's log: %v\n%s", pod, err, out)
	}
	return out
}

// crashLines are the lines of a crash log a report needs.
func crashLines(log string) string {
	return grepLines(log, `ERROR|FATAL|Exception: |Found directory|Malformed|Corrupt|Shutdown broker`, 8)
}

// startupLines are the lines of a repaired broker's log that say how it
// came back.
func startupLines(log string) string {
	return grepLines(log, `entrypoint:|Initialized snapshots|catching up|Transitioning|unfenced|Loaded \d+ logs|Recovering|recovery|rebuild|Creating new partition|ERROR`, 25)
}

func grepLines(log, pattern string, n int) string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if re.MatchString(l) {
			if len(l) > 400 {
				l = l[:400] + "…"
			}
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = append(out[:n/2], out[len(out)-n/2:]...)
	}
	return "\n" + strings.Join(out, "\n")
}

// checkBackup checks the approved repair's backup on the real disk: one new
// folder at the root of the volume holding the log dir, with its README
// and the moved entry under the log dir's path, named in the summary; no
// backup on the broker's other volumes.
func (k *kafkaCluster) checkBackup(a approval, summary string) {
	t := k.t
	t.Helper()
	var added []string
	for _, b := range kafkabotBackups(t, k.volume(a.pod)) {
		if !slices.Contains(a.backups, b) {
			added = append(added, b)
		}
	}
	if len(added) != 1 {
		t.Errorf("new backup folders at the volume root: %v, want one", added)
		return
	}
	root := filepath.Join(k.volume(a.pod), added[0])
	rel, err := filepath.Rel(k.volume(a.pod), k.logDir(a.pod))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.txt", filepath.Join(rel, a.fault.moved)} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the backup lacks %s: %v", f, err)
		}
	}
	if !strings.Contains(summary, added[0]) {
		t.Errorf("the summary does not name the backup %s:\n%s", added[0], summary)
	}
	for _, v := range k.volumes(a.pod)[1:] {
		if b := kafkabotBackups(t, v); len(b) != 0 {
			t.Errorf("backup folders on the broker's other volume %s: %v", v, b)
		}
	}
}

// debugPods lists the bot's debug pods for the cluster's nodes (other
// clusters' scenarios run meanwhile).
func (k *kafkaCluster) debugPods() []string {
	var out []string
	for _, p := range listDebugPods(k.t) {
		for _, node := range k.pods() {
			if p == recovery.DebugPodName(node) {
				out = append(out, p)
			}
		}
	}
	return out
}

// kafkabotBackups lists the bot's backup folders at a volume's root.
func kafkabotBackups(t *testing.T, volume string) []string {
	t.Helper()
	entries, err := os.ReadDir(volume)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kafkabot-backup-") {
			out = append(out, e.Name())
		}
	}
	return out
}
