// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readIndex reads an INDEX.tsv and returns file -> value of column.
func readIndex(t *testing.T, path, column string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("opening index: %v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	col := slices.Index(rows[0], column)
	if col < 0 {
		t.Fatalf("%s has no column %q", path, column)
	}
	out := make(map[string]string, len(rows)-1)
	for _, row := range rows[1:] {
		out[row[0]] = row[col]
	}
	return out
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

func ruleIDs(fs []Finding) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.Rule + "/" + string(f.Severity)
	}
	return ids
}

func TestCrashLogsYieldTheirClassFirst(t *testing.T) {
	classes := readIndex(t, "testdata/crashlogs/INDEX.tsv", "failure_class")
	if len(classes) < 30 {
		t.Fatalf("INDEX.tsv lists %d crash logs, want at least 30", len(classes))
	}
	for file, class := range classes {
		t.Run(file, func(t *testing.T) {
			log := readLog(t, filepath.Join("testdata/crashlogs", file))
			got := Default().Diagnose(Snapshot{Log: log})
			if len(got) == 0 {
				t.Fatalf("no finding, want %s", class)
			}
			if got[0].Class != class {
				t.Fatalf("first finding %s (class %s), want %s (all: %v)", got[0].Rule, got[0].Class, class, ruleIDs(got))
			}
			if len(got[0].Evidence) == 0 {
				t.Errorf("finding %s quotes no evidence", class)
			}
			for _, ev := range got[0].Evidence {
				if !strings.Contains(log, ev) {
					t.Errorf("evidence %q is not a verbatim line of the log", ev)
				}
			}
		})
	}
}

func TestBenignLogsRaiseNoAlarm(t *testing.T) {
	kinds := readIndex(t, "testdata/benign/INDEX.tsv", "kind")
	if len(kinds) < 8 {
		t.Fatalf("benign INDEX.tsv lists %d logs, want at least 8", len(kinds))
	}
	for file := range kinds {
		t.Run(file, func(t *testing.T) {
			log := readLog(t, filepath.Join("testdata/benign", file))
			for _, f := range Default().Diagnose(Snapshot{Log: log}) {
				if severityRank(f.Severity) >= severityRank(SeverityHigh) {
					t.Errorf("healthy log raised %s (%s): %q", f.Rule, f.Severity, f.Evidence)
				}
			}
		})
	}
}

// failureClassIDs reads testdata/failure-class-ids.txt: the class column of
// the table in shared/kafka/failure-classes.md (second edition).
func failureClassIDs(t *testing.T) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(readLog(t, "testdata/failure-class-ids.txt"), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			ids = append(ids, line)
		}
	}
	return ids
}

func TestEveryFailureClassHasARule(t *testing.T) {
	ids := failureClassIDs(t)
	if len(ids) != 45 {
		t.Fatalf("the failure-classes table has 44 classes (37 + 7 of section G) and the list adds data-dir-read-only (issue 24), the list here %d", len(ids))
	}
	have := map[string]bool{}
	for _, r := range Default().Rules() {
		have[r.ClassID()] = true
	}
	for _, id := range ids {
		if !have[id] {
			t.Errorf("no rule for failure class %q", id)
		}
	}
	// And no rule claims a class the knowledge base does not have (the
	// only extra one is the status-only container-oom-killed, and the
	// catch-all unclassified-fatal).
	for class := range have {
		if !slices.Contains(ids, class) && class != "container-oom-killed" && class != "unclassified-fatal" {
			t.Errorf("rule class %q is not in failure-classes.md", class)
		}
	}
}

