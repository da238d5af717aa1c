// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// Lease annotations the restart scenario reads (written by internal/recovery).
const (
	leaseStateAnnotation = "kafkabot/state"
	leaseStepAnnotation  = "kafkabot/step"
)

// gatedBusybox is a busybox for kubesim whose shell, the debug pod's
// script, waits for the test to open a gate before it runs: it holds the
// debug pod between its start and its end for as long as the test needs.
// Every run is recorded, so a test can count how often the script ran.
type gatedBusybox struct {
	// path is the wrapper kubesim runs as its busybox.
	path string
	dir  string
}

// newGatedBusybox writes the wrapper: called through one of kubesim's
// applet links it runs that applet of the real busybox; called as
// `busybox sh …` (the debug pod's command) it records the run, waits for
// the gate file and then runs the shell.
func newGatedBusybox(t *testing.T) *gatedBusybox {
	t.Helper()
	real, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatalf("kubesim needs busybox (apt-get install busybox): %v", err)
	}
	g := &gatedBusybox{dir: t.TempDir()}
	g.path = filepath.Join(g.dir, "busybox-gated")
	script := `#!/bin/sh
real='` + real + `'
gate='` + g.dir + `'
case ${0##*/} in
busybox-gated)
	if [ "${1:-}" = sh ]; then
		echo run >>"$gate/runs"
		while [ ! -e "$gate/open" ]; do "$real" sleep 0.02; done
	fi
	exec "$real" "$@"
	;;
*) exec "$real" "${0##*/}" "$@" ;;
esac
`
	if err := os.WriteFile(g.path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// open lets every waiting and future run go on.
func (g *gatedBusybox) open(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runs is how many times the debug pod's shell was started.
func (g *gatedBusybox) runs(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(g.dir, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "run\n")
}

// TestRestartMidRepair: the bot is stopped (as by SIGTERM on a rollout)
// while the debug pod runs, between its start and its end. A new bot
// process of the same replica starts, finds the running repair in its
// Lease, announces itself in the same Slack thread, waits for the debug pod
// it did not create, and finishes the repair. The script ran once, and
// __cluster_metadata-0 was moved once, into one backup folder.
func TestRestartMidRepair(t *testing.T) {
	gate := newGatedBusybox(t)
	w := newWorld(t, "kafka-e2e-restart", worldOptions{busybox: gate.path})
	old, vol := w.seedCluster()
	before := readTree(t, vol)
	debugPods := w.recordDebugPods()
	first := w.startBot("kafkabot-0")

	m := w.diagnose("diagnose broker-0")
	w.click(m, actionApprove, approver)
	w.waitThread(m, "⏳ Wait for debug pod") // running, not only planned (⏸)
	testenv.WaitFor(t, "the debug pod's script to start", func(context.Context) (bool, error) {
		return gate.runs(t) == 1, nil
	})

	first.stop(t)

	// The stopped bot left the repair to its successor: the debug pod
	// still runs and the Lease says running, at the wait step.
	running := w.debugPods()
	if len(running) != 1 || running[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("after the bot stopped, want its debug pod still running, found %d pods %+v", len(running), podPhases(running))
	}
	lease := w.repairLease()
	if s := lease.Annotations[leaseStateAnnotation]; s != "running" {
		t.Fatalf("after the bot stopped, the repair lease is %q, want running", s)
	}
	// The script runs, waiting for its go signal (the interlock) or, with
	// the go given, for its move: either step may be the last one.
	if step := lease.Annotations[leaseStepAnnotation]; !strings.HasPrefix(step, "Wait for debug pod") && !strings.HasPrefix(step, "Give the debug pod its go") {
		t.Errorf("the lease records step %q, want the wait for the debug pod or its go", step)
	}

	w.startBot("kafkabot-0")
	// The new bot found the debug pod still running: it waits for the pod
	// it did not create rather than starting another.
	th := w.waitThread(m, "✅ Find the debug pod and the broker's state")
	if !threadHas(th, "is Running: reading its result when it finishes") {
		t.Errorf("the resumed repair did not find the running debug pod:\n%s", strings.Join(th, "\n---\n"))
	}
	gate.open(t)
	th = w.waitThread(m, "Repair succeeded")
	t.Logf("the thread:\n%s\nthe parent message:\n%s", strings.Join(th, "\n---\n"), blockTexts(t, w.message(m).Blocks))

	// Slack: one thread tells the whole story, in order.
	if missing := containsInOrder(th,
		"approved. Starting",
		"Create debug pod",
		"bot restarted during step \"", // the wait for the debug pod, or its go (the interlock)
		"Find the debug pod and the broker's state",
		"Read the repair script's result",
		"Moved ",
		"Restart "+seedBroker,
		"Watch the new "+seedBroker,
		"Repair succeeded: the broker is back",
	); missing != "" {
		t.Errorf("the thread lacks %q (in order); it reads:\n%s", missing, strings.Join(th, "\n---\n"))
	}
	if n := len(repairOutcome.FindAllString(strings.Join(th, "\n"), -1)); n != 1 {
		t.Errorf("the thread has %d repair summaries, want 1:\n%s", n, strings.Join(th, "\n---\n"))
	}
	if threadHas(th, "Already moved") {
		t.Errorf("the script reported an earlier move, but it ran only once:\n%s", strings.Join(th, "\n---\n"))
	}
	// The channel shows the diagnosis and, since the restarted bot cannot
	// rewrite the diagnosis message, the outcome broadcast from the thread.
	top := w.emu.Messages(channel)
	if len(top) != 2 || !top[1].Broadcast || !strings.Contains(top[1].Text, "Repair succeeded") {
		t.Errorf("the channel has %d top-level messages %+v, want the diagnosis and the broadcast outcome", len(top), top)
	}

	// Exactly once: one debug pod, one run of the script, one move.
	if n := gate.runs(t); n != 1 {
		t.Errorf("the repair script ran %d times, want 1", n)
	}
	checkOneDebugPod(t, w, debugPods)
	backup := checkMetadataLogMoved(t, vol, before)
	if n := readmeMoves(t, vol, backup); n != 1 {
		t.Errorf("the backup's README records %d moves, want 1", n)
	}
	checkBrokerReplaced(t, w, old)
	if s := w.repairLease().Annotations[leaseStateAnnotation]; s != "done" {
		t.Errorf("the repair lease ends %q, want done", s)
	}
}

// repairLease reads the seed broker's repair Lease as the admin.
func (w *world) repairLease() *coordinationv1.Lease {
	w.t.Helper()
	l, err := w.admin.CoordinationV1().Leases(w.ns).Get(w.ctx(), kube.RepairLeaseName(seedBroker), metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("reading the repair lease: %v", err)
	}
	return l
}

func podPhases(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+"="+string(p.Status.Phase))
	}
	return out
}
