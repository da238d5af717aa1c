// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fault lab's recordings of a torn recovery-point-offset-checkpoint
// (test/faultlab recipe torn-recovery-checkpoint: the last entry's offset
// cut off, as test/realnode's breakCheckpoint plants it), one per release;
// their manifests give the steps, the Java and the date.
var tornCheckpointVersions = []string{"3.7.2", "3.9.2", "4.0.2", "4.4.0"}

// haltedBroker is a broker pod whose Kafka container exited 1 (Kafka's
// halt) and is crash-looping, with log as its previous run's log.
func haltedBroker(log string) Snapshot {
	s := crashLooping(3, 1)
	s.Role, s.Log = RoleBroker, log
	return s
}

// TestTornCheckpointHaltIsAutomated: on every release the lab ran, the
// real crash of a torn recovery-point-offset-checkpoint (the log dir
// failure halt, the file named only by the LogDirFailureChannel error
// before it) gets move-checkpoint-file on that file, with the file's lines
// and the halt naming the log dir as evidence; so does the 4.4.0 crash
// with the real node's Bitnami log dir (docs/REALNODE.md quotes its lines).
func TestTornCheckpointHaltIsAutomated(t *testing.T) {
	logs := map[string]string{}
	for _, v := range tornCheckpointVersions {
		logs[v] = readLog(t, filepath.Join("testdata/faultlab", v, "torn-recovery-checkpoint.log"))
	}
	logs["4.4.0 in /bitnami/kafka/data"] = strings.ReplaceAll(logs["4.4.0"], tornDir, "/bitnami/kafka/data")
	for name, log := range logs {
		t.Run(name, func(t *testing.T) {
			got := Default().Diagnose(haltedBroker(log))
			if len(got) == 0 || got[0].Class != "corrupt-checkpoint-file" {
				t.Fatalf("first finding %v, want corrupt-checkpoint-file", ruleIDs(got))
			}
			f := got[0]
			want := Remedy{Automated: true, Action: ActionMoveCheckpointFile, Target: "recovery-point-offset-checkpoint"}
			if f.Remedy.Automated != want.Automated || f.Remedy.Action != want.Action || f.Remedy.Target != want.Target {
				t.Fatalf("remedy %+v, want %+v\n%s", f.Remedy, want, f.Explanation)
			}
			evidence := strings.Join(f.Evidence, "\n")
			for _, w := range []string{"ERROR Error while reading checkpoint file /", "/recovery-point-offset-checkpoint (org.apache.kafka.storage.internals.log.LogDirFailureChannel)",
				"Malformed line in checkpoint file [", "ERROR Shutdown broker because all log dirs in /"} {
				if !strings.Contains(evidence, w) {
					t.Errorf("evidence lacks %q:\n%s", w, evidence)
				}
			}
			if !strings.Contains(f.Explanation, "halted because its only log dir /") {
				t.Errorf("the explanation does not say how the halt was tied to the file:\n%s", f.Explanation)
			}
		})
	}
}

// TestRecoveredCheckpointIsNotAutomated: where Kafka only WARNs about the
// recovery checkpoint and runs on (the lab's corrupt-recovery-checkpoint:
// an offset that is not a number, a NumberFormatException that never
// reaches the LogDirFailureChannel), nothing is offered to repair.
func TestRecoveredCheckpointIsNotAutomated(t *testing.T) {
	for _, v := range tornCheckpointVersions {
		t.Run(v, func(t *testing.T) {
			log := readLog(t, filepath.Join("testdata/faultlab", v, "corrupt-recovery-checkpoint.log"))
			if !strings.Contains(log, "resetting the recovery checkpoint to 0") {
				t.Fatal("the recording does not show Kafka resetting the recovery checkpoint")
			}
			for _, f := range Default().Diagnose(Snapshot{Role: RoleBroker, Log: log}) {
				if f.Remedy.Automated {
					t.Errorf("%s offers %s on a fault Kafka ran on from", f.Rule, f.Remedy.Action)
				}
			}
		})
	}
}

