// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// testBackup is the backup folder name every script case uses.
const testBackup = "kafkabot-backup-20250428T082201Z-a1b2c3"

// shellRunner runs the script under one shell with one set of tools.
type shellRunner struct {
	name string
	// argv runs a script given as the last argument: e.g. busybox sh -c.
	argv []string
	// path is the PATH the script gets.
	path string
	// statCmd is how a test double reaches the real stat.
	statCmd string
	// shebang starts a test-double script for this runner.
	shebang string
	// cred, when set, runs the script as another user.
	cred *syscall.Credential
}

// inCI reports whether the tests run in CI, where a missing tool is a failure.
func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// busyboxRunner returns a runner for `busybox sh` whose PATH holds only
// busybox applets, so the script can use nothing else.
func busyboxRunner(t *testing.T) shellRunner {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		if inCI() {
			t.Fatalf("busybox is not installed (apt-get install -y busybox): the repair script must be tested under busybox sh in CI")
		}
		t.Skip("busybox is not installed; install it (apt-get install -y busybox) to run the repair script tests")
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	bin := worldReadableTempDir(t, "kafkabot-busybox-")
	for _, applet := range strings.Fields(string(out)) {
		if err := os.Symlink(bb, filepath.Join(bin, applet)); err != nil {
			t.Fatalf("linking applet %s: %v", applet, err)
		}
	}
	return shellRunner{
		name: "busybox", argv: []string{bb, "sh", "-c"}, path: bin,
		statCmd: bb + " stat", shebang: "#!" + bb + " sh",
	}
}

// systemShRunner returns a runner for the system's /bin/sh (dash on Debian)
// with the system's tools (coreutils, findutils), like the Bitnami and
// Strimzi images, or false when there is none.
func systemShRunner() (shellRunner, bool) {
	stat, err := exec.LookPath("stat")
	if err != nil {
		return shellRunner{}, false
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		return shellRunner{}, false
	}
	return shellRunner{
		name: "system-sh", argv: []string{"/bin/sh", "-c"}, path: "/usr/local/bin:/usr/bin:/bin",
		statCmd: stat, shebang: "#!/bin/sh",
	}, true
}

// scriptRun is one run of the script.
type scriptRun struct {
	exit   int
	output string
	result ScriptResult
	err    error // from ParseScriptResult
}

// run runs the script with env (and nothing else in its environment).
func (r shellRunner) run(t *testing.T, env map[string]string, extraPath string) scriptRun {
	t.Helper()
	path := r.path
	if extraPath != "" {
		path = extraPath + ":" + path
	}
	cmd := exec.Command(r.argv[0], append(slices.Clone(r.argv[1:]), Script)...)
	cmd.Env = []string{"PATH=" + path}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	run := scriptRun{output: out.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		run.exit = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running the script under %s: %v", r.name, err)
	}
	run.result, run.err = ParseScriptResult(run.output)
	return run
}

// fileTree is a snapshot of a directory tree: relative path -> kind, mode
// and content hash (or link target). Symlinks are recorded, not followed.
type fileTree map[string]string

