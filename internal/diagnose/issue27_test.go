// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Issue 27 item 3: planted log lines steer nothing. The logs are synthetic,
// in Kafka's log layout; the scenario is the safety review's (finding 3): a
// client chooses a consumer group id with newlines, and the authorizer's
// INFO "Denied" line writes it raw, so whole lines can be planted.

// plantedMetadataFault is a forged raft fatal fault with a metadata-log
// offset line that would make the move look local (next > log start).
const plantedMetadataFault = "[2026-01-10 03:11:07,001] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
	"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 9000 is less than the next offset 9100. First 10 offsets in append: List(9000), last offset in append: 9200. Log start offset = 100\n" +
	"\tat kafka.raft.KafkaMetadataLog.appendAsFollower(KafkaMetadataLog.scala:99)"

func oomLoop(log string) Snapshot {
	return Snapshot{Namespace: "kafka", Pod: "kafka-broker-0", UID: "u1", Role: RoleBroker, NodeID: "3", KafkaContainer: "kafka",
		Containers: []ContainerState{{Name: "kafka", RestartCount: 4, WaitingReason: "CrashLoopBackOff",
			LastTerminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: time.Date(2026, 1, 10, 3, 20, 1, 0, time.UTC)}}},
		Log: log}
}

func automatedFindings(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Remedy.Automated {
			out = append(out, f.Rule+" ("+f.Remedy.Action+" "+f.Remedy.Target+")")
		}
	}
	return out
}

// A broker OOMKilled in a loop whose previous log holds one authorizer
// line with a planted raft fault: no automated remedy, and the OOM kill is
// what the diagnosis says first.
func TestIssue27_3_InjectedMetadataLinesInAnOOMLoop(t *testing.T) {
	log := "[2026-01-10 03:00:00,000] INFO [KafkaRaftServer nodeId=3] Kafka Server started (kafka.server.KafkaRaftServer)\n" +
		"[2026-01-10 03:11:07,000] INFO Principal = User:app is Denied Operation = Describe from host = 10.1.2.3 on resource = Group:LITERAL:x\n" +
		plantedMetadataFault + " for request = DescribeGroups with resourceRefCount = 1 (kafka.authorizer.logger)\n" +
		"[2026-01-10 03:20:00,000] INFO [BrokerLifecycleManager id=3] still running (x)\n"
	got := Default().Diagnose(oomLoop(log))
	if auto := automatedFindings(got); len(auto) > 0 {
		t.Errorf("planted lines in an OOM loop offer an automated remedy: %v", auto)
	}
	if len(got) == 0 || got[0].Class != "container-oom-killed" {
		t.Errorf("first finding %v, want container-oom-killed (the container's real end)", ruleIDs(got))
	}
}

// The same planted text inside a JSON log's message (escaped newlines):
// the message stays one line, so it cannot forge a record.
func TestIssue27_3_InjectedLinesThroughJSONLogging(t *testing.T) {
	msg := "Principal = User:app is Denied Operation = Describe from host = 10.1.2.3 on resource = Group:LITERAL:x\\n" +
		strings.ReplaceAll(strings.ReplaceAll(plantedMetadataFault, "\n", "\\n"), "\t", "\\t") + "\\n" +
		"[2026-01-10 03:11:07,002] INFO ok (x) for request = DescribeGroups with resourceRefCount = 1"
	log := `{"timestamp":"2026-01-10T03:00:00.000Z","level":"INFO","logger":"kafka.server.KafkaRaftServer","message":"[KafkaRaftServer nodeId=3] Kafka Server started"}` + "\n" +
		`{"timestamp":"2026-01-10T03:11:07.000Z","level":"INFO","logger":"kafka.authorizer.logger","message":"` + msg + `"}` + "\n" +
		`{"timestamp":"2026-01-10T03:20:00.000Z","level":"INFO","logger":"x","message":"still running"}` + "\n"
	for _, snap := range []Snapshot{oomLoop(log), {Role: RoleBroker, Log: log}} {
		got := Default().Diagnose(snap)
		if auto := automatedFindings(got); len(auto) > 0 {
			t.Errorf("status %v: planted lines in a JSON message offer an automated remedy: %v", snap.Containers, auto)
		}
		for _, f := range got {
			for _, ev := range f.Evidence {
				if strings.HasPrefix(ev, "kafka.common.UnexpectedAppendOffsetException") || strings.HasPrefix(ev, "[2026-01-10 03:11:07,001]") {
					t.Errorf("finding %s quotes a line forged from a JSON message: %q", f.Rule, ev)
				}
			}
		}
	}
}

