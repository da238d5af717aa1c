// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// onDiskRefusals runs the repair script's on-disk refusals against a real
// crash-looping broker: a cluster of 3 controllers and one broker of the
// newest Kafka whose log dir is its volume's root (log.dirs=/bitnami/kafka,
// which Kafka accepts), crashing on a real fault (a foreign directory in
// the log dir). The approvals wait until after is closed (or a bound has
// passed): the other branch deletes a bot pod mid-repair before that.
//
//   - The log dir at the volume root: the script refuses, as any backup
//     folder on that volume would be inside the log dir.
//   - meta.properties of another node: a real broker checks its stored
//     node.id at every start, before it opens the metadata log or its
//     partitions (Kafka's MetaPropertiesEnsemble.verify), so a volume that
//     names another node can only meet the repair if it changed after the
//     crash the bot diagnosed; the test rewrites node.id between the
//     diagnosis and the approval, and the script must refuse the wrong
//     volume. (The script checks the node id first, so the volume root
//     does not hide this refusal.)
func onDiskRefusals(t *testing.T, after <-chan struct{}) {
	k := newKafkaCluster(t, "atroot", newestKafka, 1, false, bitnamiAtRoot)
	pod := k.brokerPod(0)
	k.plant(k.brokerSet(), 0, planted{pod, foreignDirFault})
	k.scenario(pod).waitCrashLoop(1)
	k.checkCrash(pod, foreignDirFault)
	waitOrLog(t, after, 15*time.Minute, "the other branch's repair with the bot pod deleted did not end within 15 minutes; approving anyway")
	var diagnosed time.Time
	if !t.Run("log-dir-at-the-volume-root", func(t *testing.T) {
		diagnosed = k.refusedOnDisk(t, pod, foreignDirFault, "volume root", nil)
	}) {
		return
	}
	// A request for the same pod and restart count within the bot's
	// DIAGNOSIS_SHARE_WINDOW gets the earlier diagnosis, not a new message
	// (CI saw the second one asked 4 s after the first): the next one is
	// asked once that window has passed.
	time.Sleep(time.Until(diagnosed.Add(diagnosisShareWindow + 5*time.Second)))
	// Last: the broker's next start crashes on the node id instead.
	t.Run("meta.properties-of-another-node", func(t *testing.T) {
		k.refusedOnDisk(t, pod, foreignDirFault, "belongs to another node", func(logDir string) {
			if err := setNodeID(logDir, k.nodeID(pod)+1); err != nil {
				t.Fatal(err)
			}
			t.Logf("TAMPERED %s's meta.properties after the diagnosis: node.id=%d", pod, k.nodeID(pod)+1)
		})
	})
}

// refusedOnDisk diagnoses pod, crash-looping on fc, approves its repair
// and checks that the script in the debug pod refuses it, the thread
// saying want: nothing left the log dir (inotify, from the host), no
// backup folder on the volume, the planted entry still in the log dir, the
// broker pod not recreated, no debug pod left. tamper, when set, changes
// the log dir between the diagnosis and the approval. It returns when the
// diagnosis had been posted.
func (k *kafkaCluster) refusedOnDisk(t *testing.T, pod string, fc faultCase, want string, tamper func(logDir string)) (diagnosed time.Time) {
	defer k.on(t)()
	old, err := k.scenario(pod).pod(pod)
	if err != nil {
		t.Fatal(err)
	}
	moves := watchRename(t, k.logDir(pod), fc.moved)
	m := k.diagnosis(pod, fc, true)
	diagnosed = time.Now()
	if tamper != nil {
		tamper(k.logDir(pod))
	}
	click(t, m, actionApprove, approver)
	th, summary, _ := waitOutcome(t, m, 10*time.Minute)
	thread := strings.Join(th, "\n---\n")
	if strings.Contains(summary, "Repair succeeded") || !strings.Contains(thread, want) {
		t.Errorf("want a refusal saying %q; the thread reads:\n%s", want, thread)
	}
	t.Logf("REFUSED %s on disk: %s", pod, grepLines(thread, `refused|volume root|another node|wrong volume`, 6))
	if _, n, err := moves.renamed(); err != nil || n != 0 {
		t.Errorf("%s left the log dir %d times (watch error: %v), want none", fc.moved, n, err)
	}
	if b := kafkabotBackups(t, k.volume(pod)); len(b) != 0 {
		t.Errorf("backup folders on the volume after a refusal: %v", b)
	}
	if _, err := os.Stat(filepath.Join(k.logDir(pod), fc.moved)); err != nil {
		t.Errorf("the planted %s is gone from the log dir: %v", fc.moved, err)
	}
	now, err := k.scenario(pod).pod(pod)
	if err != nil {
		t.Fatal(err)
	}
	if now.UID != old.UID {
		t.Errorf("%s was recreated (UID %s, was %s) although the repair was refused", pod, now.UID, old.UID)
	}
	// The cleanup may still be deleting the debug pod when the outcome is
	// posted.
	if err := waitFor(k.ctx(2*time.Minute), time.Minute, func() (bool, error) { return len(k.debugPods()) == 0, nil }); err != nil {
		t.Errorf("debug pods left behind: %v", k.debugPods())
	}
	return diagnosed
}

// diagnosisShareWindow is the bot's DIAGNOSIS_SHARE_WINDOW on the real
// node (its default: the test's install does not set it).
const diagnosisShareWindow = time.Minute
