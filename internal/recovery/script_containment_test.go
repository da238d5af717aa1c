// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// kraftVolume lays out a Bitnami-style volume (log dir 0/data) from a
// directory of real files Kafka wrote (testdata/kraft, see SOURCES.md):
// meta.properties in the log dir, the rest in __cluster_metadata-0, plus
// the files a log dir also holds. skip names files left out.
func kraftVolume(src string, skip ...string) func(t *testing.T, m string) {
	return func(t *testing.T, m string) {
		t.Helper()
		entries, err := os.ReadDir(filepath.Join("testdata", "kraft", src))
		if err != nil {
			t.Fatal(err)
		}
		mkdir(t, m, "0/lost+found")
		writeFile(t, m, "0/data/.lock", "")
		writeFile(t, m, "0/data/cleaner-offset-checkpoint", "0\n0\n")
	next:
		for _, e := range entries {
			for _, s := range skip {
				if e.Name() == s {
					continue next
				}
			}
			data, err := os.ReadFile(filepath.Join("testdata", "kraft", src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			rel := "0/data/__cluster_metadata-0/" + e.Name()
			if e.Name() == "meta.properties" {
				rel = "0/data/meta.properties"
			}
			writeFile(t, m, rel, string(data))
		}
	}
}

// TestContainment1_ScriptReadsTheRoleKafkaWrote (issue 27 item 1, review
// findings 1 and 13): the script reads the node's role from what Kafka
// itself wrote on the volume, in every version: a static quorum's
// quorum-state v0 (currentVoters), a dynamic quorum's (kraft.version=1,
// Kafka 3.9+) Voters control records in the bootstrap checkpoint and the
// metadata log, matched by node id and directory.id. A controller is
// refused; a node whose role cannot be read is refused; a broker moves.
// The files are real ones written by Kafka 3.9.2 and 4.4.0. Before the fix
// a dynamic-quorum controller's metadata log was moved (its quorum-state v1
// has no currentVoters), as were nodes with no readable role.
func TestContainment1_ScriptReadsTheRoleKafkaWrote(t *testing.T) {
	bk := "0/" + testBackup
	metaMove := []move{{"0/data/__cluster_metadata-0", bk + "/data/__cluster_metadata-0"}}
	moved := func(name, src, node string) scriptCase {
		return scriptCase{name: name, layout: kraftVolume(src), env: map[string]string{EnvNodeID: node},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0"}
	}
	refused := func(name string, layout func(*testing.T, string), node, reason string) scriptCase {
		return scriptCase{name: name, layout: layout, env: map[string]string{EnvNodeID: node},
			wantExit: 2, wantStatus: StatusRefused, wantReason: reason}
	}
	runScriptCases(t, []scriptCase{
		refused("4.4.0-dynamic-controller", kraftVolume("4.4.0-dynamic/controller"), "1", ReasonNodeIsVoter),
		refused("3.9.2-dynamic-controller", kraftVolume("3.9.2-dynamic/controller"), "1", ReasonNodeIsVoter),
		refused("4.4.0-static-controller", kraftVolume("4.4.0-static/controller"), "1", ReasonNodeIsVoter),
		// A controller added later has no bootstrap checkpoint: the Voters
		// record replicated into its log still names it.
		refused("dynamic-controller-voter-only-in-the-log",
			kraftVolume("4.4.0-dynamic/controller", "00000000000000000000-0000000000.checkpoint"), "1", ReasonNodeIsVoter),
		// Only the checkpoint (the log not written yet).
		refused("dynamic-controller-voter-only-in-the-bootstrap-checkpoint",
			kraftVolume("4.4.0-dynamic/controller", "00000000000000000000.log"), "1", ReasonNodeIsVoter),
		moved("4.4.0-dynamic-broker", "4.4.0-dynamic/broker", "2"),
		moved("3.9.2-dynamic-broker", "3.9.2-dynamic/broker", "2"),
		moved("4.4.0-static-broker", "4.4.0-static/broker", "2"),
		// The review's repro: quorum-state v1, nothing else says who votes.
		refused("quorum-state-v1-and-no-voters-record", func(t *testing.T, m string) {
			kraftVolume("4.4.0-dynamic/controller", "00000000000000000000-0000000000.checkpoint", "00000000000000000000.log")(t, m)
			writeFile(t, m, "0/data/__cluster_metadata-0/00000000000000000000.log", segmentBytes("md-log", 4096))
		}, "1", ReasonRoleUnknown),
		// An observer's empty currentVoters and no Voters record either.
		refused("empty-current-voters-and-no-voters-record",
			kraftVolume("4.4.0-dynamic/broker", "00000000000000000000.log"), "2", ReasonRoleUnknown),
		refused("no-quorum-state-and-no-voters-record", func(t *testing.T, m string) {
			kraftVolume("4.4.0-dynamic/broker", "00000000000000000000.log", "quorum-state")(t, m)
			mkdir(t, m, "0/data/__cluster_metadata-0")
		}, "2", ReasonRoleUnknown),
		// A dynamic quorum's voter with another directory id is another
		// incarnation: the node id alone does not make a broker a voter,
		// but without a directory.id nothing can be matched.
		refused("no-directory-id-in-meta-properties", func(t *testing.T, m string) {
			kraftVolume("4.4.0-dynamic/broker")(t, m)
			writeFile(t, m, "0/data/meta.properties", "node.id=2\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n")
		}, "2", ReasonRoleUnknown),
	})
}

// TestContainment6_ScriptClosesItsOwnGaps (issue 27 item 6, review finding
// 13): an unreadable quorum-state refuses (it failed open: "not a voter");
// a find error while measuring refuses (it under-counted and passed the
// free-space check). Before the fix both moved.
func TestContainment6_ScriptClosesItsOwnGaps(t *testing.T) {
	runScriptCases(t, []scriptCase{
		{
			name: "unreadable-quorum-state",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				qs := filepath.Join(m, "0/data/__cluster_metadata-0/quorum-state")
				if err := os.Remove(qs); err != nil {
					t.Fatal(err)
				}
				mkdir(t, m, "0/data/__cluster_metadata-0/quorum-state") // not a file: cannot be read as one
			},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonQuorumStateUnreadable,
		},
		{
			name: "dangling-quorum-state",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				qs := filepath.Join(m, "0/data/__cluster_metadata-0/quorum-state")
				if err := os.Remove(qs); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("gone", qs); err != nil {
					t.Fatal(err)
				}
			},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonQuorumStateUnreadable,
		},
	})
}

// toolRun runs the script once under r on a fresh mount root laid out by
// layout, with the go given, env over the defaults and the tool doubles
// (name -> script body after the shebang) first on PATH. It returns the
// run, the mount root and the tree before the run.
func toolRun(t *testing.T, r shellRunner, layout func(*testing.T, string), env map[string]string, goValue string, tools map[string]string) (scriptRun, string, fileTree) {
	t.Helper()
	m := newMountRoot(t)
	mkdir(t, m, "")
	writeGo(t, m, goValue)
	layout(t, m)
	bin := ""
	if len(tools) > 0 {
		bin = t.TempDir()
		for name, body := range tools {
			if err := os.WriteFile(filepath.Join(bin, name), []byte(r.shebang+"\n"+body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	e := defaultEnv(m)
	for k, v := range env {
		e[k] = v
	}
	before := snapshotTree(t, m)
	run := r.run(t, e, bin)
	t.Logf("script output:\n%s", run.output)
	return run, m, before
}

// realTool is how a test double under r reaches the real tool.
func realTool(t *testing.T, r shellRunner, tool string) string {
	t.Helper()
	if r.name == "busybox" {
		return r.argv[0] + " " + tool
	}
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("no %s for the %s runner: %v", tool, r.name, err)
	}
	return p
}

// scriptRunners are the shells every script test runs under.
func scriptRunners(t *testing.T) []shellRunner {
	runners := []shellRunner{busyboxRunner(t)}
	if sys, ok := systemShRunner(); ok {
		runners = append(runners, sys)
	}
	return runners
}

// wantRefusedUnchanged checks a refusal with reason and an unchanged tree
// (the go file aside).
func wantRefusedUnchanged(t *testing.T, run scriptRun, m string, before fileTree, reason string) {
	t.Helper()
	if run.exit != 2 || run.result.Status != StatusRefused || run.result.Reason != reason {
		t.Errorf("exit %d status=%s reason=%s, want exit 2 status=refused reason=%s", run.exit, run.result.Status, run.result.Reason, reason)
	}
	after := snapshotTree(t, m)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q -> %q", p, v, after[p])
		}
	}
}

// TestContainment6_MeasureRefusesOnFindErrors: the free-space check must
// not pass on an under-count: a find that fails while listing what would
// move (an unreadable directory) refuses. Before the fix find's status was
// ignored and the move went ahead.
func TestContainment6_MeasureRefusesOnFindErrors(t *testing.T) {
	for _, r := range scriptRunners(t) {
		t.Run(r.name, func(t *testing.T) {
			find := realTool(t, r, "find")
			run, m, before := toolRun(t, r, bitnamiLayout, nil, testGoFresh, map[string]string{
				// The real find, failing (as on an unreadable directory) when it
				// runs stat for the size of what would move.
				"find": find + ` "$@"; rc=$?` + "\n" + `case "$*" in *"-exec stat"*) echo "find: simulated: Permission denied" >&2; exit 1 ;; esac` + "\nexit $rc\n",
			})
			wantRefusedUnchanged(t, run, m, before, ReasonCannotMeasure)
		})
	}
}

// TestContainment6_CompanionMovesUnderTheSameDeadline: an index's time
// index is moved only while the go is still valid; when the deadline passes
// between the two renames the time index stays (a re-run with a new go
// moves it). Before the fix the second mv ran whatever the clock said.
func TestContainment6_CompanionMovesUnderTheSameDeadline(t *testing.T) {
	for _, r := range scriptRunners(t) {
		t.Run(r.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "first-mv-done")
			deadline := time.Now().Add(time.Hour).Unix()
			mv, date := realTool(t, r, "mv"), realTool(t, r, "date")
			run, m, _ := toolRun(t, r, bitnamiLayout,
				map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "orders-0/00000000000000000000.index"},
				fmt.Sprintf("%s.%d", testGo, deadline),
				map[string]string{
					// After the first rename the clock is past the go's deadline.
					"mv":   fmt.Sprintf("%s \"$@\" && : > %q\n", mv, marker),
					"date": fmt.Sprintf("if [ -e %q ] && [ \"$1\" = +%%s ]; then echo %d; exit 0; fi\nexec %s \"$@\"\n", marker, deadline+60, date),
				})
			if run.exit != 0 || run.result.Status != StatusMoved {
				t.Fatalf("exit %d status=%s reason=%s, want the index moved", run.exit, run.result.Status, run.result.Reason)
			}
			bk := filepath.Join(m, "0", testBackup, "data", "orders-0")
			if _, err := os.Stat(filepath.Join(bk, "00000000000000000000.index")); err != nil {
				t.Errorf("the index was not moved: %v", err)
			}
			if _, err := os.Stat(filepath.Join(m, "0/data/orders-0/00000000000000000000.timeindex")); err != nil {
				t.Errorf("the time index was moved after the go's deadline: %v", err)
			}
			if !strings.Contains(run.output, "stays") {
				t.Error("the output does not say the time index stays")
			}
		})
	}
}