func TestEmbeddedRulesAreValidAndPrefiltered(t *testing.T) {
	rules, err := BuiltinRules()
	if err != nil {
		t.Fatalf("embedded rules: %v", err)
	}
	if ids := failureClassIDs(t); len(rules) < len(ids) {
		t.Fatalf("%d embedded rules, want at least %d", len(rules), len(ids))
	}
	// Default must not panic: it is what the bot calls at start.
	e := Default()
	// Every built-in pattern must carry a literal for the prefilter, or
	// the engine runs its regex on every line.
	for _, p := range e.always {
		cp := e.patterns[p]
		owner := "role detector"
		if cp.rule >= 0 {
			owner = e.rules[cp.rule].ID
		}
		t.Errorf("%s: pattern %q has no literal of %d+ bytes for the prefilter", owner, cp.re, minKeywordLen)
	}
}

// seedLog is the log of the seed incident (crash log 34).
func seedLog(t *testing.T) string {
	return readLog(t, "testdata/crashlogs/34-kraft-metadata-log-unexpected-append-offset.log")
}

func TestSeedIncidentOffsetsAndAutomationByRole(t *testing.T) {
	log := seedLog(t)
	want := OffsetTriage{FirstOffset: 57876665, NextOffset: 57876669, LogStartOffset: 57054787, LocalDivergence: true}
	cases := []struct {
		role      Role
		automated bool
		risk      Risk
	}{
		{RoleBroker, true, RiskLow},
		{RoleController, false, RiskHigh},
		{RoleCombined, false, RiskHigh},
		{RoleUnknown, false, RiskHigh},
		{RoleZooKeeper, false, RiskHigh},
	}
	for _, tc := range cases {
		t.Run(string(tc.role)+"-role", func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Role: tc.role, Log: log})
			if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" {
				t.Fatalf("first finding: %v", ruleIDs(got))
			}
			f := got[0]
			if f.Offsets == nil || *f.Offsets != want {
				t.Fatalf("offsets %+v, want %+v", f.Offsets, want)
			}
			if f.Remedy.Automated != tc.automated {
				t.Fatalf("automated = %v, want %v (remedy %+v)", f.Remedy.Automated, tc.automated, f.Remedy)
			}
			if f.Risk != tc.risk {
				t.Errorf("risk %s, want %s", f.Risk, tc.risk)
			}
			if f.Role != tc.role {
				t.Errorf("finding's role %q, want %q", f.Role, tc.role)
			}
			if tc.automated {
				if f.Remedy.Action != ActionMoveMetadataLog || f.Remedy.Target != "__cluster_metadata-0" {
					t.Errorf("remedy %s on %q, want %s on __cluster_metadata-0", f.Remedy.Action, f.Remedy.Target, ActionMoveMetadataLog)
				}
				return
			}
			if f.Remedy.Action == ActionMoveMetadataLog || len(f.Remedy.Steps) == 0 {
				t.Errorf("non-broker remedy must be a manual runbook, got %+v", f.Remedy)
			}
			if !strings.Contains(f.Explanation, "Not automated") {
				t.Errorf("explanation does not say why it is not automated: %s", f.Explanation)
			}
		})
	}
}

// The seed exception with next offset == log start offset. Synthetic: the
// seed incident's line with the log start offset changed.
const syntheticNextEqualsStart = `[2025-04-28 08:22:01,792] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)
kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 57876665 is less than the next offset 57876669. First 10 offsets in append: List(57876665, 57876666), last offset in append: 57912402. Log start offset = 57876669
`

func TestNextOffsetEqualToLogStartEscalates(t *testing.T) {
	for _, role := range []Role{RoleBroker, RoleController, RoleUnknown} {
		got := Default().Diagnose(Snapshot{Role: role, Log: syntheticNextEqualsStart})
		if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" {
			t.Fatalf("%s: first finding: %v", role, ruleIDs(got))
		}
		f := got[0]
		if f.Offsets == nil || f.Offsets.LocalDivergence || f.Offsets.NextOffset != f.Offsets.LogStartOffset {
			t.Fatalf("%s: offsets %+v, want next == log start and no local divergence", role, f.Offsets)
		}
		if f.Remedy.Automated || f.Remedy.Action != "escalate" {
			t.Errorf("%s: remedy %+v, want a manual escalation", role, f.Remedy)
		}
		if !strings.Contains(f.Explanation, "spreads the outage") || !strings.Contains(f.Explanation, "controllers") {
			t.Errorf("%s: explanation does not warn about the controllers / spreading: %s", role, f.Explanation)
		}
	}
}