// snapshotTree hashes every entry under root.
func snapshotTree(t *testing.T, root string) fileTree {
	t.Helper()
	tree := fileTree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree[rel] = "link " + target
		case d.IsDir():
			tree[rel] = fmt.Sprintf("dir %v", info.Mode().Perm())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			tree[rel] = fmt.Sprintf("file %v %d %s", info.Mode().Perm(), len(data), hex.EncodeToString(sum[:]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("hashing %s: %v", root, err)
	}
	return tree
}

// move is one expected rename, both paths relative to the mount root.
type move struct{ from, to string }

// expectAfter is the tree the script should leave: before, with each move's
// entries re-rooted. Directories the script creates for the backup and its
// README are checked separately.
func expectAfter(before fileTree, moves []move) fileTree {
	after := fileTree{}
	for rel, v := range before {
		after[rel] = v
	}
	for _, m := range moves {
		for rel, v := range before {
			if rel == m.from || strings.HasPrefix(rel, m.from+"/") {
				delete(after, rel)
				after[m.to+strings.TrimPrefix(rel, m.from)] = v
			}
		}
	}
	return after
}

// diffTrees describes how got differs from want, ignoring paths under skip.
func diffTrees(want, got fileTree, skip func(string) bool) string {
	var diffs []string
	for rel, w := range want {
		if g, ok := got[rel]; !ok {
			diffs = append(diffs, "missing "+rel)
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("changed %s: %s -> %s", rel, w, g))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok && !skip(rel) {
			diffs = append(diffs, "unexpected "+rel)
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "\n")
}

// writeFile writes data to root/rel, creating parents.
func writeFile(t testing.TB, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

// mkdir creates root/rel.
func mkdir(t testing.TB, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, rel), 0o750); err != nil {
		t.Fatal(err)
	}
}

// segmentBytes is deterministic filler standing in for segment data.
func segmentBytes(seed string, n int) string {
	var b strings.Builder
	for b.Len() < n {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s-%d", seed, b.Len())))
		b.Write(sum[:])
	}
	return b.String()[:n]
}

// metaProperties is a meta.properties as Kafka writes it.
func metaProperties(idKey, id, dirID string) string {
	return "#\n#Mon Apr 28 08:20:00 UTC 2025\n" + idKey + "=" + id + "\n" +
		"directory.id=" + dirID + "\nversion=1\ncluster.id=kJg2V9xTRAeZ3vjY0Qh5Mw\n"
}

// writeLogDir writes a KRaft log dir at root/rel for node id; withMetadata
// adds __cluster_metadata-0.
func writeLogDir(t testing.TB, root, rel, nodeID, dirID string, withMetadata bool) {
	t.Helper()
	writeFile(t, root, rel+"/meta.properties", metaProperties("node.id", nodeID, dirID))
	writeFile(t, root, rel+"/.lock", "")
	writeFile(t, root, rel+"/bootstrap.checkpoint", segmentBytes("bootstrap", 120))
	for _, cp := range []string{"recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint"} {
		writeFile(t, root, rel+"/"+cp, "0\n2\norders 0 4182\norders 1 3977\n")
	}
	writeFile(t, root, rel+"/cleaner-offset-checkpoint", "0\n0\n")
	for _, p := range []string{"orders-0", "orders-1"} {
		writeFile(t, root, rel+"/"+p+"/00000000000000000000.log", segmentBytes(p, 4096))
		writeFile(t, root, rel+"/"+p+"/00000000000000000000.index", segmentBytes(p+"i", 64))
		writeFile(t, root, rel+"/"+p+"/00000000000000000000.timeindex", segmentBytes(p+"t", 96))
		writeFile(t, root, rel+"/"+p+"/leader-epoch-checkpoint", "0\n1\n3 0\n")
		writeFile(t, root, rel+"/"+p+"/partition.metadata", "version: 0\ntopic_id: 7KdC1rJfQ9mQm3uZ1y1Q0w\n")
	}
	if withMetadata {
		md := rel + "/__cluster_metadata-0"
		writeFile(t, root, md+"/00000000000057054787.log", segmentBytes("md-log", 8192))
		writeFile(t, root, md+"/00000000000057054787.index", segmentBytes("md-index", 80))
		writeFile(t, root, md+"/00000000000057054787.timeindex", segmentBytes("md-time", 120))
		writeFile(t, root, md+"/00000000000057054787-0000000012.checkpoint", segmentBytes("md-snap", 2048))
		// The controllers are 0-2, or 3-5 when this node is one of 0-2
		// (Strimzi numbers its broker pool from 0 too).
		voters := `[{"voterId":0},{"voterId":1},{"voterId":2}]`
		if nodeID == "0" || nodeID == "1" || nodeID == "2" {
			voters = `[{"voterId":3},{"voterId":4},{"voterId":5}]`
		}
		writeFile(t, root, md+"/quorum-state", `{"leaderId":1,"leaderEpoch":12,"votedId":-1,"appliedOffset":0,"currentVoters":`+voters+`,"data_version":0}`)
		writeFile(t, root, md+"/leader-epoch-checkpoint", "0\n1\n12 57054787\n")
		writeFile(t, root, md+"/partition.metadata", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
	}
}

// The layouts below build a mount root m with the claims at m/<n>.

// bitnamiLayout: claim mounted at /bitnami/kafka, log dir data/, node 100,
// ext4's lost+found at the volume root (outside the log dir).
func bitnamiLayout(t *testing.T, m string) {
	mkdir(t, m, "0/lost+found")
	writeLogDir(t, m, "0/data", "100", "b0e4Cw8pT3yK1x0zJ2lX9g", true)
}

// strimziLayout: claim mounted at /var/lib/kafka/data, log dir kafka-log0.
func strimziLayout(t *testing.T, m string) {
	mkdir(t, m, "0/lost+found")
	writeLogDir(t, m, "0/kafka-log0", "0", "Q8Xv3kD1S2iV6mN0aP4rTg", true)
}

// strimziJBODLayout: two claims (data-0, data-1), metadata on the first.
func strimziJBODLayout(t *testing.T, m string) {
	writeLogDir(t, m, "0/kafka-log0", "0", "Q8Xv3kD1S2iV6mN0aP4rTg", true)
	writeLogDir(t, m, "1/kafka-log0", "0", "h2Zc5bN7R0eW1tY3uI9oPq", false)
}

// plainLayout: log.dirs is the mount itself (/var/lib/kafka/data), so
// lost+found sits inside the log dir.
func plainLayout(t *testing.T, m string) {
	mkdir(t, m, "0/lost+found")
	writeLogDir(t, m, "0", "3", "c3Vx9kD1S2iV6mN0aP4rTg", false)
}

// zkLayout: a ZooKeeper-mode broker: broker.id, no metadata log.
func zkLayout(t *testing.T, m string) {
	writeLogDir(t, m, "0/data", "7", "unused", false)
	writeFile(t, m, "0/data/meta.properties", "#\n#Mon Apr 28 08:20:00 UTC 2025\nbroker.id=7\nversion=0\ncluster.id=kJg2V9xTRAeZ3vjY0Qh5Mw\n")
}

// scriptCase is one table entry: a layout, inputs, and what must happen.
type scriptCase struct {
	name   string
	layout func(t *testing.T, m string)
	// env overrides the defaults (move-metadata-log, node 100, apply).
	env map[string]string
	// fakeDev and fakeFull name paths (relative to m) that the stat test
	// double reports on another filesystem / with no free space; used only
	// when a real tmpfs cannot be mounted (realFS).
	fakeDev, fakeFull string
	// realFS, when set, mounts a tmpfs to make the situation real; it
	// returns false when mounting is not possible here.
	realFS func(t *testing.T, m string) bool

	wantExit   int
	wantStatus string
	wantReason string
	moves      []move
	// wantSource/wantDest are the reported paths, relative to m.
	wantSource, wantDest string
	// measureToo is one more path counted in the reported size (an index's
	// time index).
	measureToo string
	// twice runs the script again and expects already-moved, tree unchanged.
	twice bool
	// failingMv replaces mv with a test double that fails.
	failingMv bool
	// makesBackupDir says the run may leave (empty) backup folders behind.
	makesBackupDir bool
	// readmeBlocked: the README cannot be written; the move must still count.
	readmeBlocked bool
	// noGo leaves out the go file (the bot gave no go signal).
	noGo bool
	// goLater writes the go file this long after the script starts.
	goLater time.Duration
	// goFirst, when set, is the go file's content at the start (default a
	// fresh go, or an empty file with goLater); goLaterValue is what
	// goLater writes (default a fresh go).
	goFirst, goLaterValue string
	// wantOutput are lines the script's output must contain.
	wantOutput []string
}

func defaultEnv(m string) map[string]string {
	return map[string]string{
		EnvAction:      diagnose.ActionMoveMetadataLog,
		EnvTarget:      "__cluster_metadata-0",
		EnvNodeID:      "100",
		EnvNodeIDCheck: "require",
		EnvMountRoot:   m,
		EnvBackupName:  testBackup,
		EnvMode:        ModeApply,
		EnvGoWant:      testGo,
		EnvGoWait:      "5",
	}
}

// testGo is the repair id every script case waits for (KB_GO_WANT), and
// testGoFresh the go the bot writes for it: the id and a deadline far in
// the future (unix seconds, 2286).
const (
	testGo      = "appr-0001"
	testGoFresh = testGo + ".9999999999"
)

// goWithDeadline is the go for testGo valid until now+d (seconds).
func goWithDeadline(d time.Duration) string {
	return fmt.Sprintf("%s.%d", testGo, time.Now().Add(d).Unix())
}

// writeGo writes the go file the bot's annotation would project into the
// debug pod, holding value.
func writeGo(t testing.TB, m, value string) {
	t.Helper()
	writeFile(t, m, "kafkabot-go/go", value)
}

func scriptCases() []scriptCase {
	bk := "0/" + testBackup
	metaMove := []move{{"0/data/__cluster_metadata-0", bk + "/data/__cluster_metadata-0"}}
	return []scriptCase{
		{
			name: "bitnami-moves-metadata-log-to-volume-root", layout: bitnamiLayout,
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "bitnami-second-run-is-already-moved", layout: bitnamiLayout, twice: true,
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "bitnami-check-mode-moves-nothing", layout: bitnamiLayout,
			env:        map[string]string{EnvMode: ModeCheck},
			wantStatus: StatusCheckOK,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "bitnami-wrong-node-id-refused", layout: bitnamiLayout,
			env:      map[string]string{EnvNodeID: "101"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNodeIDMismatch,
		},
		{
			name: "skipped-node-id-check-moves", layout: bitnamiLayout,
			env:        map[string]string{EnvNodeID: "", EnvNodeIDCheck: "skip"},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "empty-node-id-without-skip-refused", layout: bitnamiLayout,
			env:      map[string]string{EnvNodeID: ""},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput,
		},
		{
			name: "strimzi-moves-metadata-log", layout: strimziLayout,
			env:        map[string]string{EnvNodeID: "0"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/kafka-log0/__cluster_metadata-0", bk + "/kafka-log0/__cluster_metadata-0"}},
			wantSource: "0/kafka-log0/__cluster_metadata-0", wantDest: bk + "/kafka-log0/__cluster_metadata-0",
		},
		{
			name: "strimzi-jbod-moves-from-the-metadata-volume-only", layout: strimziJBODLayout,
			env:        map[string]string{EnvNodeID: "0"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/kafka-log0/__cluster_metadata-0", bk + "/kafka-log0/__cluster_metadata-0"}},
			wantSource: "0/kafka-log0/__cluster_metadata-0", wantDest: bk + "/kafka-log0/__cluster_metadata-0",
		},
		{
			name: "strimzi-jbod-two-metadata-logs-ambiguous",
			layout: func(t *testing.T, m string) {
				strimziJBODLayout(t, m)
				writeFile(t, m, "1/kafka-log0/__cluster_metadata-0/quorum-state", "{}")
			},
			env:      map[string]string{EnvNodeID: "0"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonAmbiguous,
		},
		{
			// Known limit: every log dir has its own checkpoint files.
			name: "strimzi-jbod-checkpoint-file-ambiguous", layout: strimziJBODLayout,
			env:      map[string]string{EnvNodeID: "0", EnvAction: diagnose.ActionMoveCheckpointFile, EnvTarget: "recovery-point-offset-checkpoint"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonAmbiguous,
		},
		{
			name: "log-dir-with-space-in-path",
			layout: func(t *testing.T, m string) {
				writeLogDir(t, m, "0/kafka data", "100", "s9Vx9kD1S2iV6mN0aP4rTg", true)
			},
			wantStatus: StatusMoved,
			moves:      []move{{"0/kafka data/__cluster_metadata-0", bk + "/kafka data/__cluster_metadata-0"}},
			wantSource: "0/kafka data/__cluster_metadata-0", wantDest: bk + "/kafka data/__cluster_metadata-0",
		},
		{
			name: "log-dir-with-non-ascii-and-percent-in-path",
			layout: func(t *testing.T, m string) {
				writeLogDir(t, m, "0/d\u00e4ta%41=x", "100", "s9Vx9kD1S2iV6mN0aP4rTg", true)
			},
			wantStatus: StatusMoved,
			moves:      []move{{"0/d\u00e4ta%41=x/__cluster_metadata-0", bk + "/d\u00e4ta%41=x/__cluster_metadata-0"}},
			wantSource: "0/d\u00e4ta%41=x/__cluster_metadata-0", wantDest: bk + "/d\u00e4ta%41=x/__cluster_metadata-0",
		},
		{
			name: "metadata-log-symlink-refused",
			layout: func(t *testing.T, m string) {
				writeLogDir(t, m, "0/data", "100", "b0e4Cw8pT3yK1x0zJ2lX9g", false)
				writeFile(t, m, "outside/md/quorum-state", "{}")
				if err := os.Symlink("../../outside/md", filepath.Join(m, "0/data/__cluster_metadata-0")); err != nil {
					t.Fatal(err)
				}
			},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonTargetIsSymlink,
		},
		{
			name: "index-in-symlinked-partition-escapes-refused",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeFile(t, m, "outside/orders-9/00000000000000000000.index", "x")
				if err := os.Symlink(filepath.Join(m, "outside/orders-9"), filepath.Join(m, "0/data/orders-9")); err != nil {
					t.Fatal(err)
				}
			},
			env:      map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "orders-9/00000000000000000000.index"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonTargetIsSymlink,
		},
		{
			name: "checkpoint-file-symlink-refused",
			layout: func(t *testing.T, m string) {
				writeLogDir(t, m, "0/data", "100", "b0e4Cw8pT3yK1x0zJ2lX9g", false)
				writeFile(t, m, "outside/cp", "0\n0\n")
				p := filepath.Join(m, "0/data/cleaner-offset-checkpoint")
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/etc/passwd", p); err != nil {
					t.Fatal(err)
				}
			},
			env:      map[string]string{EnvAction: diagnose.ActionMoveCheckpointFile, EnvTarget: "cleaner-offset-checkpoint"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonTargetIsSymlink,
		},
		{
			name: "cross-filesystem-refused",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
			},
			realFS: func(t *testing.T, m string) bool {
				// The log dir is its own filesystem: rename to the volume root
				// would fail with EXDEV and mv would copy and delete instead.
				if !mountTmpfs(t, filepath.Join(m, "0/data"), "8m") {
					return false
				}
				writeLogDir(t, m, "0/data", "100", "b0e4Cw8pT3yK1x0zJ2lX9g", true)
				return true
			},
			fakeDev:  "0/data",
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonCrossFilesystem,
		},
		{
			name:   "full-volume-refused",
			layout: bitnamiLayout,
			realFS: func(t *testing.T, m string) bool {
				if !mountTmpfs(t, filepath.Join(m, "0"), "1m") {
					return false
				}
				bitnamiLayout(t, m)
				fillUp(t, filepath.Join(m, "0/filler"))
				return true
			},
			fakeFull: "0",
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNoSpace,
		},
		{
			name: "failing-mv-is-an-error-not-a-refusal", layout: bitnamiLayout,
			failingMv: true, makesBackupDir: true,
			wantExit: 1, wantStatus: StatusError, wantReason: ReasonUnexpectedError,
		},
		{
			name: "unwritable-readme-still-moved", readmeBlocked: true,
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				mkdir(t, m, bk+"/README.txt") // a directory: the append fails
			},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "backup-destination-exists-refused", makesBackupDir: true,
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeFile(t, m, bk+"/data/__cluster_metadata-0/quorum-state", "{}")
			},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonDestinationExists,
		},
		{
			name: "not-found-refused", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "posthog"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNotFound,
		},
		{
			name:     "no-log-dir-refused",
			layout:   func(t *testing.T, m string) { mkdir(t, m, "0/lost+found") },
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNoLogDir,
		},
		{
			name: "foreign-dir-moved", layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeFile(t, m, "0/data/posthog/events.db", segmentBytes("posthog", 300))
			},
			env:        map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "posthog"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/data/posthog", bk + "/data/posthog"}},
			wantSource: "0/data/posthog", wantDest: bk + "/data/posthog",
		},
		{
			name: "lost-and-found-in-log-dir-moved", layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				mkdir(t, m, "0/data/lost+found")
			},
			env:        map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "lost+found"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/data/lost+found", bk + "/data/lost+found"}},
			wantSource: "0/data/lost+found", wantDest: bk + "/data/lost+found",
		},
		{
			name: "lost-and-found-when-log-dir-is-volume-root-refused", layout: plainLayout,
			env:      map[string]string{EnvNodeID: "3", EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "lost+found"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonLogDirIsVolumeRoot,
		},
		{
			name: "foreign-dir-that-is-a-file-refused", layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeFile(t, m, "0/data/notes.txt", "hello")
			},
			env:      map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "notes.txt"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonWrongType,
		},
		{
			name: "checkpoint-file-moved", layout: bitnamiLayout,
			env:        map[string]string{EnvAction: diagnose.ActionMoveCheckpointFile, EnvTarget: "recovery-point-offset-checkpoint"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/data/recovery-point-offset-checkpoint", bk + "/data/recovery-point-offset-checkpoint"}},
			wantSource: "0/data/recovery-point-offset-checkpoint", wantDest: bk + "/data/recovery-point-offset-checkpoint",
		},
		{
			name: "zookeeper-broker-id-checkpoint-moved", layout: zkLayout,
			env:        map[string]string{EnvNodeID: "7", EnvAction: diagnose.ActionMoveCheckpointFile, EnvTarget: "replication-offset-checkpoint"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/data/replication-offset-checkpoint", bk + "/data/replication-offset-checkpoint"}},
			wantSource: "0/data/replication-offset-checkpoint", wantDest: bk + "/data/replication-offset-checkpoint",
		},
		{
			name: "index-file-moved", layout: bitnamiLayout,
			env:        map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "orders-0/00000000000000000000.index"},
			wantStatus: StatusMoved,
			moves: []move{
				{"0/data/orders-0/00000000000000000000.index", bk + "/data/orders-0/00000000000000000000.index"},
				{"0/data/orders-0/00000000000000000000.timeindex", bk + "/data/orders-0/00000000000000000000.timeindex"},
			},
			wantSource: "0/data/orders-0/00000000000000000000.index", wantDest: bk + "/data/orders-0/00000000000000000000.index",
			measureToo: "0/data/orders-0/00000000000000000000.timeindex",
		},
		// The script re-checks its input even though the bot validated it.
		{name: "script-refuses-dotdot-target", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "../data"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-absolute-target", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "/orders-0/00000000000000000000.index"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-index-path-escape", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "orders-0/../../00000000000000000000.index"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-newline-target", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "posthog\ndata"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-partition-as-foreign-dir", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: diagnose.ActionMoveForeignDir, EnvTarget: "orders-0"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-backup-named-like-a-log-dir", layout: bitnamiLayout,
			env:      map[string]string{EnvBackupName: "data"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-shell-metacharacters", layout: bitnamiLayout,
			env:      map[string]string{EnvNodeID: "100;touch /tmp/kafkabot-pwned"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
		{name: "script-refuses-unknown-action", layout: bitnamiLayout,
			env:      map[string]string{EnvAction: "delete-everything"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput},
	}
}

// mountTmpfs mounts a tmpfs of size at dir (root only) and unmounts it when
// the test ends; false when this machine does not allow it, or when
// KAFKABOT_TEST_NO_MOUNT is set (to exercise the stat test double).
func mountTmpfs(t *testing.T, dir, size string) bool {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv("KAFKABOT_TEST_NO_MOUNT") != "" {
		return false
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("cannot mount a tmpfs (%v: %s)", err, bytes.TrimSpace(out))
		return false
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return true
}

// fillUp writes to path until the filesystem is full.
func fillUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			return
		}
	}
}

// statDouble writes a stat test double into a new bin dir: it reports the
// device of paths under devPath as 4242 and no free space under fullPath,
// and passes everything else to the real stat.
func statDouble(t *testing.T, r shellRunner, devPath, fullPath string) string {
	t.Helper()
	bin := t.TempDir()
	var s strings.Builder
	s.WriteString(r.shebang + "\n# test double for stat, see statDouble in script_test.go\n")
	if devPath != "" {
		fmt.Fprintf(&s, "if [ \"$1\" = -c ] && [ \"$2\" = %%d ]; then case $3 in %q|%q/*) echo 4242; exit 0 ;; esac; fi\n", devPath, devPath)
	}
	if fullPath != "" {
		fmt.Fprintf(&s, "if [ \"$1\" = -f ]; then case $4 in %q|%q/*) echo '0 4096'; exit 0 ;; esac; fi\n", fullPath, fullPath)
	}
	fmt.Fprintf(&s, "exec %s \"$@\"\n", r.statCmd)
	if err := os.WriteFile(filepath.Join(bin, "stat"), []byte(s.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// worldReadableTempDir returns a new directory that other users may enter
// (the script runs as the broker's uid in TestScriptAsBrokerUser); its path
// uses only characters the script accepts in a mount root.
func worldReadableTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// failingTool writes a test double for tool that fails like a real error
// would (message on stderr, exit status 1) and returns its bin dir.
func failingTool(t *testing.T, r shellRunner, tool string) string {
	t.Helper()
	bin := t.TempDir()
	script := r.shebang + "\necho \"" + tool + ": simulated failure\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// newMountRoot returns an empty mount root with a path the script accepts.
func newMountRoot(t *testing.T) string {
	t.Helper()
	return filepath.Join(worldReadableTempDir(t, "kafkabot-script-"), "kafka-data")
}

func TestScriptOnVolumeLayouts(t *testing.T) {
	runners := []shellRunner{busyboxRunner(t)}
	if sys, ok := systemShRunner(); ok {
		runners = append(runners, sys)
	}
	for _, r := range runners {
		t.Run(r.name, func(t *testing.T) {
			for _, tc := range scriptCases() {
				t.Run(tc.name, func(t *testing.T) { runScriptCase(t, r, tc) })
			}
		})
	}
}

func runScriptCase(t *testing.T, r shellRunner, tc scriptCase) {
	m := newMountRoot(t)
	mkdir(t, m, "")
	if !tc.noGo {
		v := testGoFresh
		if tc.goLater > 0 {
			v = "" // an annotation not set yet projects as an empty file
		}
		if tc.goFirst != "" {
			v = tc.goFirst
		}
		writeGo(t, m, v)
	}
	extraPath := ""
	if tc.realFS != nil && tc.realFS(t, m) {
		t.Log("using a real tmpfs mount")
	} else {
		tc.layout(t, m)
		if tc.fakeDev != "" || tc.fakeFull != "" {
			t.Log("no tmpfs mount possible here: simulating with a stat test double")
			dev, full := "", ""
			if tc.fakeDev != "" {
				dev = filepath.Join(m, tc.fakeDev)
			}
			if tc.fakeFull != "" {
				full = filepath.Join(m, tc.fakeFull)
			}
			extraPath = statDouble(t, r, dev, full)
		}
	}
	if tc.failingMv {
		extraPath = failingTool(t, r, "mv")
	}
	env := defaultEnv(m)
	for k, v := range tc.env {
		env[k] = v
	}
	before := snapshotTree(t, m)
	if tc.goLater > 0 {
		later := tc.goLaterValue
		if later == "" {
			later = testGoFresh
		}
		timer := time.AfterFunc(tc.goLater, func() {
			if err := os.WriteFile(filepath.Join(m, "kafkabot-go/go"), []byte(later), 0o640); err != nil {
				t.Errorf("writing the go file: %v", err)
			}
		})
		defer timer.Stop()
		before[filepath.Join("kafkabot-go", "go")] = "(written during the run)"
	}
	run := r.run(t, env, extraPath)
	if tc.goLater > 0 {
		after := snapshotTree(t, m)
		before[filepath.Join("kafkabot-go", "go")] = after[filepath.Join("kafkabot-go", "go")]
	}
	t.Logf("script output:\n%s", run.output)
	for _, want := range tc.wantOutput {
		if !strings.Contains(run.output, want) {
			t.Errorf("the output does not say %q", want)
		}
	}

	if run.exit != tc.wantExit {
		t.Fatalf("exit status %d, want %d", run.exit, tc.wantExit)
	}
	if run.err != nil {
		t.Fatalf("parsing the result line: %v", run.err)
	}
	if run.result.Status != tc.wantStatus || run.result.Reason != tc.wantReason {
		t.Fatalf("status=%s reason=%s, want status=%s reason=%s", run.result.Status, run.result.Reason, tc.wantStatus, tc.wantReason)
	}
	if strings.Count(run.output, ResultPrefix) != 1 {
		t.Errorf("want exactly one %s line", ResultPrefix)
	}
	if tc.wantSource != "" {
		if want := filepath.Join(m, tc.wantSource); run.result.Source != want {
			t.Errorf("source %q, want %q", run.result.Source, want)
		}
		if want := filepath.Join(m, tc.wantDest); run.result.Destination != want {
			t.Errorf("destination %q, want %q", run.result.Destination, want)
		}
		bytes, files := measureTree(before, tc.wantSource)
		if tc.measureToo != "" {
			b, f := measureTree(before, tc.measureToo)
			bytes, files = bytes+b, files+f
		}
		if run.result.Bytes != bytes || run.result.Files != files {
			t.Errorf("reported bytes=%d files=%d, want bytes=%d files=%d", run.result.Bytes, run.result.Files, bytes, files)
		}
	}

	after := snapshotTree(t, m)
	backupDir := "0/" + testBackup
	inBackupScaffold := func(rel string) bool {
		// Directories the script creates on the way to the destination, and its README.
		return rel == backupDir+"/README.txt" || (strings.HasPrefix(after[rel], "dir ") &&
			(rel == backupDir || strings.HasPrefix(rel, backupDir+"/")))
	}
	if diff := diffTrees(expectAfter(before, tc.moves), after, inBackupScaffold); diff != "" {
		t.Fatalf("tree after the run differs from the expected one:\n%s", diff)
	}
	readme := filepath.Join(m, backupDir, "README.txt")
	if tc.readmeBlocked {
		if !strings.Contains(run.output, "warning: could not write") {
			t.Error("no warning about the README")
		}
	} else if tc.wantStatus == StatusMoved {
		data, err := os.ReadFile(readme)
		if err != nil {
			t.Fatalf("backup README: %v", err)
		}
		for _, want := range []string{"action:    " + env[EnvAction], "undo:", "mv '" + testBackup + "/"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("README lacks %q:\n%s", want, data)
			}
		}
	} else if _, err := os.Stat(readme); err == nil && tc.wantStatus != StatusRefused {
		t.Errorf("%s run wrote %s", tc.wantStatus, readme)
	}
	if tc.wantStatus != StatusMoved {
		if _, err := os.Stat(filepath.Join(m, backupDir)); err == nil && !tc.makesBackupDir {
			t.Errorf("a %s run created the backup folder", tc.wantStatus)
		}
	}

	if tc.twice {
		again := r.run(t, env, extraPath)
		t.Logf("second run output:\n%s", again.output)
		if again.exit != 0 || again.err != nil || again.result.Status != StatusAlreadyMoved {
			t.Fatalf("second run: exit %d, status %q, err %v; want exit 0, %s", again.exit, again.result.Status, again.err, StatusAlreadyMoved)
		}
		if again.result.Destination != run.result.Destination || again.result.Bytes != run.result.Bytes {
			t.Errorf("second run reports %+v, first %+v", again.result, run.result)
		}
		if diff := diffTrees(after, snapshotTree(t, m), func(string) bool { return false }); diff != "" {
			t.Fatalf("second run changed the tree:\n%s", diff)
		}
	}
}

// measureTree sums the regular files at or under rel in a snapshot, the
// way the script measures what it moves.
func measureTree(tree fileTree, rel string) (int64, int) {
	var total int64
	files := 0
	for p, v := range tree {
		if p != rel && !strings.HasPrefix(p, rel+"/") {
			continue
		}
		var perm string
		var size int64
		if n, _ := fmt.Sscanf(v, "file %s %d", &perm, &size); n == 2 {
			files++
			total += size
		}
	}
	return total, files
}

func TestScriptNeverDeletesAndReadsOnlyItsInputs(t *testing.T) {
	// Nothing that removes files, evaluates text as code, or runs a command
	// from a string.
	forbidden := regexp.MustCompile("(^|[^A-Za-z0-9_-])(rm|rmdir|unlink|shred|truncate|eval|exec|source)([ \t]|$)|`|\\bdd\\b")
	devWrite := regexp.MustCompile(`>\s*/dev/([^\s;)|&]*)`)
	for i, line := range strings.Split(Script, "\n") {
		code, _, _ := strings.Cut(line, "#")
		if forbidden.MatchString(code) {
			t.Errorf("repair.sh:%d uses a forbidden construct: %s", i+1, line)
		}
		for _, m := range devWrite.FindAllStringSubmatch(code, -1) {
			if m[1] != "null" {
				t.Errorf("repair.sh:%d writes to a device: %s", i+1, line)
			}
		}
	}
	if !strings.Contains(Script, "\nset -eu\n") {
		t.Error("repair.sh must run with set -eu")
	}

	// Every KB_ variable the script reads is one Env produces, and it is read
	// only inside the input block, before which nothing else runs.
	env, err := ScriptInput{Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "1",
		MountRoot: DefaultMountRoot, BackupName: testBackup}.Env()
	if err != nil {
		t.Fatal(err)
	}
	provided := map[string]bool{}
	for _, e := range env {
		provided[e.Name] = true
	}
	start := strings.Index(Script, "# --- inputs:")
	end := strings.Index(Script, "# --- end of inputs")
	if start < 0 || end < start {
		t.Fatal("repair.sh lacks its input block markers")
	}
	kbRef := regexp.MustCompile(`\$\{?(KB_[A-Z_]+)`)
	for _, loc := range kbRef.FindAllStringSubmatchIndex(Script, -1) {
		name := Script[loc[2]:loc[3]]
		lineStart := strings.LastIndex(Script[:loc[0]], "\n") + 1
		if strings.HasPrefix(strings.TrimSpace(Script[lineStart:loc[0]]), "#") {
			continue // documentation
		}
		if !provided[name] {
			t.Errorf("repair.sh reads %s, which ScriptInput.Env never sets", name)
		}
		if loc[0] < start || loc[0] > end {
			t.Errorf("repair.sh reads %s outside its input block", name)
		}
	}
	// Everything Env sets is read by the script.
	for name := range provided {
		if !strings.Contains(Script[start:end], name) {
			t.Errorf("ScriptInput.Env sets %s but repair.sh never reads it", name)
		}
	}
}

func validInput() ScriptInput {
	return ScriptInput{
		Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "100",
		MountRoot: DefaultMountRoot, BackupName: testBackup,
	}
}

func TestScriptInputValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*ScriptInput)
		ok     bool
	}{
		{"metadata log", func(*ScriptInput) {}, true},
		{"lost+found", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "lost+found" }, true},
		{"nfs .snapshot", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, ".snapshot" }, true},
		{"checkpoint", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveCheckpointFile, "cleaner-offset-checkpoint"
		}, true},
		{"index", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "orders.eu_west-12/00000000000006911940.index"
		}, true},
		{"timeindex", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "orders-0/00000000000000000000.timeindex"
		}, true},
		{"skip node id", func(in *ScriptInput) { in.NodeID, in.SkipNodeIDCheck = "", true }, true},
		{"check only", func(in *ScriptInput) { in.CheckOnly = true }, true},

		{"unknown action", func(in *ScriptInput) { in.Action = "rm-rf" }, false},
		{"metadata other target", func(in *ScriptInput) { in.Target = "__cluster_metadata-1" }, false},
		{"foreign dotdot", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, ".." }, false},
		{"foreign dotdot slash", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "../etc" }, false},
		{"foreign absolute", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "/etc" }, false},
		{"foreign newline", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "a\nb" }, false},
		{"foreign space", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "a b" }, false},
		{"foreign command substitution", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "$(id)" }, false},
		{"foreign backtick", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "`id`" }, false},
		{"foreign semicolon", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "x;reboot" }, false},
		{"foreign glob", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "*" }, false},
		{"foreign quote", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "a'b" }, false},
		{"foreign fullwidth plus look-alike", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "lost\uff0bfound" }, false},
		{"foreign one-dot-leader look-alike", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "\u2024\u2024" }, false},
		{"foreign is a partition", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "orders-0" }, false},
		{"foreign is a deleted partition", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveForeignDir, "orders-0.0f1e2d3c4b5a69788796a5b4c3d2e1f0-delete"
		}, false},
		{"foreign is metadata", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveForeignDir, "__cluster_metadata-0" }, false},
		{"metadata cyrillic a look-alike", func(in *ScriptInput) { in.Target = "__cluster_met\u0430data-0" }, false},
		{"checkpoint meta.properties", func(in *ScriptInput) { in.Action, in.Target = diagnose.ActionMoveCheckpointFile, "meta.properties" }, false},
		{"checkpoint bootstrap", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveCheckpointFile, "bootstrap.checkpoint"
		}, false},
		{"index escape", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "../00000000000000000000.index"
		}, false},
		{"index nested escape", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "orders-0/../../00000000000000000000.index"
		}, false},
		{"index absolute", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "/orders-0/00000000000000000000.index"
		}, false},
		{"index log segment", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "orders-0/00000000000000000000.log"
		}, false},
		{"index fullwidth slash", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "orders-0\uff0f00000000000000000000.index"
		}, false},
		{"index arabic-indic digits", func(in *ScriptInput) {
			in.Action, in.Target = diagnose.ActionMoveIndexFiles, "orders-\u0660/00000000000000000000.index"
		}, false},
		{"empty node id", func(in *ScriptInput) { in.NodeID = "" }, false},
		{"negative node id", func(in *ScriptInput) { in.NodeID = "-1" }, false},
		{"node id injection", func(in *ScriptInput) { in.NodeID = "1;id" }, false},
		{"node id with skip", func(in *ScriptInput) { in.SkipNodeIDCheck = true }, false},
		{"relative mount root", func(in *ScriptInput) { in.MountRoot = "kafka-data" }, false},
		{"root mount root", func(in *ScriptInput) { in.MountRoot = "/" }, false},
		{"mount root dotdot", func(in *ScriptInput) { in.MountRoot = "/kafka-data/../etc" }, false},
		{"mount root trailing slash", func(in *ScriptInput) { in.MountRoot = "/kafka-data/" }, false},
		{"mount root space", func(in *ScriptInput) { in.MountRoot = "/kafka data" }, false},
		{"backup without prefix", func(in *ScriptInput) { in.BackupName = "data" }, false},
		{"backup slash", func(in *ScriptInput) { in.BackupName = "kafkabot-backup-20250428T082201Z/../x" }, false},
		{"backup dotdot", func(in *ScriptInput) { in.BackupName = ".." }, false},
		{"backup newline", func(in *ScriptInput) { in.BackupName = testBackup + "\nx" }, false},
		{"backup upper case", func(in *ScriptInput) { in.BackupName = "kafkabot-backup-20250428T082201Z-ABC" }, false},
		{"backup cyrillic look-alike", func(in *ScriptInput) { in.BackupName = "kafkabot-backup-20250428T082201Z-\u0430bc" }, false},
		{"backup space", func(in *ScriptInput) { in.BackupName = "kafkabot-backup-20250428T082201Z x" }, false},
		{"backup too long", func(in *ScriptInput) { in.BackupName = testBackup + "-" + strings.Repeat("a", 100) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := validInput()
			tc.modify(&in)
			err := in.Validate()
			if tc.ok && err != nil {
				t.Fatalf("Validate(%+v) = %v, want ok", in, err)
			}
			if !tc.ok && err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error", in)
			}
			if _, envErr := in.Env(); (envErr == nil) != tc.ok {
				t.Fatalf("Env error %v disagrees with Validate", envErr)
			}
		})
	}
}

