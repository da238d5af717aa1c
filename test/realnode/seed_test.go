// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// TestSeedIncidentOnARealNode is the seed incident on a real node: broker
// node 100 (Bitnami layout) crash-loops on UnexpectedAppendOffsetException
// with the kubelet's real back-off; the bot, installed from deploy/, alerts,
// diagnoses from the real `pods/log?previous=true`, and on approval runs its
// debug pod from the broker's image by digest on the same claim, moves the
// metadata log to a backup at the volume root, deletes the broker pod, and
// the StatefulSet controller's new pod comes up Ready.
func TestSeedIncidentOnARealNode(t *testing.T) {
	s := newScenario(t, "foobar", bitnami, "100")
	s.writeVolumes("100", true)
	pods := watchPods(t)
	s.deploy()

	first := s.waitFirstCrash()
	s.waitCrashLoop(1)

	// The sweep's alert, from the first crash.
	alert, ok := waitMessage(t, alertChannel, s.broker, 4*time.Minute)
	if !ok {
		t.Errorf("no crash-loop alert for %s in %s", s.broker, alertChannel)
	} else {
		measure(t, "crash to alert in Slack", slackTime(alert.TS).Sub(first))
	}

	// Approve at the start of a back-off: waiting for the alert took part
	// of this one, and a back-off expiring during the move makes the bot
	// refuse to restart the broker (TestBrokerRestartsInTheRepairWindow
	// covers that case).
	old := s.freshBackOff()
	m := diagnose(t, "diagnose "+kafkaNS+"/"+s.broker)
	text := blockTexts(t, m.Blocks)
	for _, want := range []string{kafkaNS + "/" + s.broker, "KRaft metadata log diverged", "__cluster_metadata-0", s.claim(0)} {
		if !strings.Contains(text, want) {
			t.Errorf("the diagnosis does not mention %q:\n%s", want, text)
		}
	}
	if ids := actionIDs(t, m.Blocks); !slices.Contains(ids, actionApprove) {
		t.Fatalf("the diagnosis offers %v, want Approve:\n%s", ids, text)
	}

	approved := click(t, m, actionApprove, approver)
	waitThread(t, m, "approved", time.Minute)
	if th := env.emu.Thread(m.Channel, m.TS); len(th) > 0 {
		measure(t, "approve to first thread message", slackTime(th[0].TS).Sub(approved))
	}
	th, summary, outcome := waitOutcome(t, m, 8*time.Minute)
	if !strings.Contains(summary, "Repair succeeded") {
		t.Fatalf("the repair did not succeed:\n%s", strings.Join(th, "\n---\n"))
	}
	done := slackTime(outcome.TS)

	// The cluster: a new broker pod (new UID), Ready; no debug pod left.
	now, err := s.pod(s.broker)
	if err != nil {
		t.Fatal(err)
	}
	if now.UID == old.UID || !kube.PodReady(now) {
		t.Errorf("%s after the repair: UID %s (was %s), Ready %v", s.broker, now.UID, old.UID, kube.PodReady(now))
	}
	debug := pods.debugPods(s.broker)
	if len(debug) != 1 {
		t.Fatalf("%d debug pods ran, want 1", len(debug))
	}
	checkDebugPod(t, debug[0].pod, old, s.claim(0))
	if left := listDebugPods(t); len(left) != 0 {
		t.Errorf("debug pods left behind: %v", left)
	}

	// The volume on the node's disk: the metadata log moved to one backup
	// folder at the volume root, with its README; the broker rebuilt an empty
	// one; nothing else changed.
	backup := checkBackup(t, s)
	if !strings.Contains(summary, backup) {
		t.Errorf("the summary does not name the backup %s:\n%s", backup, summary)
	}

	checkEvents(t, s.broker)
	checkNoSecrets(t)

	// Measurements: the bot's own time and the kubelet's, and API requests.
	ready := pods.readyAt(s.broker, now.UID)
	total := ready.Sub(approved)
	debugRun := debug[0].finished.Sub(debug[0].added)
	restart := ready.Sub(pods.deletedAt(s.broker, old.UID))
	measure(t, "approve to broker Ready", total)
	measure(t, "  kubelet: debug pod created to its container finished", debugRun)
	measure(t, "  kubelet+StatefulSet: broker pod deleted to new pod Ready", restart)
	measure(t, "  bot (the rest)", total-debugRun-restart)
	reqs := botRequests(t, approved.Add(-time.Second), done.Add(time.Second))
	t.Logf("MEASURE API requests of the repair (approve to summary): %d: %s", len(reqs), summarize(reqs))
}