func TestOffsetMismatchVariants(t *testing.T) {
	cases := []struct {
		name string
		log  string
	}{
		{"kafka 4.x class name (synthetic)", "ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
			"org.apache.kafka.common.errors.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 100 is less than the next offset 120. First 10 offsets in append: 100, 101, last offset in append: 300. Log start offset = 50\n"},
		{"journald prefix and #011 tabs (synthetic)", "Feb 21 10:00:00 host kafka[123]: [2025-02-21 10:00:00,000] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
			"Feb 21 10:00:00 host kafka[123]: kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 100 is less than the next offset 120. First 10 offsets in append: List(100), last offset in append: 300. Log start offset = 50\n" +
			"Feb 21 10:00:00 host kafka[123]: #011at kafka.raft.KafkaMetadataLog.appendAsFollower(KafkaMetadataLog.scala:99)\n"},
		{"message wrapped over two lines, CRLF (synthetic)", "ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\r\n" +
			"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 100 is less than the ne\r\n" +
			"xt offset 120. First 10 offsets in append: List(100), last offset in append: 300. Log start offset = 50\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: tc.log})
			if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" {
				t.Fatalf("first finding: %v", ruleIDs(got))
			}
			want := OffsetTriage{FirstOffset: 100, NextOffset: 120, LogStartOffset: 50, LocalDivergence: true}
			if got[0].Offsets == nil || *got[0].Offsets != want {
				t.Fatalf("offsets %+v, want %+v", got[0].Offsets, want)
			}
			if !got[0].Remedy.Automated {
				t.Errorf("broker with local divergence should be automated: %+v", got[0].Remedy)
			}
			for _, ev := range got[0].Evidence {
				if strings.HasSuffix(ev, "\r") {
					t.Errorf("evidence keeps a trailing CR: %q", ev)
				}
			}
		})
	}
}

func TestRoleInferredFromLog(t *testing.T) {
	cases := []struct {
		name      string
		prefix    string
		role      Role
		automated bool
	}{
		{"config dump says broker (synthetic)", "[2025-04-28 08:21:59,000] INFO KafkaConfig values: \n\tprocess.roles = [broker]\n", RoleBroker, true},
		{"config dump says combined (synthetic)", "\tprocess.roles = [broker, controller]\n", RoleCombined, false},
		{"BrokerServer lines only (synthetic)", "[2025-04-28 08:21:59,000] INFO [BrokerServer id=100] Starting broker (kafka.server.BrokerServer)\n", RoleBroker, true},
		{"ControllerServer lines (synthetic)", "[2025-04-28 08:21:59,000] INFO [ControllerServer id=0] Starting controller (kafka.server.ControllerServer)\n", RoleController, false},
		{"both server kinds (synthetic)", "INFO [ControllerServer id=1] Starting controller (kafka.server.ControllerServer)\nINFO [BrokerServer id=1] Starting broker (kafka.server.BrokerServer)\n", RoleCombined, false},
		{"nothing stated", "", RoleUnknown, false},
	}
	seed := seedLog(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Log: tc.prefix + seed})
			if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" {
				t.Fatalf("first finding: %v", ruleIDs(got))
			}
			f := got[0]
			if f.Role != tc.role || f.Remedy.Automated != tc.automated {
				t.Fatalf("role %q automated %v, want %q %v (source %q)", f.Role, f.Remedy.Automated, tc.role, tc.automated, f.RoleSource)
			}
			if tc.role != RoleUnknown && !strings.HasPrefix(f.RoleSource, "log: ") {
				t.Errorf("role source %q does not say it came from the log", f.RoleSource)
			}
			if !strings.Contains(f.Explanation, "Node role: "+string(tc.role)) && tc.role != RoleUnknown {
				t.Errorf("explanation does not name the role used: %s", f.Explanation)
			}
		})
	}
	// The pod's role wins over the log's.
	got := Default().Diagnose(Snapshot{Role: RoleController, Log: "\tprocess.roles = [broker]\n" + seed})
	if got[0].Remedy.Automated || got[0].Role != RoleController || got[0].RoleSource != "pod" {
		t.Errorf("pod role controller must win over the log: %+v", got[0])
	}
}