func TestScriptInputEnv(t *testing.T) {
	in := validInput()
	in.CheckOnly = true
	env, err := in.Env()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range env {
		if e.ValueFrom != nil {
			t.Errorf("%s takes its value from elsewhere", e.Name)
		}
		got[e.Name] = e.Value
	}
	want := map[string]string{
		EnvAction: diagnose.ActionMoveMetadataLog, EnvTarget: "__cluster_metadata-0", EnvNodeID: "100",
		EnvNodeIDCheck: "require", EnvClusterID: "", EnvMountRoot: DefaultMountRoot, EnvBackupName: testBackup, EnvMode: ModeCheck,
		EnvGoWant: "", EnvGoWait: "",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Env = %v, want %v", got, want)
	}
	in.CheckOnly, in.NodeID, in.SkipNodeIDCheck = false, "", true
	env, err = in.Env()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range env {
		if (e.Name == EnvMode && e.Value != ModeApply) || (e.Name == EnvNodeIDCheck && e.Value != "skip") {
			t.Errorf("%s = %q", e.Name, e.Value)
		}
	}
}

func TestBackupName(t *testing.T) {
	at := time.Date(2025, 4, 28, 10, 22, 1, 0, time.FixedZone("CEST", 2*3600))
	tests := []struct{ id, want string }{
		{"a1b2c3", "kafkabot-backup-20250428T082201Z-a1b2c3"},
		{"", "kafkabot-backup-20250428T082201Z"},
		{"Approval/42: ../etc", "kafkabot-backup-20250428T082201Z-approval-42-etc"},
		{"\u0430\u0431\u0432", "kafkabot-backup-20250428T082201Z"}, // no ASCII letters survive
		{strings.Repeat("x", 200), "kafkabot-backup-20250428T082201Z-" + strings.Repeat("x", 100-len("kafkabot-backup-20250428T082201Z-"))},
	}
	for _, tc := range tests {
		got := BackupName(tc.id, at)
		if got != tc.want {
			t.Errorf("BackupName(%q) = %q, want %q", tc.id, got, tc.want)
		}
		if err := validateBackupName(got); err != nil {
			t.Errorf("BackupName(%q) = %q fails validation: %v", tc.id, got, err)
		}
	}
}