// waitFirstCrash returns when the broker's first container ended.
func (s *scenario) waitFirstCrash() time.Time {
	s.t.Helper()
	var at time.Time
	if err := waitFor(s.ctx(), 3*time.Minute, func() (bool, error) {
		p, err := s.pod(s.broker)
		if err != nil {
			return false, nil
		}
		for _, st := range p.Status.ContainerStatuses {
			if term := st.LastTerminationState.Terminated; term != nil {
				at = term.FinishedAt.Time
				return true, nil
			}
			if term := st.State.Terminated; term != nil {
				at = term.FinishedAt.Time
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		s.t.Fatalf("%s never crashed: %v", s.broker, err)
	}
	return at
}

// waitMessage waits for a top-level message in ch containing want.
func waitMessage(t *testing.T, ch, want string, timeout time.Duration) (slackemu.Message, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var found slackemu.Message
	err := env.emu.WaitFor(ctx, func() bool {
		for _, m := range env.emu.Messages(ch) {
			if strings.Contains(m.Text, want) || strings.Contains(string(m.Blocks), want) {
				found = m
				return true
			}
		}
		return false
	})
	return found, err == nil
}

// checkDebugPod checks the debug pod as the API server admitted it: the
// broker's image by digest, the broker's uid/gid/fsGroup, locked down, on the
// broker's node, on the broker's claim.
func checkDebugPod(t *testing.T, p *corev1.Pod, broker *corev1.Pod, claim string) {
	t.Helper()
	c := p.Spec.Containers[0]
	if want := env.images[brokerImageName]; !strings.HasSuffix(c.Image, "@"+want.ManifestDigest) {
		t.Errorf("the debug pod runs %s, want the broker's image by digest %s", c.Image, want.ManifestDigest)
	}
	if p.Spec.NodeName != "" && p.Spec.NodeName != broker.Spec.NodeName {
		t.Errorf("the debug pod ran on %s, the broker on %s", p.Spec.NodeName, broker.Spec.NodeName)
	}
	if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
		t.Error("the debug pod mounts a ServiceAccount token")
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil ||
		!slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("the debug container is not locked down: %+v", sc)
	}
	claims := 0
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			claims++
		}
	}
	if claims != 1 {
		t.Errorf("the debug pod mounts the broker's claim %d times", claims)
	}
}

// checkBackup checks the volume after a metadata-log move and returns the
// backup folder's name.
func checkBackup(t *testing.T, s *scenario) string {
	t.Helper()
	entries, err := os.ReadDir(s.volume(0))
	if err != nil {
		t.Fatal(err)
	}
	var backups []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kafkabot-backup-") {
			backups = append(backups, e.Name())
		}
	}
	if len(backups) != 1 {
		t.Fatalf("want one backup folder at the volume root, found %v", backups)
	}
	b := backups[0]
	logDirName := s.layout.volumes[0].logDir
	moved := filepath.Join(s.volume(0), b, logDirName, "__cluster_metadata-0")
	for _, f := range []string{divergenceMarker, "00000000000057054787.log", "quorum-state"} {
		if _, err := os.Stat(filepath.Join(moved, f)); err != nil {
			t.Errorf("the backup lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.volume(0), b, "README.txt")); err != nil {
		t.Errorf("the backup has no README.txt: %v", err)
	}
	logDir := filepath.Join(s.volume(0), logDirName)
	if _, err := os.Stat(filepath.Join(logDir, "__cluster_metadata-0", divergenceMarker)); err == nil {
		t.Error("the diverged metadata log is still in the log dir")
	}
	for _, f := range []string{"meta.properties", "orders-0/00000000000000000000.log", "bootstrap.checkpoint", "__cluster_metadata-0"} {
		if _, err := os.Stat(filepath.Join(logDir, f)); err != nil {
			t.Errorf("%s is gone from the log dir: %v", f, err)
		}
	}
	return b
}

// checkEvents checks the Events the bot recorded on the broker pod.
func checkEvents(t *testing.T, pod string) {
	t.Helper()
	list, err := env.admin.CoreV1().Events(kafkaNS).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.ReportingController == kube.EventComponent || e.Source.Component == kube.EventComponent {
			reasons = append(reasons, e.Reason)
		}
	}
	if len(reasons) == 0 {
		t.Errorf("the bot recorded no Event on %s", pod)
	}
	t.Logf("the bot's Events on %s: %v", pod, reasons)
}

