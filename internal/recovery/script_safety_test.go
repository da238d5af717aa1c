// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// The on-disk checks of issue 12, each run under real busybox sh (and the
// system's sh when there is one) against a real directory tree.

// runScriptCases runs cases under every available shell.
func runScriptCases(t *testing.T, cases []scriptCase) {
	t.Helper()
	runners := []shellRunner{busyboxRunner(t)}
	if sys, ok := systemShRunner(); ok {
		runners = append(runners, sys)
	}
	for _, r := range runners {
		t.Run(r.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) { runScriptCase(t, r, tc) })
			}
		})
	}
}

// withQuorumState replaces the metadata log's quorum-state of the Bitnami
// layout (node 100) with qs.
func withQuorumState(qs string) func(t *testing.T, m string) {
	return func(t *testing.T, m string) {
		bitnamiLayout(t, m)
		writeFile(t, m, "0/data/__cluster_metadata-0/quorum-state", qs)
	}
}

// TestSafety05_ScriptRefusesWhenQuorumStateListsNodeAsVoter: whatever the
// pod's labels said, a node whose own quorum-state names it a voter is a
// controller, and the script refuses on disk. Before the fix it moved the
// metadata log of such a node.
func TestSafety05_ScriptRefusesWhenQuorumStateListsNodeAsVoter(t *testing.T) {
	bk := "0/" + testBackup
	metaMove := []move{{"0/data/__cluster_metadata-0", bk + "/data/__cluster_metadata-0"}}
	runScriptCases(t, []scriptCase{
		{
			name:     "voter-in-static-quorum-state",
			layout:   withQuorumState(`{"leaderId":1,"leaderEpoch":12,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":100},{"voterId":2}],"data_version":0}`),
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNodeIsVoter,
		},
		{
			name: "voter-with-directory-id-and-white-space",
			layout: withQuorumState("{\n  \"leaderId\": 1,\n  \"currentVoters\": [ {\"voterId\": 1}, {\"voterId\": 100, \"voterDirectoryId\": \"b0e4Cw8pT3yK1x0zJ2lX9g\"} ],\n" +
				"  \"data_version\": 1\n}\n"),
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNodeIsVoter,
		},
		{
			name:     "voter-on-a-non-metadata-action",
			layout:   withQuorumState(`{"currentVoters":[{"voterId":100}],"data_version":0}`),
			env:      map[string]string{EnvAction: diagnose.ActionMoveCheckpointFile, EnvTarget: "cleaner-offset-checkpoint"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNodeIsVoter,
		},
		{
			// 1000 and 10 are other nodes: only the exact id counts.
			name:       "other-ids-sharing-digits-are-not-this-node",
			layout:     withQuorumState(`{"leaderId":1000,"currentVoters":[{"voterId":1000},{"voterId":10},{"voterId":1001}],"data_version":0}`),
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			// No voter list and no Voters record: the role cannot be read
			// (issue 27: this moved before, as an "observer").
			name:     "no-voter-list-is-role-unknown",
			layout:   withQuorumState(`{"leaderId":1,"leaderEpoch":12,"votedId":-1,"currentVoters":null,"data_version":1}`),
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonRoleUnknown,
		},
	})
}

// TestSafety11_ScriptChecksClusterID: the approval text promises that the
// script checks meta.properties' cluster.id; before the fix it read only
// node.id, so a volume of another cluster with the same node id passed.
func TestSafety11_ScriptChecksClusterID(t *testing.T) {
	bk := "0/" + testBackup
	metaMove := []move{{"0/data/__cluster_metadata-0", bk + "/data/__cluster_metadata-0"}}
	const id = "kJg2V9xTRAeZ3vjY0Qh5Mw" // what metaProperties writes
	runScriptCases(t, []scriptCase{
		{
			name: "expected-cluster-id-moves", layout: bitnamiLayout,
			env:        map[string]string{EnvClusterID: id},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "volume-of-another-cluster-refused", layout: bitnamiLayout,
			env:      map[string]string{EnvClusterID: "p8fFEbKGQ22B6M_Da_vCBw"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonClusterIDMismatch,
		},
		{
			name: "log-dirs-of-two-clusters-refused",
			layout: func(t *testing.T, m string) {
				strimziJBODLayout(t, m)
				writeFile(t, m, "1/kafka-log0/meta.properties", "node.id=0\ndirectory.id=h2Zc5bN7R0eW1tY3uI9oPq\nversion=1\ncluster.id=p8fFEbKGQ22B6M_Da_vCBw\n")
			},
			env:      map[string]string{EnvNodeID: "0"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonClusterIDMismatch,
		},
		{
			name: "no-cluster-id-refused",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeFile(t, m, "0/data/meta.properties", "node.id=100\ndirectory.id=b0e4Cw8pT3yK1x0zJ2lX9g\nversion=1\n")
			},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonClusterIDMissing,
		},
		{
			name: "hostile-cluster-id-input-refused", layout: bitnamiLayout,
			env:      map[string]string{EnvClusterID: "x;rm -rf /"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput,
		},
	})
}

// TestSafety11_ScriptMovesIndexWithItsTimeIndex: the approval text says the
// named .index goes with its .timeindex; before the fix only the .index
// moved. A run that stopped between the two moves finishes the second.
func TestSafety11_ScriptMovesIndexWithItsTimeIndex(t *testing.T) {
	bk := "0/" + testBackup
	idx := "data/orders-0/00000000000000000000.index"
	tix := "data/orders-0/00000000000000000000.timeindex"
	env := map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "orders-0/00000000000000000000.index"}
	runScriptCases(t, []scriptCase{
		{
			name: "index-and-timeindex-moved", layout: bitnamiLayout, env: env, twice: true,
			wantStatus: StatusMoved,
			moves:      []move{{"0/" + idx, bk + "/" + idx}, {"0/" + tix, bk + "/" + tix}},
			wantSource: "0/" + idx, wantDest: bk + "/" + idx, measureToo: "0/" + tix,
		},
		{
			name: "timeindex-named-moves-the-index-too", layout: bitnamiLayout,
			env:        map[string]string{EnvAction: diagnose.ActionMoveIndexFiles, EnvTarget: "orders-0/00000000000000000000.timeindex"},
			wantStatus: StatusMoved,
			moves:      []move{{"0/" + idx, bk + "/" + idx}, {"0/" + tix, bk + "/" + tix}},
			wantSource: "0/" + tix, wantDest: bk + "/" + tix, measureToo: "0/" + idx,
		},
		{
			name: "interrupted-after-the-index-moves-the-timeindex",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				mkdir(t, m, bk+"/data/orders-0")
				if err := os.Rename(filepath.Join(m, "0", idx), filepath.Join(m, bk, idx)); err != nil {
					t.Fatal(err)
				}
			},
			env: env, wantStatus: StatusMoved,
			moves:      []move{{"0/" + tix, bk + "/" + tix}},
			wantSource: "0/" + tix, wantDest: bk + "/" + tix,
		},
		{
			name: "timeindex-symlink-refused-before-anything-moves",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeFile(t, m, "outside/x.timeindex", "x")
				p := filepath.Join(m, "0", tix)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(m, "outside/x.timeindex"), p); err != nil {
					t.Fatal(err)
				}
			},
			env:      env,
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonTargetIsSymlink,
		},
	})
}