func FuzzBackupName(f *testing.F) {
	f.Add("a1b2c3", int64(1745828521))
	f.Add("--..//\n$(id)", int64(0))
	f.Fuzz(func(t *testing.T, id string, sec int64) {
		at := time.Unix(sec%(1<<35), 0) // within years 0..9999
		name := BackupName(id, at)
		if at.UTC().Year() < 10000 && at.UTC().Year() >= 0 {
			if err := validateBackupName(name); err != nil {
				t.Fatalf("BackupName(%q, %v) = %q: %v", id, at, name, err)
			}
		}
	})
}

func TestParseScriptResult(t *testing.T) {
	const moved = "kafkabot: moved\nKAFKABOT_RESULT v=1 status=moved action=move-foreign-dir reason= " +
		"source=/kafka-data/0/kafka%20data/lost%2Bfound destination=/kafka-data/0/kafkabot-backup-20250428T082201Z/kafka%20data/lost%2Bfound bytes=4096 files=3\n"
	got, err := ParseScriptResult(moved)
	if err != nil {
		t.Fatal(err)
	}
	want := ScriptResult{Status: StatusMoved, Action: diagnose.ActionMoveForeignDir,
		Source: "/kafka-data/0/kafka data/lost+found", Destination: "/kafka-data/0/kafkabot-backup-20250428T082201Z/kafka data/lost+found",
		Bytes: 4096, Files: 3}
	if got != want || !got.OK() || got.Explain() != "" {
		t.Errorf("ParseScriptResult = %+v (ok %v), want %+v", got, got.OK(), want)
	}

	refused, err := ParseScriptResult("kafkabot: REFUSED\r\nKAFKABOT_RESULT v=1 status=refused action=move-metadata-log reason=node-id-mismatch source= destination= bytes=0 files=0\r\n")
	if err != nil {
		t.Fatal(err)
	}
	if refused.OK() || refused.Reason != ReasonNodeIDMismatch || !strings.Contains(refused.Explain(), "another node") {
		t.Errorf("refused result = %+v, explain %q", refused, refused.Explain())
	}

	bad := map[string]string{
		"no line":         "kafkabot: hello\n",
		"two lines":       moved + moved,
		"bad escape":      "KAFKABOT_RESULT v=1 status=moved action=move-metadata-log reason= source=%zz destination=/x bytes=1 files=1",
		"no equals":       "KAFKABOT_RESULT v=1 status=moved action=move-metadata-log reason= source=/a destination=/b bytes=1 files=1 junk",
		"duplicate field": "KAFKABOT_RESULT v=1 status=moved status=refused action=move-metadata-log reason= source=/a destination=/b bytes=1 files=1",
		"wrong version":   "KAFKABOT_RESULT v=2 status=moved action=move-metadata-log reason= source=/a destination=/b bytes=1 files=1",
		"unknown status":  "KAFKABOT_RESULT v=1 status=deleted action=move-metadata-log reason= source=/a destination=/b bytes=1 files=1",
		"unknown action":  "KAFKABOT_RESULT v=1 status=moved action=rm-rf reason= source=/a destination=/b bytes=1 files=1",
		"no destination":  "KAFKABOT_RESULT v=1 status=moved action=move-metadata-log reason= source=/a destination= bytes=1 files=1",
		"refused no why":  "KAFKABOT_RESULT v=1 status=refused action=move-metadata-log reason= source= destination= bytes=0 files=0",
		"negative bytes":  "KAFKABOT_RESULT v=1 status=moved action=move-metadata-log reason= source=/a destination=/b bytes=-1 files=1",
		"missing files":   "KAFKABOT_RESULT v=1 status=moved action=move-metadata-log reason= source=/a destination=/b bytes=1",
		"prefix only":     "KAFKABOT_RESULTstatus=moved",
	}
	for name, log := range bad {
		if r, err := ParseScriptResult(log); err == nil {
			t.Errorf("%s: ParseScriptResult = %+v, want an error", name, r)
		}
	}
}