// The 4.4.0 recording's log dir and lines, which the cases below change.
const (
	tornDir      = "/tmp/faultlab-1304919252/4.4.0/node01/broker-data"
	tornFile     = tornDir + "/recovery-point-offset-checkpoint"
	tornHalt     = "all log dirs in " + tornDir + " have failed"
	tornError    = "[2026-12-02 10:11:58,317] ERROR Error while reading checkpoint file " + tornFile + " (org.apache.kafka.storage.internals.log.LogDirFailureChannel)\n"
	tornCause    = "java.io.IOException: Malformed line in checkpoint file [" + tornFile + "]: orders 0\n"
	tornWarn     = "[2026-12-02 10:11:58,319] WARN Error occurred while reading recovery-point-offset-checkpoint file"
	tornAfter    = "[2026-12-02 10:11:58,357] INFO [BrokerServer id=2] Waiting for the initial broker metadata update"
	tornDirsLine = "[2026-12-02 10:11:58,519] INFO [LogDirFailureHandler]: Starting"
	dirFailure   = " (org.apache.kafka.storage.internals.log.LogDirFailureChannel)\n"
)

// cutRecord removes the record that starts with head and its continuation
// lines (up to the next line starting with "[2026-").
func cutRecord(t *testing.T, log, head string) string {
	t.Helper()
	i := strings.Index(log, head)
	if i < 0 {
		t.Fatalf("the recording has no record %q", head)
	}
	j := strings.Index(log[i+1:], "\n[2026-")
	return log[:i] + log[i+1+j+1:]
}

// insertBefore puts text in front of the line starting with head.
func insertBefore(t *testing.T, log, head, text string) string {
	t.Helper()
	i := strings.Index(log, head)
	if i < 0 {
		t.Fatalf("the recording has no line %q", head)
	}
	return log[:i] + text + log[i:]
}

// mustReplace replaces old by repl (n times, -1 for all) and fails when old is absent.
func mustReplace(t *testing.T, log, old, repl string, n int) string {
	t.Helper()
	if !strings.Contains(log, old) {
		t.Fatalf("the recording has no %q", old)
	}
	return strings.Replace(log, old, repl, n)
}