// TestSafety12_ScriptSymlinkInBackupFolderDoesNotRedirectTheMove: a
// symbolic link planted inside an existing backup folder (the one a re-run
// reuses) would make mkdir -p and mv follow it out of the volume. Before the
// fix the metadata log was renamed through the link.
func TestSafety12_ScriptSymlinkInBackupFolderDoesNotRedirectTheMove(t *testing.T) {
	bk := "0/" + testBackup
	runScriptCases(t, []scriptCase{
		{
			name: "link-as-the-log-dir-folder",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				mkdir(t, m, bk)
				mkdir(t, m, "0/elsewhere")
				if err := os.Symlink("../elsewhere", filepath.Join(m, bk, "data")); err != nil {
					t.Fatal(err)
				}
			},
			makesBackupDir: true, // it was planted there before the run
			wantExit:       2, wantStatus: StatusRefused, wantReason: ReasonDestIsSymlink,
		},
		{
			name: "link-to-another-volume",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				mkdir(t, m, bk)
				mkdir(t, m, "outside")
				if err := os.Symlink(filepath.Join(m, "outside"), filepath.Join(m, bk, "data")); err != nil {
					t.Fatal(err)
				}
			},
			makesBackupDir: true, // it was planted there before the run
			wantExit:       2, wantStatus: StatusRefused, wantReason: ReasonDestIsSymlink,
		},
	})
}