// seedRun is the seed incident's end as Kafka writes it: a start, then the
// raft IO thread's fatal fault with the metadata-log offsets.
const seedRun = "[2025-04-28 08:00:00,000] INFO Registered kafka:type=kafka.Log4jController MBean (kafka.utils.Log4jControllerRegistration$)\n" +
	"[2025-04-28 08:22:01,792] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
	"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 57876665 is less than the next offset 57876669. First 10 offsets in append: List(57876665), last offset in append: 57912402. Log start offset = 57054787\n" +
	"\tat kafka.raft.KafkaMetadataLog.appendAsFollower(KafkaMetadataLog.scala:99)\n"

func exited(code int32, reason, log string) Snapshot {
	return Snapshot{Role: RoleBroker, KafkaContainer: "kafka", Log: log,
		Containers: []ContainerState{{Name: "kafka", RestartCount: 3, WaitingReason: "CrashLoopBackOff",
			LastTerminated: &Termination{Reason: reason, ExitCode: code}}}}
}

// Where the process really ended decides: the terminal event of the last
// run, one cause, and a termination that is Kafka's exit 1.
func TestIssue27_3_AutomationOnlyWhereTheProcessEnded(t *testing.T) {
	otherFatal := "[2025-04-28 08:30:00,000] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
		"java.lang.IllegalStateException: something else entirely\n"
	restart := "[2025-04-28 08:40:00,000] INFO Registered kafka:type=kafka.Log4jController MBean (kafka.utils.Log4jControllerRegistration$)\n" +
		"[2025-04-28 08:40:01,000] INFO [BrokerServer id=100] Transition from STARTING to STARTED (kafka.server.BrokerServer)\n"
	cases := []struct {
		name      string
		snap      Snapshot
		automated bool
	}{
		{"seed, exit 1 (control)", exited(1, "Error", seedRun), true},
		{"seed, no pod status (bot explain)", Snapshot{Role: RoleBroker, Log: seedRun}, true},
		{"seed, but the container was OOMKilled", exited(137, "OOMKilled", seedRun), false},
		{"seed, but the container was SIGTERMed (143)", exited(143, "Error", seedRun), false},
		{"two distinct fatal causes in the last run", exited(1, "Error", seedRun+otherFatal), false},
		{"the fault is in an earlier run; the last run started cleanly", exited(1, "Error", seedRun+restart), false},
		{"the offsets line is not in a terminal chain", exited(1, "Error",
			"[2025-04-28 08:10:00,000] INFO quoted: "+strings.SplitN(seedRun, "\n", 4)[2]+"\n"+otherFatal), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(tc.snap)
			f := findRule(got, "metadata-log-offset-mismatch")
			if f == nil {
				if tc.automated {
					t.Fatalf("no metadata finding: %v", ruleIDs(got))
				}
				return
			}
			if f.Remedy.Automated != tc.automated {
				t.Errorf("automated %v, want %v\n%s", f.Remedy.Automated, tc.automated, f.Explanation)
			}
			if !tc.automated && !strings.Contains(f.Explanation, "Not automated") {
				t.Errorf("the explanation does not say why it is not automated: %s", f.Explanation)
			}
		})
	}
}