func kafkaPod(c ContainerState, events ...string) Snapshot {
	c.Name = "kafka"
	return Snapshot{KafkaContainer: "kafka", Containers: []ContainerState{c}, Events: events}
}

// recoveryLog is a synthetic startup cut short during log recovery.
const recoveryLog = `[2025-03-01 10:00:00,000] INFO Loading logs from log dirs ArrayBuffer(/var/lib/kafka/data) (kafka.log.LogManager)
[2025-03-01 10:00:00,100] INFO Attempting recovery for all logs in /var/lib/kafka/data since no clean shutdown file was found (kafka.log.LogManager)
[2025-03-01 10:00:05,000] INFO [LogLoader partition=orders-3, dir=/var/lib/kafka/data] Recovering unflushed segment 1200 (kafka.log.LogLoader)
`

func TestStatusOnlyFindings(t *testing.T) {
	oom := &Termination{Reason: "OOMKilled", ExitCode: 137}
	killed := &Termination{Reason: "Error", ExitCode: 137}
	cases := []struct {
		name  string
		snap  Snapshot
		log   string
		first string // "" means: no finding at all
	}{
		{"OOMKilled last state, empty log", kafkaPod(ContainerState{WaitingReason: "CrashLoopBackOff", LastTerminated: oom}), "", "container-oom-killed"},
		{"OOMKilled current state", kafkaPod(ContainerState{Terminated: oom}), "", "container-oom-killed"},
		// A pod that is not ready after a kill is sick: never silent (issue 13 item 5).
		{"exit 137 without OOMKilled is not OOM", kafkaPod(ContainerState{LastTerminated: killed}), "", UnclassifiedRule},
		{"recovery then exit 137", kafkaPod(ContainerState{LastTerminated: killed}), recoveryLog, "liveness-killed-during-recovery"},
		{"recovery then exit 143", kafkaPod(ContainerState{LastTerminated: &Termination{Reason: "Error", ExitCode: 143}}), recoveryLog, "liveness-killed-during-recovery"},
		{"recovery and a liveness event", kafkaPod(ContainerState{Running: true}, "Liveness probe failed: dial tcp 10.0.0.5:9092: connect: connection refused"), recoveryLog, "liveness-killed-during-recovery"},
		{"recovery, still running, no kill", kafkaPod(ContainerState{Running: true}), recoveryLog, ""},
		{"recovery then OOMKilled is OOM, not liveness", kafkaPod(ContainerState{LastTerminated: oom}), recoveryLog, "container-oom-killed"},
		{"recovery finished before the kill", kafkaPod(ContainerState{LastTerminated: killed}), recoveryLog + "[2025-03-01 10:09:00,000] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n", UnclassifiedRule},
		{"recovery finished, killed, ready again", kafkaPod(ContainerState{Ready: true, Running: true, LastTerminated: killed}), recoveryLog + "[2025-03-01 10:09:00,000] INFO [KafkaServer id=0] started (kafka.server.KafkaServer)\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.snap.Log = tc.log
			got := Default().Diagnose(tc.snap)
			if tc.first == "" {
				if len(got) > 0 {
					t.Fatalf("want no finding, got %v", ruleIDs(got))
				}
				return
			}
			if len(got) == 0 || got[0].Rule != tc.first {
				t.Fatalf("first finding %v, want %s", ruleIDs(got), tc.first)
			}
			if len(got[0].Evidence) == 0 {
				t.Errorf("no evidence quoted")
			}
			if got[0].Remedy.Automated {
				t.Errorf("a config problem must not be automated: %+v", got[0].Remedy)
			}
		})
	}
}