// TestCheckpointHaltTieMustBeUnambiguous: shapes close to the real 4.4.0
// crash, each one changed where the tie between the halt and the file is
// not certain. None may offer the move, and each is refused for its own
// reason (so loosening that one check makes its case fail).
func TestCheckpointHaltTieMustBeUnambiguous(t *testing.T) {
	base := readLog(t, "testdata/faultlab/4.4.0/torn-recovery-checkpoint.log")
	const other = "/var/lib/kafka/data-1"
	tests := []struct {
		name string
		edit func(t *testing.T, log string) string
		// why is a part of the refusal; "" when the rule must not fire.
		why string
	}{
		{"two log dirs failed, the error names one of them", func(t *testing.T, log string) string {
			return mustReplace(t, log, tornHalt, "all log dirs in "+tornDir+", "+other+" have failed", 1)
		}, "all of its 2 log dirs failed"},
		{"the halt names another log dir than the error", func(t *testing.T, log string) string {
			return mustReplace(t, log, tornHalt, "all log dirs in "+other+" have failed", 1)
		}, "not the file recovery-point-offset-checkpoint of the failed log dir " + other},
		{"the error is from an earlier run than the halt", func(t *testing.T, log string) string {
			return insertBefore(t, log, tornAfter, "[2026-12-02 10:12:30,000] INFO Registered `kafka:type=kafka.Log4jController` MBean (org.apache.kafka.server.logger.Log4jControllerRegistration)\n")
		}, "from an earlier run"},
		{"the error names a file outside the log dir", func(t *testing.T, log string) string {
			return mustReplace(t, log, tornFile, "/var/backup/recovery-point-offset-checkpoint", -1)
		}, "names /var/backup/recovery-point-offset-checkpoint, not the file"},
		{"the error's path has ..", func(t *testing.T, log string) string {
			return mustReplace(t, log, tornFile, tornDir+"/orders-0/../recovery-point-offset-checkpoint", -1)
		}, "orders-0/../recovery-point-offset-checkpoint, not the file"},
		{"the log dir's path has ..", func(t *testing.T, log string) string {
			return mustReplace(t, log, tornDir, "/tmp/faultlab-1304919252/4.4.0/node01/../node01/broker-data", -1)
		}, "is not a clean absolute path"},
		{"two checkpoint files malformed", func(t *testing.T, log string) string {
			second := strings.ReplaceAll(tornError+tornCause, "recovery-point-offset-checkpoint", "log-start-offset-checkpoint")
			return insertBefore(t, log, tornAfter, second)
		}, "more than one target"},
		{"a second checkpoint file short of entries", func(t *testing.T, log string) string {
			second := strings.ReplaceAll(tornError, "recovery-point-offset-checkpoint", "log-start-offset-checkpoint") +
				"java.io.IOException: Expected [2] entries in checkpoint file [" + tornDir + "/log-start-offset-checkpoint], but found only [1]\n"
			return insertBefore(t, log, tornAfter, second)
		}, "names " + tornDir + "/log-start-offset-checkpoint, not the file recovery-point-offset-checkpoint"},
		{"the error's cause is not a parse error", func(t *testing.T, log string) string {
			return mustReplace(t, log, tornError+tornCause, tornError+"java.nio.file.AccessDeniedException: "+tornFile+"\n", 1)
		}, "is not a parse error"},
		{"only the recovered warning, then the halt", func(t *testing.T, log string) string {
			return cutRecord(t, log, tornError)
		}, "no LogDirFailureChannel error in the last run"},
		{"only the recovered warning, then a halt for another reason", func(t *testing.T, log string) string {
			log = cutRecord(t, log, tornError)
			return insertBefore(t, log, tornDirsLine, "[2026-12-02 10:11:58,400] ERROR Error while writing to checkpoint file "+tornDir+"/replication-offset-checkpoint"+dirFailure+
				"java.io.IOException: No space left on device\n")
		}, "also failed for another reason"},
		{"the recovered warning, and Kafka runs on", func(t *testing.T, log string) string {
			log = cutRecord(t, log, tornError)
			i := strings.Index(log, tornDirsLine)
			return log[:i] + "[2026-12-02 10:11:59,000] INFO [KafkaRaftServer nodeId=2] Kafka Server started (kafka.server.KafkaRaftServer)\n"
		}, "no terminal event"},
		{"the halt without any checkpoint line", func(t *testing.T, log string) string {
			return cutRecord(t, cutRecord(t, log, tornError), tornWarn)
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := tc.edit(t, base)
			got := Default().Diagnose(haltedBroker(log))
			for _, f := range got {
				if f.Remedy.Automated {
					t.Errorf("%s offers %s on %q", f.Rule, f.Remedy.Action, f.Remedy.Target)
				}
			}
			f := findRule(got, "corrupt-checkpoint-file")
			switch {
			case tc.why == "" && f != nil:
				t.Errorf("corrupt-checkpoint-file fired without a checkpoint line: %v", f.Evidence)
			case tc.why == "":
			case f == nil:
				t.Fatalf("no corrupt-checkpoint-file finding: %v", ruleIDs(got))
			case !strings.Contains(f.Explanation, tc.why):
				t.Errorf("the refusal does not say %q:\n%s", tc.why, f.Explanation)
			}
			if tc.why == "" && !slices.ContainsFunc(got, func(f Finding) bool { return f.Class == "log-dir-offline" }) {
				t.Errorf("the halt alone is not diagnosed as log-dir-offline: %v", ruleIDs(got))
			}
		})
	}
}