// checkNoSecrets scans the bot's logs and the Events for the Slack tokens and
// the approval secret.
func checkNoSecrets(t *testing.T) {
	t.Helper()
	logs, err := env.run(context.Background(), "-n", botNS, "logs", "-l", "app.kubernetes.io/name=kafkabot", "--tail=-1")
	if err != nil {
		t.Fatalf("reading the bot's logs: %v", err)
	}
	events, err := env.run(context.Background(), "-n", kafkaNS, "get", "events", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"the bot's logs": logs, "the Events": events} {
		for name, secret := range map[string]string{"the app token": slackemu.DefaultAppToken, "the bot token": slackemu.DefaultBotToken, "the approval secret": approvalSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contain %s", what, name)
			}
		}
	}
}

// listDebugPods lists the bot's debug pods in the Kafka namespace.
func listDebugPods(t *testing.T) []string {
	t.Helper()
	list, err := env.admin.CoreV1().Pods(kafkaNS).List(context.Background(), metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedByBot})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}

// ---- a pod watch that timestamps what the test needs -------------------------

type podRecord struct {
	pod      *corev1.Pod // as first seen
	added    time.Time
	finished time.Time // first container termination seen
	// firstExit is the earliest container finishedAt the kubelet reported
	// (current or last termination state), 1 s resolution.
	firstExit time.Time
	ready     time.Time
	deleted   time.Time // deletionTimestamp or DELETED first seen
	// goValues is every value the debug pod's go annotation took, in the
	// order the watch saw them: the go signals the script could read,
	// complete even where the thread's checklist shows only the latest.
	goValues []string
}

type podWatch struct {
	mu   sync.Mutex
	pods map[types.UID]*podRecord
}

func watchPods(t *testing.T) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := env.admin.CoreV1().Pods(kafkaNS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pw := &podWatch{pods: map[types.UID]*podRecord{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			now := time.Now()
			pw.mu.Lock()
			r := pw.pods[p.UID]
			if r == nil {
				r = &podRecord{pod: p.DeepCopy(), added: now}
				pw.pods[p.UID] = r
			}
			for _, st := range p.Status.ContainerStatuses {
				if st.State.Terminated != nil && r.finished.IsZero() {
					r.finished = now
				}
				for _, term := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
					if term != nil && (r.firstExit.IsZero() || term.FinishedAt.Time.Before(r.firstExit)) {
						r.firstExit = term.FinishedAt.Time
					}
				}
			}
			if kube.PodReady(p) && r.ready.IsZero() {
				r.ready = now
			}
			if v := p.Annotations[recovery.AnnotationGo]; v != "" && (len(r.goValues) == 0 || r.goValues[len(r.goValues)-1] != v) {
				r.goValues = append(r.goValues, v)
			}
			if (ev.Type == watch.Deleted || p.DeletionTimestamp != nil) && r.deleted.IsZero() {
				r.deleted = now
			}
			pw.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return pw
}

// debugPods returns the records of the bot's debug pods for broker.
func (pw *podWatch) debugPods(broker string) []podRecord {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	var out []podRecord
	for _, r := range pw.pods {
		if r.pod.Labels[kube.LabelManagedBy] == kube.ManagedByBot && r.pod.Name == recovery.DebugPodName(broker) {
			c := *r
			c.goValues = slices.Clone(r.goValues)
			out = append(out, c)
		}
	}
	return out
}

func (pw *podWatch) readyAt(name string, uid types.UID) time.Time {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if r := pw.pods[uid]; r != nil && r.pod.Name == name {
		return r.ready
	}
	return time.Time{}
}

func (pw *podWatch) deletedAt(name string, uid types.UID) time.Time {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if r := pw.pods[uid]; r != nil && r.pod.Name == name {
		return r.deleted
	}
	return time.Time{}
}
