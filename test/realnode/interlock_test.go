// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// stayUpMarker and its companions are the broker stand-in's StayUpMarker
// control (test/realnode/cmd/broker-standin).
const (
	stayUpMarker = "kafkabot-test-stay-up"
	// stayUpFor is how long the stand-in runs: long enough for the debug
	// pod to be scheduled and started after the uncordon (a few seconds)
	// while the broker still runs.
	stayUpFor = 25 * time.Second
	// journalFile is the stand-in's JournalFile: every run's start and end.
	journalFile = "kafkabot-test-journal"
)

// TestBrokerRestartsInTheRepairWindow: the broker restarts by itself
// between the approval and the move (its back-off expired and, this time,
// it runs and becomes Ready for a while before it hits the divergence
// again). The interlock must hold: the bot gives the debug pod its go only
// once it has seen Kafka stopped again with the same pod UID, so the
// metadata log is never moved while the broker runs.
//
// The window is made a state, not a race: the node is cordoned at the
// approval so the debug pod stays Pending; the stand-in's StayUpMarker makes
// its next start run for stayUpFor; the node is uncordoned only once that
// start runs, so the debug pod's script is waiting for its go while Kafka
// runs. The test then checks that the window was really hit (the restart
// count rose past the one at the approval, the stand-in took the marker,
// the bot said it waits for Kafka to stop, and the debug pod had no go
// annotation while Kafka ran) and, on the real volume, that nothing moved
// while the stand-in ran: the stand-in watched its metadata log for the
// whole run and wrote what it saw, and the rename, seen from the host by
// inotify as it happened, came after the stand-in's run ended. Between the go and the rename the
// kubelet may restart the broker once more (see below): then the bot must
// say so, and the stand-in's journal of its runs must bear it out.
func TestBrokerRestartsInTheRepairWindow(t *testing.T) {
	s := newScenario(t, "window", bitnami, "100")
	s.writeVolumes("100", true)
	logDir := filepath.Join(s.volume(0), s.layout.volumes[0].logDir)
	writeOwned(t, filepath.Join(logDir, journalFile), "")
	pods := watchPods(t)
	s.deploy()
	base := s.waitCrashLoop(1)
	baseRestarts := kafkaStatus(t, base).RestartCount
	metaBefore := snapshot(t, filepath.Join(logDir, "__cluster_metadata-0"))
	rename := watchRename(t, logDir, "__cluster_metadata-0")

	setUnschedulable(t, true)
	t.Cleanup(func() { setUnschedulable(t, false) })
	m := diagnose(t, "diagnose "+kafkaNS+"/"+s.broker)
	click(t, m, actionApprove, approver)
	// Every gate passed and the debug pod exists (Pending): the bot waits
	// for its script to run before it looks at Kafka.
	waitThread(t, m, "⏳ Give the debug pod its go", 2*time.Minute)
	var debug []podRecord
	if err := waitFor(s.ctx(), 30*time.Second, func() (bool, error) {
		debug = pods.debugPods(s.broker)
		return len(debug) == 1, nil
	}); err != nil {
		t.Fatalf("%d debug pods, want 1", len(debug))
	}

	// The broker's next start stays up. Written after the gates, so the
	// approval saw a crash-looping broker whatever the back-off does.
	writeOwned(t, filepath.Join(logDir, stayUpMarker), strconv.Itoa(int(stayUpFor/time.Second))+"\n")
	var running *corev1.Pod
	if err := waitFor(s.ctx(), 3*time.Minute, func() (bool, error) {
		p, err := s.pod(s.broker)
		if err != nil {
			return false, nil
		}
		c, ok := kafkaStatusOf(p)
		if ok && c.State.Running != nil && c.RestartCount > baseRestarts && fileExists(filepath.Join(logDir, stayUpMarker+".taken")) {
			running = p
			return true, nil
		}
		return false, nil
	}); err != nil {
		t.Fatalf("the broker did not restart into its stay-up run: %v", err)
	}
	if running.UID != base.UID {
		t.Fatalf("the broker pod was recreated (UID %s, was %s): the window is a container restart", running.UID, base.UID)
	}
	runningRestarts := kafkaStatus(t, running).RestartCount
	t.Logf("the broker restarted by itself: restart count %d (was %d at the approval), running", runningRestarts, baseRestarts)

	// Let the debug pod run: its script waits for the go while Kafka runs.
	setUnschedulable(t, false)
	th := waitThread(t, m, "is running again", stayUpFor)
	if !strings.Contains(strings.Join(th, "\n"), "restart "+strconv.Itoa(int(runningRestarts))) {
		t.Errorf("the interlock's wait does not name restart %d:\n%s", runningRestarts, strings.Join(th, "\n---\n"))
	}
	// While Kafka runs: no go on the debug pod, nothing moved.
	dbg, err := s.pod(debug[0].pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	if v := dbg.Annotations[recovery.AnnotationGo]; v != "" {
		t.Errorf("the debug pod has its go (%q) while Kafka runs", v)
	}
	if now, err := s.pod(s.broker); err != nil || kafkaStatus(t, now).State.Running == nil || kafkaStatus(t, now).RestartCount != runningRestarts {
		t.Fatalf("the broker stopped before the test could look (%v): raise stayUpFor", err)
	}
	if got := snapshot(t, filepath.Join(logDir, "__cluster_metadata-0")); got != metaBefore {
		t.Errorf("the metadata log changed while Kafka runs:\nbefore:\n%s\nnow:\n%s", metaBefore, got)
	}

	th, summary, _ := waitOutcome(t, m, 5*time.Minute)
	all := strings.Join(th, "\n---\n")
	if !strings.Contains(summary, "Repair succeeded") {
		t.Fatalf("the repair did not succeed once Kafka stopped again:\n%s", all)
	}
	// The go names the restart count of the stay-up run (same UID), not
	// the one seen at the approval.
	goLine := regexp.MustCompile(`is (?:waiting|terminated)[^\n]*\(restart count (\d+), same pod UID\): go given`).FindStringSubmatch(all)
	if goLine == nil {
		t.Errorf("no go line in the thread:\n%s", all)
	} else if n, _ := strconv.Atoi(goLine[1]); int32(n) < runningRestarts {
		t.Errorf("the go was given at restart count %d, before the stay-up run (%d)", n, runningRestarts)
	}

	// The stand-in's own account, from the real volume.
	report := readReport(t, filepath.Join(logDir, stayUpMarker+".report"))
	if report["present_throughout"] != "true" {
		t.Errorf("the stand-in saw its metadata log moved while it ran: %v", report)
	}
	ended, err := time.Parse(time.RFC3339Nano, report["ended"])
	if err != nil {
		t.Fatalf("the stand-in's report: %v", err)
	}
	checkBackup(t, s)
	renamed, renames, err := rename.renamed()
	switch {
	case err != nil:
		t.Fatalf("watching the log dir for the move: %v", err)
	case renames != 1:
		t.Fatalf("the metadata log was renamed out of the log dir %d times, want 1", renames)
	}
	if !renamed.After(ended) {
		t.Errorf("the metadata log was renamed at %s, before the stand-in's run ended at %s", renamed.Format(time.RFC3339Nano), ended.Format(time.RFC3339Nano))
	}
	t.Logf("stay-up run %s to %s; renamed %s after it ended", report["started"], report["ended"], renamed.Sub(ended).Round(time.Millisecond))

	// Between the go and the rename the kubelet may restart the broker
	// again: the script sees the go only when the kubelet refreshes the
	// downwardAPI volume (about a second in most runs, 62 s and 73 s in two
	// of seven), and a crash-looping broker's back-off can expire
	// meanwhile. The go therefore carries a deadline (the broker's exit
	// plus the kubelet's back-off, less a margin) and the script moves only
	// until then; after an expired go the bot gives a new one at Kafka's
	// next stop. From the stand-in's journal of its runs: a rename during a
	// run fails (whatever the thread says), a rename after the last go's
	// deadline fails, and so does an INTERLOCK warning without a run
	// started after the go's run.
	runs := readJournal(t, filepath.Join(logDir, journalFile))
	loud := strings.Contains(all, "⚠️ INTERLOCK")
	var during, restarted bool
	finalDebug := debug[0]
	if d := pods.debugPods(s.broker); len(d) == 1 {
		finalDebug = d[0]
	}
	finished := finalDebug.finished
	for _, r := range runs {
		if !r.start.After(renamed) && (r.end.IsZero() || r.end.After(renamed)) {
			during = true
		}
		if r.start.After(ended) && !finished.IsZero() && r.start.Before(finished) {
			restarted = true
		}
	}
	// The go signals as the debug pod's annotation took them (the watch
	// saw every value), not as the thread shows them: the checklist is
	// edited in place and may show only the latest interlock lines (CI once
	// hid a second go that way, behind "more steps not shown").
	var lastDeadline time.Time
	for _, v := range finalDebug.goValues {
		dot := strings.LastIndexByte(v, '.')
		sec, err := strconv.ParseInt(v[dot+1:], 10, 64)
		if dot < 0 || err != nil {
			t.Fatalf("the debug pod's go annotation %q is not <repair id>.<unix seconds>", v)
		}
		if d := time.Unix(sec, 0); d.After(lastDeadline) {
			lastDeadline = d
		}
	}
	resignals := max(len(finalDebug.goValues)-1, 0)
	switch {
	case lastDeadline.IsZero():
		t.Errorf("the debug pod never had a go annotation with a deadline:\n%s", all)
	case !renamed.Before(lastDeadline.Add(time.Second)):
		t.Errorf("the metadata log was renamed at %s, after the last go's deadline %s:\n%s", renamed.Format(time.RFC3339Nano), lastDeadline.Format(time.RFC3339), all)
	}
	switch {
	case during:
		t.Errorf("the metadata log was renamed at %s while the broker ran (journal %v; INTERLOCK warning: %v):\n%s", renamed.Format(time.RFC3339Nano), runs, loud, all)
	case loud && !restarted:
		t.Errorf("the bot warns INTERLOCK, but the broker's journal shows no start between its stay-up run and the debug pod's end (%v):\n%s", runs, all)
	case loud:
		t.Logf("the broker restarted after the move but before the bot saw the debug pod end; the bot said so: INTERLOCK")
	default:
		t.Logf("no broker run across the rename; %d new go(s) after an expired one; renamed %s, last deadline %s",
			resignals, renamed.Format(time.RFC3339Nano), lastDeadline.Format(time.RFC3339))
	}

	now, err := s.pod(s.broker)
	if err != nil {
		t.Fatal(err)
	}
	if now.UID == base.UID || !kube.PodReady(now) {
		t.Errorf("%s after the repair: UID %s (was %s), Ready %v", s.broker, now.UID, base.UID, kube.PodReady(now))
	}
}

// kafkaStatus is the status of the broker pod's Kafka container.
func kafkaStatus(t *testing.T, p *corev1.Pod) corev1.ContainerStatus {
	t.Helper()
	c, ok := kafkaStatusOf(p)
	if !ok {
		t.Fatalf("%s has no Kafka container status", p.Name)
	}
	return c
}

func kafkaStatusOf(p *corev1.Pod) (corev1.ContainerStatus, bool) {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == kube.KafkaContainerName(p) {
			return c, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// writeOwned writes a file on a volume as the broker's uid.
func writeOwned(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, kafkaUID, kafkaUID); err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readReport reads the stand-in's key=value report.
func readReport(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the stand-in wrote no report of its stay-up run: %v", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

// brokerRun is one run of the stand-in from its journal; end is zero when
// it has none (killed, or still running).
type brokerRun struct{ start, end time.Time }

func (r brokerRun) String() string {
	end := "-"
	if !r.end.IsZero() {
		end = r.end.Format("15:04:05.000")
	}
	return r.start.Format("15:04:05.000") + ".." + end
}

// readJournal reads the stand-in's journal of runs ("start <time>" and
// "end <time>" lines; runs of one pod do not overlap).
func readJournal(t *testing.T, path string) []brokerRun {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the stand-in's journal: %v", err)
	}
	var runs []brokerRun
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		what, at, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			t.Fatalf("the stand-in's journal: %q: %v", line, err)
		}
		switch {
		case what == "start":
			runs = append(runs, brokerRun{start: ts})
		case what == "end" && len(runs) > 0 && runs[len(runs)-1].end.IsZero():
			runs[len(runs)-1].end = ts
		}
	}
	if len(runs) == 0 {
		t.Fatal("the stand-in's journal records no run")
	}
	return runs
}

// freshBackOff waits for the broker's next crash and returns the pod once
// the kubelet holds it in CrashLoopBackOff again: the longest time before
// its next start.
func (s *scenario) freshBackOff() *corev1.Pod {
	s.t.Helper()
	cur, err := s.pod(s.broker)
	if err != nil {
		s.t.Fatal(err)
	}
	from := kafkaStatus(s.t, cur).RestartCount
	var pod *corev1.Pod
	if err := waitFor(s.ctx(), 3*time.Minute, func() (bool, error) {
		p, err := s.pod(s.broker)
		if err != nil {
			return false, nil
		}
		c, ok := kafkaStatusOf(p)
		if ok && c.RestartCount > from && c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff" {
			pod = p
			return true, nil
		}
		return false, nil
	}); err != nil {
		s.t.Fatalf("%s did not crash again after restart %d: %v", s.broker, from, err)
	}
	return pod
}