func TestRemedyTargets(t *testing.T) {
	cases := []struct {
		name      string
		log       string
		role      Role
		rule      string
		target    string
		automated bool
		severity  Severity
	}{
		// lost+found is root-owned at the filesystem root: manual (issue 12 item 11).
		{"lost+found", readLog(t, "testdata/crashlogs/21-lost-found-strimzi-gke.log"), RoleBroker, "lost-and-found-dir", "", false, SeverityHigh},
		{"kafka 3.3+ checkpoint message with brackets (synthetic, CheckpointFile.java wording)",
			startupFatal + "java.io.IOException: Malformed line in checkpoint file [/var/lib/kafka/data/kafka-log0/replication-offset-checkpoint]: orders 0\n",
			RoleBroker, "corrupt-checkpoint-file", "replication-offset-checkpoint", true, SeverityHigh},
		{"partition.metadata is not a broker-level checkpoint (synthetic)",
			"java.io.IOException: Malformed line in checkpoint file [/var/lib/kafka/data/orders-3/partition.metadata]: x\n",
			RoleBroker, "corrupt-checkpoint-file", "", false, SeverityHigh},
		{"foreign dir", readLog(t, "testdata/crashlogs/26-foreign-dir-in-logdir-posthog-efs.log"), RoleBroker, "non-kafka-dir-in-log-dir", "posthog", true, SeverityHigh},
		{"foreign dir on a controller", readLog(t, "testdata/crashlogs/26-foreign-dir-in-logdir-posthog-efs.log"), RoleController, "non-kafka-dir-in-log-dir", "posthog", false, SeverityHigh},
		{"old kafka corrupt index", readLog(t, "testdata/crashlogs/40-corrupt-index-found-startup-0.8.log"), RoleBroker, "corrupt-index", "sampleTopic-1/00000000000006911940.index", true, SeverityHigh},
		{"modern kafka rebuilds the index itself (synthetic)",
			"[2024-01-01 00:00:00,000] WARN [LogLoader partition=orders-0, dir=/var/lib/kafka/data] Found a corrupted index file corresponding to log file /var/lib/kafka/data/orders-0/00000000000000000000.log due to Corrupt index found, index file (/var/lib/kafka/data/orders-0/00000000000000000000.index) has non-zero size but the last offset is 0 which is no greater than the base offset 0.}, recovering segment and rebuilding index files... (kafka.log.LogLoader)\n",
			RoleBroker, "corrupt-index", "orders-0/00000000000000000000.index", false, SeverityLow},
		{"kafka 3.5+ corrupt index, path without parentheses (synthetic, storage OffsetIndex.java wording)",
			startupFatal + "org.apache.kafka.storage.internals.log.CorruptIndexException: Corrupt index found, index file /var/lib/kafka/data/orders-0/00000000000000000000.index has non-zero size but the last offset is 0 which is less than the base offset 12.\n",
			RoleBroker, "corrupt-index", "orders-0/00000000000000000000.index", true, SeverityHigh},
		{"time index sanity check gives no automated target (synthetic, TimeIndex wording)",
			"org.apache.kafka.storage.internals.log.CorruptIndexException: Time index file /var/lib/kafka/data/orders-0/00000000000000000000.timeindex is corrupt, found 13 bytes which is neither positive nor a multiple of 12.\n",
			RoleBroker, "corrupt-index", "", false, SeverityHigh},
		{"malformed recovery-point checkpoint (synthetic)",
			startupFatal + "java.io.IOException: Malformed line in checkpoint file (/var/lib/kafka/data/kafka-log0/recovery-point-offset-checkpoint): 'orders 0 12'\n",
			RoleBroker, "corrupt-checkpoint-file", "recovery-point-offset-checkpoint", true, SeverityHigh},
		{"malformed leader-epoch checkpoint stays manual (synthetic)",
			"java.io.IOException: Malformed line in checkpoint file (/var/lib/kafka/data/orders-3/leader-epoch-checkpoint): '0 x'\n",
			RoleBroker, "corrupt-checkpoint-file", "orders-3/leader-epoch-checkpoint", false, SeverityHigh},
		{"backup left inside the log dir (synthetic)",
			startupFatal + "org.apache.kafka.common.KafkaException: Found directory /bitnami/kafka/data/__cluster_metadata-0-bak, '__cluster_metadata-0-bak' is not in the form of topic-partition or topic-partition.uniqueId-delete (if marked for deletion).\n",
			RoleBroker, "non-kafka-dir-in-log-dir", "__cluster_metadata-0-bak", true, SeverityHigh},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Role: tc.role, Log: tc.log})
			i := slices.IndexFunc(got, func(f Finding) bool { return f.Rule == tc.rule })
			if i < 0 {
				t.Fatalf("no %s finding in %v", tc.rule, ruleIDs(got))
			}
			f := got[i]
			if f.Remedy.Target != tc.target {
				t.Errorf("target %q, want %q", f.Remedy.Target, tc.target)
			}
			if f.Remedy.Automated != tc.automated {
				t.Errorf("automated %v, want %v (%+v)", f.Remedy.Automated, tc.automated, f.Remedy)
			}
			if f.Severity != tc.severity {
				t.Errorf("severity %s, want %s", f.Severity, tc.severity)
			}
			if want, ok := downgradedAction[tc.name]; ok && f.Remedy.Action != want {
				t.Errorf("downgraded remedy %q, want %q", f.Remedy.Action, want)
			}
		})
	}
}