// TestSafety04_ScriptMovesNothingWithoutTheGoSignal: the interlock's disk
// side. After every check the script waits (bounded) for the bot's go
// signal, which the bot gives only after seeing Kafka stopped; without it
// nothing moves. Before the fix the script moved at once, whatever Kafka
// was doing by then.
func TestSafety04_ScriptMovesNothingWithoutTheGoSignal(t *testing.T) {
	bk := "0/" + testBackup
	metaMove := []move{{"0/data/__cluster_metadata-0", bk + "/data/__cluster_metadata-0"}}
	runScriptCases(t, []scriptCase{
		{
			name: "no-go-file-refused", layout: bitnamiLayout, noGo: true,
			env:      map[string]string{EnvGoWait: "2"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNoGoSignal,
		},
		{
			name: "go-for-another-repair-refused",
			layout: func(t *testing.T, m string) {
				bitnamiLayout(t, m)
				writeGo(t, m, "appr-0002")
			},
			env:      map[string]string{EnvGoWait: "2"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNoGoSignal,
		},
		{
			name: "go-arriving-while-waiting-moves", layout: bitnamiLayout, goLater: 1500 * time.Millisecond,
			env:        map[string]string{EnvGoWait: "30"},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
		{
			name: "apply-without-go-input-refused", layout: bitnamiLayout,
			env:      map[string]string{EnvGoWant: ""},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonInvalidInput,
		},
		{
			name: "check-mode-needs-no-go", layout: bitnamiLayout, noGo: true,
			env:        map[string]string{EnvMode: ModeCheck, EnvGoWant: "", EnvGoWait: ""},
			wantStatus: StatusCheckOK,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
		},
	})
}

// TestSafety04_ScriptMovesOnlyBeforeTheGoDeadline: the go carries the
// deadline (unix seconds) until which the bot knows the broker's back-off
// keeps Kafka stopped; the kubelet may project the annotation into the pod
// long after it was set (62 s and 73 s seen on a real node). The script
// moves only while now <= deadline; an expired go is not a refusal of the
// repair: it waits for a newer go with a later deadline. Before the fix the
// script moved whenever the go arrived (and took no deadline: every case
// with one here was refused as no go at all).
func TestSafety04_ScriptMovesOnlyBeforeTheGoDeadline(t *testing.T) {
	bk := "0/" + testBackup
	metaMove := []move{{"0/data/__cluster_metadata-0", bk + "/data/__cluster_metadata-0"}}
	refusedNoGo := func(name, goValue string, output ...string) scriptCase {
		return scriptCase{
			name: name, layout: bitnamiLayout, goFirst: goValue,
			env:      map[string]string{EnvGoWait: "2"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNoGoSignal,
			makesBackupDir: true, wantOutput: output,
		}
	}
	first, second := time.Now().Add(-time.Minute).Unix(), time.Now().Add(-30*time.Second).Unix()
	runScriptCases(t, []scriptCase{
		refusedNoGo("expired-go-moves-nothing", goWithDeadline(-time.Minute),
			"the go expired", "nothing moved, waiting for a newer go", "no valid go signal within 2s"),
		refusedNoGo("go-expired-a-second-ago-moves-nothing", goWithDeadline(-time.Second), "the go expired"),
		refusedNoGo("bare-repair-id-without-deadline-refused", testGo),
		refusedNoGo("deadline-not-a-number-refused", testGo+".12ab"),
		refusedNoGo("negative-deadline-refused", testGo+".-1"),
		refusedNoGo("deadline-too-long-refused", testGo+".99999999999"),
		refusedNoGo("empty-deadline-refused", testGo+"."),
		refusedNoGo("deadline-with-a-newline-refused", testGo+".9999999999\nx"),
		refusedNoGo("another-repairs-fresh-go-refused", "appr-0002.9999999999"),
		refusedNoGo("id-prefix-only-refused", "appr-000.9999999999"),
		{
			name: "fresh-go-moves", layout: bitnamiLayout, goFirst: goWithDeadline(10 * time.Minute),
			env:        map[string]string{EnvGoWait: "30"},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
			wantOutput: []string{"go is valid until"},
		},
		{
			name:   "expired-go-then-newer-go-moves",
			layout: bitnamiLayout, goFirst: goWithDeadline(-time.Minute),
			goLater: 1500 * time.Millisecond, goLaterValue: goWithDeadline(10 * time.Minute),
			env:        map[string]string{EnvGoWait: "30"},
			wantStatus: StatusMoved, moves: metaMove,
			wantSource: "0/data/__cluster_metadata-0", wantDest: bk + "/data/__cluster_metadata-0",
			wantOutput: []string{"the go expired", "waiting for a newer go", "go is valid until"},
		},
		{
			// A re-signal that is itself already expired when it lands
			// does not move either: the wait goes on to its end.
			name:   "expired-go-then-another-expired-go-moves-nothing",
			layout: bitnamiLayout, goFirst: fmt.Sprintf("%s.%d", testGo, first),
			goLater: 1500 * time.Millisecond, goLaterValue: fmt.Sprintf("%s.%d", testGo, second),
			env:      map[string]string{EnvGoWait: "4"},
			wantExit: 2, wantStatus: StatusRefused, wantReason: ReasonNoGoSignal,
			makesBackupDir: true, wantOutput: []string{fmt.Sprintf("(deadline %d,", first), fmt.Sprintf("(deadline %d,", second)},
		},
	})
}