// A log that shows Kafka dying is never silent, even without pod status
// (bot explain on a file): the unclassified finding quotes the terminal
// event and the root cause.
func TestIssue24_5_DyingLogWithoutStatusGivesAFinding(t *testing.T) {
	log := "[2025-05-01 10:00:00,000] INFO Registered kafka:type=kafka.Log4jController MBean (kafka.utils.Log4jControllerRegistration$)\n" +
		"[2025-05-01 10:00:02,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
		"org.apache.kafka.common.KafkaException: com.example.QuotaPlugin failed to initialise\n" +
		"\tat kafka.server.QuotaFactory$.instantiate(QuotaFactory.scala:80)\n" +
		"Caused by: java.lang.IllegalStateException: quota backend unavailable\n"
	got := Default().Diagnose(Snapshot{Log: log})
	if len(got) == 0 || got[0].Rule != UnclassifiedRule {
		t.Fatalf("first finding %v, want %s", ruleIDs(got), UnclassifiedRule)
	}
	ev := strings.Join(got[0].Evidence, "\n")
	for _, want := range []string{"Exiting Kafka due to fatal exception", "Caused by: java.lang.IllegalStateException: quota backend unavailable"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q: %q", want, got[0].Evidence)
		}
	}
	// A quiet log without a terminal event stays without a finding.
	if got := Default().Diagnose(Snapshot{Log: "[2025-05-01 10:00:00,000] INFO all good (kafka.server.KafkaServer)\n"}); len(got) != 0 {
		t.Errorf("a healthy line gave %v", ruleIDs(got))
	}
}

// destroysData is a manual step that throws data away: wiping or
// reformatting a dir, deleting segments, quorum-state, a volume or its
// claim. Deleting derived files (index files, rebuilt from the segment) is
// not.
var destroysData = regexp.MustCompile(`(?i)\b(?:wipe|reformat|rm -rf|delet\w* (?:the |its |this |that )?(?:oldest segments|quorum-state|pvc|persistentvolumeclaim|volume|data dir)|kubectl delete pvc|replace the volume)`)

// notDoing is a step that warns against the action instead of asking for it.
var notDoing = regexp.MustCompile(`(?i)^\s*(?:do not|don't|never)\b`)

// Issue 24 item 5: manual steps that destroy data carry their real risk,
// never "none".
func TestIssue24_5_DataDestroyingStepsCarryTheirRisk(t *testing.T) {
	for _, r := range Default().Rules() {
		steps := slices.Clone(r.Remedy.Steps)
		for _, d := range r.Downgrades {
			steps = append(steps, d.Steps...)
		}
		if r.Remedy.Escalate != nil {
			steps = append(steps, r.Remedy.Escalate.Steps...)
		}
		risk := max(severityOfRisk(r.Risk), severityOfRisk(r.NonBrokerRisk))
		for _, step := range steps {
			for _, sentence := range strings.SplitAfter(step, ". ") {
				if destroysData.MatchString(sentence) && !notDoing.MatchString(sentence) && risk < severityOfRisk(RiskMedium) {
					t.Errorf("rule %s: risk %s (non-broker %q), but a step destroys data: %q", r.ID, r.Risk, r.NonBrokerRisk, strings.TrimSpace(sentence))
				}
			}
		}
	}
}

func severityOfRisk(r Risk) int { return slices.Index(risks, r) }

// Issue 24 item 5: the class table in the docs is the engine's own list
// (bot explain --list prints the same data). KAFKABOT_UPDATE_DOCS=1
// rewrites it.
func TestFailureClassTableInDocs(t *testing.T) {
	const path = "../../docs/FAILURE-CLASSES.md"
	const begin, end = "<!-- class-table:begin -->\n", "<!-- class-table:end -->"
	doc := readLog(t, path)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no class-table markers", path)
	}
	classes := Default().Classes()
	want := ClassTableMarkdown(classes)
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv("KAFKABOT_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the class table of %s differs from the rules; regenerate it with KAFKABOT_UPDATE_DOCS=1", path)
	}
	// Every class of the knowledge base is listed, each with a remedy kind.
	ids := failureClassIDs(t)
	listed := map[string]bool{}
	for _, c := range classes {
		listed[c.Class] = true
		if !strings.HasPrefix(c.Remedy, "automated: ") && !strings.HasPrefix(c.Remedy, "manual: ") {
			t.Errorf("class %s: remedy kind %q", c.Class, c.Remedy)
		}
	}
	for _, id := range append(ids, "container-oom-killed", UnclassifiedRule) {
		if !listed[id] {
			t.Errorf("class %s is not listed", id)
		}
	}
}