// TestContainment6_AnotherMountOfTheFilesystemRefuses: a log dir on another
// mount of the volume's filesystem (a subPath or a nested bind mount: same
// st_dev) cannot be renamed into the backup (EXDEV), and mv would copy and
// delete instead. The script compares mount ids and refuses. It runs in a
// private mount namespace (unshare -rm) with the log dir bind-mounted onto
// itself. Before the fix equal st_dev passed and mv copied.
func TestContainment6_AnotherMountOfTheFilesystemRefuses(t *testing.T) {
	if out, err := exec.Command("unshare", "-rm", "true").CombinedOutput(); err != nil {
		if inCI() {
			t.Fatalf("unshare -rm (a private mount namespace) is not possible here: %v: %s", err, out)
		}
		t.Skipf("unshare -rm is not possible here: %v: %s", err, out)
	}
	for _, r := range scriptRunners(t) {
		t.Run(r.name, func(t *testing.T) {
			wrapped := r
			wrapped.argv = append([]string{"unshare", "-rm", "sh", "-c", `mount --bind "$1" "$1" && shift && exec "$@"`, "sh", ""}, r.argv...)
			m := newMountRoot(t)
			mkdir(t, m, "")
			wrapped.argv[6] = filepath.Join(m, "0/data")
			writeGo(t, m, testGoFresh)
			bitnamiLayout(t, m)
			before := snapshotTree(t, m)
			e := defaultEnv(m)
			cmd := exec.Command(wrapped.argv[0], append(slices.Clone(wrapped.argv[1:]), Script)...)
			cmd.Env = []string{"PATH=" + r.path + ":/usr/bin:/bin"}
			for k, v := range e {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			t.Logf("script output:\n%s", out)
			run := scriptRun{output: string(out)}
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				run.exit = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			run.result, run.err = ParseScriptResult(run.output)
			wantRefusedUnchanged(t, run, m, before, ReasonCrossFilesystem)
		})
	}
}

// TestContainment6_KafkasLockStopsTheMove: right before the rename the
// script checks that no Kafka holds the log dir: Kafka keeps an exclusive
// POSIX (fcntl) lock on <log dir>/.lock while it runs. Here the test
// process holds that lock, as a JVM's FileChannel.tryLock does (checked
// against a real Kafka 4.4.0 broker: flock(1) does not see that lock, a
// shared fcntl lock is denied), and the script, with python3 in the image,
// refuses. Without python, and with a java that cannot tell (see
// TestContainment6_JavaProbeSeesARealKafkasLock for one that can), it
// watches the metadata log for a second instead: a running KRaft node
// appends to it every half second. Before the fix the script moved under a
// running Kafka.
func TestContainment6_KafkasLockStopsTheMove(t *testing.T) {
	for _, r := range scriptRunners(t) {
		t.Run(r.name, func(t *testing.T) {
			hasPython := false
			for _, dir := range filepath.SplitList(r.path) {
				if _, err := os.Stat(filepath.Join(dir, "python3")); err == nil {
					hasPython = true
				}
			}
			layout := func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				if hasPython {
					holdPOSIXLock(t, filepath.Join(m, "0/data/.lock"))
					return
				}
				// No python: a running broker appends to its metadata log.
				seg := filepath.Join(m, "0/data/__cluster_metadata-0/00000000000057054787.log")
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						select {
						case <-stop:
							return
						case <-time.After(50 * time.Millisecond):
						}
						f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
						if err != nil {
							return // moved away: the test fails on the result
						}
						_, _ = f.Write([]byte("noop"))
						f.Close()
					}
				}()
				t.Cleanup(func() { close(stop); <-done })
			}
			var tools map[string]string
			if !hasPython {
				// A JVM that cannot start: the probe cannot tell, and its
				// class stays where the script wrote it (removed below).
				tools = map[string]string{"java": "echo 'Error occurred during initialization of VM' >&2; exit 1"}
				before := probeLeftovers(t)
				t.Cleanup(func() { removeNewProbeLeftovers(t, before) })
			}
			run, m, _ := toolRun(t, r, layout, nil, testGoFresh, tools)
			if !hasPython && (!strings.Contains(run.output, "java could not test the lock") || !strings.Contains(run.output, "was left behind")) {
				t.Errorf("the script did not say that java could not test the lock and left its probe:\n%s", run.output)
			}
			if run.exit != 2 || run.result.Status != StatusRefused || run.result.Reason != ReasonKafkaRunning {
				t.Errorf("exit %d status=%s reason=%s, want refused kafka-running", run.exit, run.result.Status, run.result.Reason)
			}
			if _, err := os.Stat(filepath.Join(m, "0/data/__cluster_metadata-0")); err != nil {
				t.Errorf("the metadata log was moved under a running Kafka: %v", err)
			}
		})
	}
}

// holdPOSIXLock makes another process hold an exclusive POSIX (fcntl) lock
// on path, as Kafka's JVM does on <log dir>/.lock, until the test ends. (Not
// this process: closing any descriptor of the file, as snapshotTree does,
// drops a process's POSIX locks.)
func holdPOSIXLock(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command("python3", "-c", `import fcntl, sys
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.read()`, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the lock holder: %v", err)
		}
	})
	line := make([]byte, 7)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "locked\n" {
		t.Fatalf("the lock holder did not take the lock: %q %v", line, err)
	}
}
