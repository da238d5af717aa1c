// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"strings"
	"testing"
)

// Regression tests for the diagnosis part of issue 12 (repair safety). Each
// is named after the item number. The logs are synthetic, built from
// the message text of Kafka's UnifiedLog.append (2.8 .. 4.x) and the seed
// incident's line layout.

// offsetLine writes an UnexpectedAppendOffsetException line for a partition.
func offsetLine(partition, first, next, start string) string {
	return "kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to " + partition +
		". First offset " + first + " is less than the next offset " + next +
		". First 10 offsets in append: List(" + first + "), last offset in append: 99999999. Log start offset = " + start + "\n"
}

const raftFatal = "[2025-04-28 08:22:01,792] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n"

// replicaFetcherError is how a follower reports the exception on a data
// partition (kafka.server.ReplicaFetcherThread), which is not fatal.
const replicaFetcherError = "[2025-04-28 08:21:00,000] ERROR [ReplicaFetcher replicaId=100, leaderId=101, fetcherId=0] Unexpected error occurred while processing data for partition orders-3 at offset 120 (kafka.server.ReplicaFetcherThread)\n"

func findRule(fs []Finding, id string) *Finding {
	for i := range fs {
		if fs[i].Rule == id {
			return &fs[i]
		}
	}
	return nil
}

// Item 1: the metadata rule must not fire on a data partition's error.
func TestSafety01_DataPartitionOffsetErrorIsNotMetadata(t *testing.T) {
	log := replicaFetcherError + offsetLine("orders-3", "100", "120", "50") +
		"\tat kafka.log.UnifiedLog.appendAsFollower(UnifiedLog.scala:682)\n"
	for _, role := range []Role{RoleBroker, RoleUnknown} {
		got := Default().Diagnose(Snapshot{Role: role, Log: log})
		if f := findRule(got, "metadata-log-offset-mismatch"); f != nil {
			t.Errorf("role %s: data partition orders-3 got the metadata rule (automated %v): %+v", role, f.Remedy.Automated, f.Evidence)
		}
	}
	// Even with the raft IO thread's fatal line elsewhere in the log, a
	// data partition's numbers are not the metadata log's.
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: raftFatal + offsetLine("orders-3", "100", "120", "50")})
	if f := findRule(got, "metadata-log-offset-mismatch"); f != nil && f.Remedy.Automated {
		t.Errorf("a raft fatal line plus a data-partition offset line offered the automated move: %+v", f)
	}
}

// Item 1: offsets are read from the __cluster_metadata-0 line only, so a
// preceding data-partition line cannot make an escalation look repairable.
func TestSafety01_OffsetsComeFromTheMetadataFatalLine(t *testing.T) {
	log := replicaFetcherError + offsetLine("orders-3", "100", "120", "50") +
		raftFatal + offsetLine("__cluster_metadata-0", "57876665", "57876669", "57876669")
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: log})
	f := findRule(got, "metadata-log-offset-mismatch")
	if f == nil {
		t.Fatalf("no metadata finding: %v", ruleIDs(got))
	}
	want := OffsetTriage{FirstOffset: 57876665, NextOffset: 57876669, LogStartOffset: 57876669}
	if f.Offsets == nil || *f.Offsets != want {
		t.Fatalf("offsets %+v, want the metadata line's %+v", f.Offsets, want)
	}
	if f.Remedy.Automated || f.Remedy.Action != "escalate" {
		t.Errorf("next == log start must escalate, got %+v", f.Remedy)
	}
}

// Item 1: the last fatal occurrence wins, and occurrences that disagree
// refuse the automated remedy.
func TestSafety01_LastOccurrenceWinsAndDisagreementRefuses(t *testing.T) {
	early := offsetLine("__cluster_metadata-0", "100", "120", "50")
	late := offsetLine("__cluster_metadata-0", "300", "320", "250")

	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: raftFatal + early + raftFatal + late})
	f := findRule(got, "metadata-log-offset-mismatch")
	if f == nil {
		t.Fatalf("no metadata finding: %v", ruleIDs(got))
	}
	want := OffsetTriage{FirstOffset: 300, NextOffset: 320, LogStartOffset: 250, LocalDivergence: true}
	if f.Offsets == nil || *f.Offsets != want {
		t.Errorf("offsets %+v, want the last occurrence's %+v", f.Offsets, want)
	}
	if f.Remedy.Automated {
		t.Errorf("two different offset sets must refuse the automated move: %+v", f.Remedy)
	}
	if !strings.Contains(f.Explanation, "different") {
		t.Errorf("explanation does not say the offset sets disagree: %s", f.Explanation)
	}

	// The same set twice (a restart that fails the same way) agrees.
	got = Default().Diagnose(Snapshot{Role: RoleBroker, Log: raftFatal + late + raftFatal + late})
	if f := findRule(got, "metadata-log-offset-mismatch"); f == nil || !f.Remedy.Automated {
		t.Errorf("a repeated identical offset set should keep the automated move: %+v", f)
	}
}