func FuzzParseScriptResult(f *testing.F) {
	f.Add("KAFKABOT_RESULT v=1 status=moved action=move-metadata-log reason= source=/a%20b destination=/c bytes=1 files=1")
	f.Add("KAFKABOT_RESULT v=1 status=refused action= reason=invalid-input source= destination= bytes=0 files=0")
	f.Fuzz(func(t *testing.T, log string) {
		r, err := ParseScriptResult(log)
		if err == nil && (r.Status == "" || r.Bytes < 0 || r.Files < 0) {
			t.Fatalf("accepted %q as %+v", log, r)
		}
	})
}

// chownTree gives every entry under root to uid:gid, like a volume written
// by the broker with fsGroup.
func chownTree(t *testing.T, root string, uid, gid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestScriptAsBrokerUser runs the script as the Bitnami broker's uid 1001,
// as the debug pod does, on a volume owned by that uid with ext4's
// root-only lost+found at its root.
func TestScriptAsBrokerUser(t *testing.T) {
	r := busyboxRunner(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the script as uid 1001 (the layout tests still cover the script)")
	}
	r.cred = &syscall.Credential{Uid: 1001, Gid: 1001}
	const uid, gid = 1001, 1001

	t.Run("moves-as-the-owner", func(t *testing.T) {
		m := newMountRoot(t)
		bitnamiLayout(t, m)
		writeGo(t, m, testGoFresh)
		chownTree(t, m, uid, gid)
		if err := os.Lchown(filepath.Join(m, "0/lost+found"), 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(m, "0/lost+found"), 0o700); err != nil {
			t.Fatal(err)
		}
		run := r.run(t, defaultEnv(m), "")
		t.Logf("output:\n%s", run.output)
		if run.exit != 0 || run.result.Status != StatusMoved {
			t.Fatalf("exit %d status %q (%v)", run.exit, run.result.Status, run.err)
		}
		info, err := os.Stat(filepath.Join(m, "0", testBackup))
		if err != nil {
			t.Fatal(err)
		}
		if st := info.Sys().(*syscall.Stat_t); st.Uid != uid || info.Mode().Perm() != 0o750 {
			t.Errorf("backup folder owned by %d with mode %v, want %d and 0750", st.Uid, info.Mode().Perm(), uid)
		}
	})
	t.Run("refuses-a-log-dir-it-cannot-write", func(t *testing.T) {
		m := newMountRoot(t)
		bitnamiLayout(t, m)
		writeGo(t, m, testGoFresh)
		chownTree(t, m, uid, gid)
		if err := os.Lchown(filepath.Join(m, "0/data"), 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(m, "0/data"), 0o755); err != nil {
			t.Fatal(err)
		}
		before := snapshotTree(t, m)
		run := r.run(t, defaultEnv(m), "")
		t.Logf("output:\n%s", run.output)
		if run.exit != 2 || run.result.Reason != ReasonNotWritable {
			t.Fatalf("exit %d reason %q, want 2 %s", run.exit, run.result.Reason, ReasonNotWritable)
		}
		if diff := diffTrees(before, snapshotTree(t, m), func(string) bool { return false }); diff != "" {
			t.Fatalf("tree changed:\n%s", diff)
		}
	})
}

// BenchmarkScriptCheckLargeBroker runs the script in check mode (which
// changes nothing, so every iteration sees the same tree) on a Bitnami
// volume with 2,000 partitions, to show the cost of finding the log dirs.
func BenchmarkScriptCheckLargeBroker(b *testing.B) {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		b.Skip("busybox is not installed")
	}
	dir, err := os.MkdirTemp("", "kafkabot-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	m := filepath.Join(dir, "kafka-data")
	writeLogDir(b, m, "0/data", "100", "b0e4Cw8pT3yK1x0zJ2lX9g", true)
	for p := range 2000 {
		part := filepath.Join(m, "0/data", fmt.Sprintf("events-%d", p))
		if err := os.MkdirAll(part, 0o750); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex", "leader-epoch-checkpoint", "partition.metadata"} {
			if err := os.WriteFile(filepath.Join(part, f), nil, 0o640); err != nil {
				b.Fatal(err)
			}
		}
	}
	env := defaultEnv(m)
	env[EnvMode] = ModeCheck
	r := shellRunner{name: "busybox", argv: []string{bb, "sh", "-c"}, path: "/usr/bin:/bin"}
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(r.argv[0], append(slices.Clone(r.argv[1:]), Script)...)
		cmd.Env = []string{"PATH=" + r.path}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		if res, err := ParseScriptResult(string(out)); err != nil || res.Status != StatusCheckOK {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