// startupFatal is kafka.Kafka's fatal exit at startup (3.x layout): an
// automated remedy counts only in the exception chain of such a terminal event.
const startupFatal = "[2024-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n"

// downgradedAction is the manual remedy a downgrade puts in place.
var downgradedAction = map[string]string{
	"modern kafka rebuilds the index itself (synthetic)":         "wait-for-rebuild",
	"malformed leader-epoch checkpoint stays manual (synthetic)": "move-partition",
}

func TestFindingsAreOrderedBestFirst(t *testing.T) {
	// Synthetic: a log-dir failure whose root cause (disk full) is also logged.
	log := "ERROR Error while writing to checkpoint file /var/lib/kafka/data/x-0/leader-epoch-checkpoint (kafka.server.LogDirFailureChannel)\n" +
		"java.io.IOException: No space left on device\n" +
		"ERROR Shutdown broker because all log dirs in /var/lib/kafka/data have failed (kafka.log.LogManager)\n"
	got := Default().Diagnose(Snapshot{Log: log})
	if ids := ruleIDs(got); len(ids) != 2 || got[0].Rule != "disk-full" || got[1].Rule != "log-dir-offline" {
		t.Fatalf("got %v, want disk-full then log-dir-offline", ids)
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if severityRank(a.Severity) < severityRank(b.Severity) ||
			(a.Severity == b.Severity && a.Confidence < b.Confidence) {
			t.Errorf("finding %d (%s) ranks above %d (%s)", i, b.Rule, i-1, a.Rule)
		}
	}
}

func TestNoLogNoStatusNoFinding(t *testing.T) {
	if got := Default().Diagnose(Snapshot{}); len(got) != 0 {
		t.Fatalf("empty snapshot gave %v", ruleIDs(got))
	}
}

// TestEngineIsSafeForConcurrentUse runs one engine from many goroutines;
// run with -race to make it meaningful.
func TestEngineIsSafeForConcurrentUse(t *testing.T) {
	log := seedLog(t)
	done := make(chan []Finding)
	for range 8 {
		go func() { done <- Default().Diagnose(Snapshot{Role: RoleBroker, Log: log}) }()
	}
	for range 8 {
		if got := <-done; len(got) == 0 || !got[0].Remedy.Automated {
			t.Errorf("concurrent diagnosis: %v", ruleIDs(got))
		}
	}
}