// Item 1: a metadata line whose offsets cannot all be read on that line or
// its continuation gets no automated move, even when another line has them.
func TestSafety01_IncompleteMetadataLineRefuses(t *testing.T) {
	log := raftFatal +
		"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 100 is less than the next offset 120.\n" +
		"[2025-04-28 08:22:02,000] INFO unrelated line (x)\n" +
		"[2025-04-28 08:22:03,000] INFO unrelated line (y)\n" +
		"Log start offset = 50\n"
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: log})
	f := findRule(got, "metadata-log-offset-mismatch")
	if f == nil {
		t.Fatalf("no metadata finding: %v", ruleIDs(got))
	}
	if f.Remedy.Automated {
		t.Errorf("offsets not on one line or its continuation must not be automated: %+v %+v", f.Offsets, f.Remedy)
	}
}

// With item 1 in place, the metadata line alone (no raft fatal line, no offsets) still
// names the class, with no automated move (the offsets are unknown).
func TestMetadataLineAloneIsRecognisedButManual(t *testing.T) {
	log := "org.apache.kafka.common.errors.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 5120 is less than the next offset 5121.\n"
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: log})
	if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" {
		t.Fatalf("first finding %v, want metadata-log-offset-mismatch", ruleIDs(got))
	}
	if got[0].Remedy.Automated || got[0].Offsets != nil {
		t.Errorf("without a log start offset the move must stay manual: %+v %+v", got[0].Offsets, got[0].Remedy)
	}
}

// Item 5 (log part): controller evidence in the log vetoes a broker label.
func TestSafety05_ControllerEvidenceInLogRefusesAutomation(t *testing.T) {
	seed := seedLog(t)
	cases := []struct{ name, prefix string }{
		{"process.roles lists controller", "\tprocess.roles = [broker, controller]\n"},
		{"process.roles is controller", "\tprocess.roles = controller\n"},
		{"Bitnami env var", "KAFKA_CFG_PROCESS_ROLES=controller,broker\n"},
		{"ControllerServer line", "[2025-04-28 08:21:59,000] INFO [ControllerServer id=100] Starting controller (kafka.server.ControllerServer)\n"},
		{"QuorumController line", "[2025-04-28 08:21:59,000] INFO [QuorumController id=100] Creating new QuorumController (org.apache.kafka.controller.QuorumController)\n"},
		{"controller listener", "[2025-04-28 08:21:59,000] INFO [SocketServer listenerType=CONTROLLER, nodeId=100] Enabling request processing. (kafka.network.SocketServer)\n"},
		{"broker roles line but ControllerServer too", "\tprocess.roles = [broker]\n[2025-04-28 08:21:59,000] INFO [ControllerServer id=100] Starting controller (kafka.server.ControllerServer)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: tc.prefix + seed})
			f := findRule(got, "metadata-log-offset-mismatch")
			if f == nil {
				t.Fatalf("no metadata finding: %v", ruleIDs(got))
			}
			if f.Remedy.Automated {
				t.Fatalf("pod labelled broker with controller evidence in the log got the automated move (role %s, source %q)", f.Role, f.RoleSource)
			}
			if !strings.Contains(f.Explanation, "controller") || !strings.Contains(f.RoleSource, "log") {
				t.Errorf("the finding does not say the log showed a controller: role source %q, explanation %s", f.RoleSource, f.Explanation)
			}
		})
	}
	// Broker-only evidence keeps the move.
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: "\tprocess.roles = [broker]\n\tcontroller.listener.names = CONTROLLER\n" + seed})
	if f := findRule(got, "metadata-log-offset-mismatch"); f == nil || !f.Remedy.Automated {
		t.Errorf("a broker-only log should keep the automated move: %+v", f)
	}
}

// Item 11: lost+found lives at the filesystem root (the log dir) and is
// root-owned 0700, so moving it as the broker's user cannot succeed.
func TestSafety11_LostAndFoundRemedyIsManual(t *testing.T) {
	rules, err := BuiltinRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if r.ID == "lost-and-found-dir" && r.Remedy.Automated != nil {
			t.Fatalf("lost-and-found-dir still has an automated remedy: %+v", r.Remedy.Automated)
		}
	}
	log := readLog(t, "testdata/crashlogs/21-lost-found-strimzi-gke.log")
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: log})
	if len(got) == 0 || got[0].Rule != "lost-and-found-dir" {
		t.Fatalf("first finding %v", ruleIDs(got))
	}
	if got[0].Remedy.Automated {
		t.Fatalf("lost+found got an automated remedy: %+v", got[0].Remedy)
	}
	if !strings.Contains(strings.Join(got[0].Remedy.Steps, " "), "root") {
		t.Errorf("the manual steps do not say why (root-owned, at the filesystem root): %v", got[0].Remedy.Steps)
	}
}

// Item 11: move-checkpoint-file says what it costs.
func TestSafety11_CheckpointMoveSaysWhatItCosts(t *testing.T) {
	log := readLog(t, "testdata/crashlogs/39-corrupt-checkpoint-malformed-line.log")
	got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: log})
	if len(got) == 0 || got[0].Rule != "corrupt-checkpoint-file" {
		t.Fatalf("first finding %v", ruleIDs(got))
	}
	f := got[0]
	if f.Risk == RiskLow || f.Risk == RiskNone {
		t.Errorf("risk %s understates moving a checkpoint file", f.Risk)
	}
	text := f.Explanation + " " + strings.Join(f.Remedy.Steps, " ")
	for _, want := range []string{"DeleteRecords", "retention", "full", "liveness"} {
		if !strings.Contains(text, want) {
			t.Errorf("the finding does not mention %q: %s", want, text)
		}
	}
}
