// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	now      = time.Date(2025, 4, 28, 8, 31, 0, 0, time.UTC)
	finished = time.Date(2025, 4, 28, 8, 22, 2, 0, time.UTC)
)

// Evidence lines of the seed incident's log (internal/testkit/demo/logs/34-kraft-metadata-log-unexpected-append-offset.log).
var seedEvidence = []string{
	"[2025-04-28 08:22:01,792] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)",
	"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 57876665 is less than the next offset 57876669.",
	"        at kafka.raft.KafkaMetadataLog.appendAsFollower(KafkaMetadataLog.scala:99)",
}

func crashLooping() diagnose.Snapshot {
	return diagnose.Snapshot{
		Namespace: "kafka", Pod: "foobar-kafka-broker-0", UID: "5f1c9a8e-2b7d-4c61-9a0e-0d3c4b5a6f70", Node: "worker-3",
		Phase: "Running", KafkaCluster: "foobar", Role: diagnose.RoleBroker, NodeID: "100", KafkaContainer: "kafka",
		Containers: []diagnose.ContainerState{{
			Name: "kafka", RestartCount: 37, WaitingReason: "CrashLoopBackOff",
			LastTerminated: &diagnose.Termination{Reason: "Error", ExitCode: 1, FinishedAt: finished},
		}},
		Claims:   []diagnose.VolumeClaim{{Volume: "data", ClaimName: "data-foobar-kafka-broker-0", MountPath: "/bitnami/kafka"}},
		Events:   []string{"Back-off restarting failed container kafka in pod foobar-kafka-broker-0"},
		LogBytes: 262144, LogTruncated: true,
	}
}

func seedFinding() diagnose.Finding {
	return diagnose.Finding{
		Rule: "metadata-log-offset-mismatch", Title: "KRaft metadata log diverged from the quorum (UnexpectedAppendOffsetException)",
		Severity: diagnose.SeverityCritical, Confidence: 0.95, Risk: diagnose.RiskLow, Evidence: seedEvidence,
		Explanation: "The node's local copy of __cluster_metadata-0 no longer lines up with the quorum leader's: the leader sent a batch " +
			"that starts below this node's log end offset. Offsets: first 57876665, next 57876669, log start 57054787. " +
			"The next offset is above the log start offset: this node's own copy diverged, so discarding it is the remedy.",
		Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0",
			Steps: []string{"Wait until the broker container is not running.", "Move __cluster_metadata-0 to a dated backup at the volume root.",
				"Restart the broker and watch it become Ready."}},
		Offsets: &diagnose.OffsetTriage{FirstOffset: 57876665, NextOffset: 57876669, LogStartOffset: 57054787, LocalDivergence: true},
	}
}

func seedView() slackview.Diagnosis {
	return slackview.Diagnosis{
		ClusterName: "prod-eu1", Snapshot: crashLooping(),
		Findings:  []diagnose.Finding{seedFinding(), {Rule: "liveness-probe-failing", Title: "Liveness probe failing", Severity: diagnose.SeverityMedium}},
		Requester: "U0ALICE", Token: "signed.token", ExpiresAt: now.Add(30 * time.Minute), Now: now,
	}
}

func marshal(t *testing.T, blocks []slack.Block) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(blocks, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(raw, '\n')
}

// golden compares blocks with testdata/name.json (rewritten with -update).
func golden(t *testing.T, name string, blocks []slack.Block) {
	t.Helper()
	got := marshal(t, blocks)
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/slackview -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file; if the change is meant, rerun with -update and review the diff.\ngot:\n%s", path, got)
	}
}

// texts is every text of the blocks, in order.
func texts(t *testing.T, blocks []slack.Block) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(marshal(t, blocks), &v); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["text"].(string); ok {
				b.WriteString(s + "\n")
			}
			for k, c := range x {
				if _, isString := c.(string); k != "text" || !isString {
					walk(c)
				}
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return b.String()
}

func TestGoldenViews(t *testing.T) {
	alert := slackview.Alert{Diagnosis: seedView(), Reason: "CrashLoopBackOff", Detail: "container kafka is in CrashLoopBackOff after 37 restarts",
		Rule: "metadata-log-offset-mismatch", StartsAt: now.Add(-9 * time.Minute),
		Silence: slack.NewOverflowBlockElement("kafkabot.silencemenu.token",
			slack.NewOptionBlockObject("1h", slackview.Plain("🔕 Silence pod for 1h"), nil))}
	alert.Diagnosis.Requester = slackview.SweepRequester
	amAlert := alert
	amAlert.Diagnosis.Source = slackview.Source{System: "Alertmanager", Alert: "KubePodCrashLooping"}
	progress := slackview.Progress{Head: "✅ <@U0BOB> approved. Starting: `move-metadata-log` of `__cluster_metadata-0`", Steps: []slackview.Step{
		{Name: "Re-check the safety gates", State: slackview.StepDone, Took: 420 * time.Millisecond},
		{Name: "Wait for debug pod kafkabot-repair-x to finish", State: slackview.StepDone, Took: 12 * time.Second,
			Detail: "took 12s\nMoved /kafka-data/data/__cluster_metadata-0 to /kafka-data/kafkabot-backup-20250428T083101Z-ab12/data/__cluster_metadata-0"},
		{Name: "Restart foobar-kafka-broker-0", State: slackview.StepRunning, Took: 3 * time.Second},
		{Name: "Watch the new pod until Ready", State: slackview.StepPending},
	}}
	failed := progress
	failed.Steps = append([]slackview.Step(nil), progress.Steps...)
	failed.Steps[2].State, failed.Steps[2].Detail = slackview.StepFailed, "pods \"foobar-kafka-broker-0\" is forbidden"
	failed.Done = true // the last step never ran: "(not run)"
	outcome := slackview.Outcome{Kind: slackview.OutcomeRepaired, People: []string{"U0BOB", "U0ALICE"}, Took: 94 * time.Second, StepsShown: true,
		Summary: "Repaired kafka/foobar-kafka-broker-0 (move-metadata-log __cluster_metadata-0), approved by U0BOB, requested by U0ALICE.\n" +
			"Backup: /kafka-data/kafkabot-backup-20250428T083101Z-ab12/data/__cluster_metadata-0 (143575 bytes, 7 files).\n" +
			"New pod foobar-kafka-broker-0 (UID 0f00): Ready.\nSteps: Re-check done (0s). Total 1m34s.",
		Notes: []slackview.Note{{Title: "Watch the new pod until Ready", Text: "New pod UID 0f00 is Ready. Its log:\n[2025-04-28 08:32:40,114] INFO [KafkaRaftServer nodeId=100] Kafka Server started"}}}
	pods := []diagnose.Snapshot{crashLooping(), {Namespace: "kafka", Pod: "foobar-kafka-broker-1", KafkaCluster: "foobar", Role: diagnose.RoleBroker,
		Containers: []diagnose.ContainerState{{Name: "kafka", Ready: true, Running: true}}}}
	for name, blocks := range map[string][]slack.Block{
		"diagnosis":                  seedView().Message().Blocks,
		"diagnosis-details":          seedView().Details().Blocks,
		"alert":                      alert.Message().Blocks,
		"alert-alertmanager":         amAlert.Message().Blocks,
		"alert-alertmanager-details": amAlert.Details().Blocks,
		"progress":                   progress.Message().Blocks,
		"progress-failed":            failed.Message().Blocks,
		"outcome":                    outcome.Message().Blocks,
		"pods":                       slackview.Pods(pods, now).Blocks,
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, blocks) })
	}
}

// TestLineBudget holds the top-level messages to what an on-call engineer
// reads in five seconds: at most 8 rendered lines above the buttons and
// 14 in all, at 1280 px, in every shape the message takes, plus the lines
// of Kafka's own view on a card with buttons (issue 23: the card shows it
// before Approve; at most 2 lines).
func TestLineBudget(t *testing.T) {
	manual := seedView()
	manual.Findings = []diagnose.Finding{seedFinding()}
	manual.Findings[0].Remedy.Automated = false
	manual.Token = ""
	controller := seedView()
	controller.Snapshot.Role, controller.Token = diagnose.RoleController, ""
	unmatched := seedView()
	unmatched.Findings, unmatched.Token = nil, ""
	rootBroker := seedView()
	rootBroker.Snapshot.RepairRefusal, rootBroker.Token = (&kube.RootBrokerError{}).Reason(), ""
	longNames := seedView()
	longNames.ClusterName = strings.Repeat("c", 63)
	longNames.Snapshot.Namespace, longNames.Snapshot.Pod = strings.Repeat("n", 63), strings.Repeat("p", 253)
	longNames.Findings[0].Explanation = strings.Repeat("a very long first sentence ", 40)
	alert := slackview.Alert{Diagnosis: seedView(), Reason: "CrashLoopBackOff", Detail: "container kafka is in CrashLoopBackOff after 37 restarts",
		Rule: "metadata-log-offset-mismatch", StartsAt: now,
		Silence: slack.NewOverflowBlockElement("kafkabot.silencemenu.t", slack.NewOptionBlockObject("1h", slackview.Plain("🔕 Silence pod for 1h"), nil))}
	kafkaDefer := alert
	kafkaDefer.Diagnosis.Kafka = slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: strings.Repeat("quorum: DescribeQuorum failed: ", 400)}
	for name, blocks := range map[string][]slack.Block{
		"alert, longest Kafka line": kafkaDefer.Message().Blocks,
		"repairable":                seedView().Message().Blocks,
		"manual runbook":            manual.Message().Blocks,
		"controller":                controller.Message().Blocks,
		"no rule matched":           unmatched.Message().Blocks,
		"root broker":               rootBroker.Message().Blocks,
		"longest names":             longNames.Message().Blocks,
		"alert":                     alert.Message().Blocks,
	} {
		t.Run(name, func(t *testing.T) {
			l, err := slackemu.LayoutOf(marshal(t, blocks), 1280)
			if err != nil {
				t.Fatal(err)
			}
			kafka := 0
			for i, b := range blocks {
				if b.ID() == slackview.BlockKafka {
					kafka = l.Lines[i]
				}
			}
			if kafka > 2 {
				t.Errorf("Kafka's view takes %d lines (budget 2)", kafka)
			}
			if l.AboveActions-kafka > 8 || l.Total-kafka > 14 {
				t.Errorf("%d lines above the buttons (budget 8 besides Kafka's view, %d), %d in all (budget 14); per block %v",
					l.AboveActions, kafka, l.Total, l.Lines)
			}
		})
	}
}

// TestEveryFactIsReachable lists what the diagnosis message used to show
// in one 1,300 px message: each fact must still be in the message or its
// details reply.
func TestEveryFactIsReachable(t *testing.T) {
	v := seedView()
	all := texts(t, v.Message().Blocks) + texts(t, v.Details().Blocks)
	facts := map[string]string{
		"title":            "KRaft metadata log diverged from the quorum (UnexpectedAppendOffsetException)",
		"severity":         "severity *critical*",
		"confidence":       "confidence 95%",
		"rule":             "rule `metadata-log-offset-mismatch`",
		"explanation":      "that starts below this node's log end offset",
		"offsets triage":   "Offsets: first 57876665, next 57876669, log start 57054787",
		"triage verdict":   "this node's own copy diverged",
		"risk":             "*Risk of the remedy:* low",
		"evidence 1":       "Encountered fatal fault: Unexpected error in raft IO thread",
		"evidence 2":       "First offset 57876665 is less than the next offset 57876669",
		"evidence 3":       "KafkaMetadataLog.appendAsFollower",
		"role and node.id": "broker, node.id 100",
		"kafka cluster":    "*Kafka cluster*\nfoobar",
		"restarts":         "*Restarts*\n37",
		"state":            "*State*\nCrashLoopBackOff",
		"last exit":        "Error, exit code 1 at <!date^1745828522^",
		"node":             "*Node*\n`worker-3`",
		"pvc":              "*PVC*\n`data-foobar-kafka-broker-0`",
		"log read":         "256.0 KiB (older output cut off)",
		"pod uid":          "`5f1c9a8e-2b7d-4c61-9a0e-0d3c4b5a6f70`",
		"repair":           "Move `__cluster_metadata-0` out of the log dir of PVC `data-foobar-kafka-broker-0`",
		"step 1":           "1. Wait until the broker container is not running.",
		"step 3":           "3. Restart the broker and watch it become Ready.",
		"also matched":     "Liveness probe failing (`liveness-probe-failing`, medium)",
		"requester":        "<@U0ALICE>",
		"diagnosed at":     "<!date^1745829060^",
		"approval expiry":  "Awaiting approval until <!date^1745830860^",
		"read-only":        "nothing was changed",
		"events":           "Back-off restarting failed container kafka",
	}
	for name, fact := range facts {
		if !strings.Contains(all, fact) {
			t.Errorf("%s (%q) is in neither the message nor its details", name, fact)
		}
	}
	// And the message itself does not carry them twice: the title is in
	// the header only, the UID and the evidence only in the details.
	msg := texts(t, v.Message().Blocks)
	for _, moved := range []string{"5f1c9a8e", "appendAsFollower", "Offsets: first", "1. Wait until"} {
		if strings.Contains(msg, moved) {
			t.Errorf("the top-level message still shows %q", moved)
		}
	}
	if n := strings.Count(msg, "KRaft metadata log diverged"); n != 1 {
		t.Errorf("the title appears %d times in the message, want once", n)
	}
}

// TestColorFollowsPodState: the header's emoji is never green for a pod
// that is not Ready, whether or not a rule matched, and a crash loop is
// red even when its finding is minor.
func TestColorFollowsPodState(t *testing.T) {
	state := func(c diagnose.ContainerState) diagnose.Snapshot {
		s := crashLooping()
		c.Name = "kafka"
		s.Containers = []diagnose.ContainerState{c}
		return s
	}
	noStatus := crashLooping()
	noStatus.Containers = nil
	unclassified := diagnose.Finding{Rule: "unclassified-fatal", Title: "Kafka exited with a fatal error no rule explains", Severity: diagnose.SeverityHigh}
	minor := diagnose.Finding{Rule: "minor", Title: "A deprecated setting", Severity: diagnose.SeverityLow}
	info := diagnose.Finding{Rule: "note", Title: "A note", Severity: diagnose.SeverityInfo}
	tests := []struct {
		name     string
		snap     diagnose.Snapshot
		findings []diagnose.Finding
		want     string
	}{
		{"ready, nothing found", state(diagnose.ContainerState{Ready: true, Running: true}), nil, "🟢"},
		{"ready, a note", state(diagnose.ContainerState{Ready: true, Running: true}), []diagnose.Finding{info}, "🔵"},
		{"ready, a minor finding", state(diagnose.ContainerState{Ready: true, Running: true}), []diagnose.Finding{minor}, "🟡"},
		{"crash loop, no rule matched", state(diagnose.ContainerState{WaitingReason: "CrashLoopBackOff", RestartCount: 9}), nil, "🔴"},
		{"crash loop, unclassified-fatal", state(diagnose.ContainerState{WaitingReason: "CrashLoopBackOff"}), []diagnose.Finding{unclassified}, "🔴"},
		{"crash loop, minor finding", state(diagnose.ContainerState{WaitingReason: "CrashLoopBackOff"}), []diagnose.Finding{minor}, "🔴"},
		{"crash loop, info finding", state(diagnose.ContainerState{WaitingReason: "CrashLoopBackOff"}), []diagnose.Finding{info}, "🔴"},
		{"exited with an error", state(diagnose.ContainerState{Terminated: &diagnose.Termination{Reason: "Error", ExitCode: 1}}), nil, "🔴"},
		{"running, not ready", state(diagnose.ContainerState{Running: true}), nil, "🟠"},
		{"running, not ready, info finding", state(diagnose.ContainerState{Running: true}), []diagnose.Finding{info}, "🟠"},
		{"starting", state(diagnose.ContainerState{WaitingReason: "ContainerCreating"}), nil, "🟡"},
		{"no container status", noStatus, nil, "🟠"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := slackview.Diagnosis{Snapshot: tt.snap, Findings: tt.findings, Requester: "U0ALICE", Now: now}
			for what, blocks := range map[string][]slack.Block{
				"diagnosis": v.Message().Blocks,
				"alert":     slackview.Alert{Diagnosis: v}.Message().Blocks,
			} {
				header := strings.SplitN(texts(t, blocks), "\n", 2)[0]
				if !strings.HasPrefix(header, tt.want+" ") {
					t.Errorf("%s header %q, want it to start with %s", what, header, tt.want)
				}
				if !slackview.PodReady(tt.snap) && strings.Contains(header, "🟢") {
					t.Errorf("%s: green for a pod that is not Ready: %q", what, header)
				}
			}
			if !slackview.PodReady(tt.snap) && strings.Contains(texts(t, slackview.Pods([]diagnose.Snapshot{tt.snap}, now).Blocks), "🟢") {
				t.Error("/kafka status shows green for a pod that is not Ready")
			}
		})
	}
}

var (
	rawID     = regexp.MustCompile(`\bU0[A-Z0-9]+\b`)
	mentionID = regexp.MustCompile(`<@U0[A-Z0-9]+>`)
	dateToken = regexp.MustCompile(`<!date\^\d+\^[^|>]+\|[^>]+>`)
	clockTime = regexp.MustCompile(`\b\d{1,2}:\d{2}\b`)
)

// TestPeopleAreMentionsAndTimesAreDates: no view shows a user as a raw ID
// (the repair summary's "approved by U0BOB" included), and every time is
// a Slack date token, which each reader sees in their own time zone.
func TestPeopleAreMentionsAndTimesAreDates(t *testing.T) {
	v := seedView()
	outcome := slackview.Outcome{Kind: slackview.OutcomeFailed, People: []string{"U0BOB", "U0ALICE"},
		Summary: "Repair of kafka/foobar-kafka-broker-0 stopped: approved by U0BOB, requested by U0ALICE; U0BOBBY and xU0BOB are not people."}
	for name, blocks := range map[string][]slack.Block{
		"diagnosis": v.Message().Blocks, "details": v.Details().Blocks, "outcome": outcome.Message().Blocks,
		"pods": slackview.Pods([]diagnose.Snapshot{crashLooping()}, now).Blocks,
	} {
		text := texts(t, blocks)
		if name == "outcome" {
			text = strings.NewReplacer("U0BOBBY", "", "xU0BOB", "").Replace(text) // words that only contain an ID
		}
		if left := rawID.FindAllString(mentionID.ReplaceAllString(text, ""), -1); len(left) > 0 {
			t.Errorf("%s shows raw user IDs %v:\n%s", name, left, text)
		}
		if left := clockTime.FindAllString(dateToken.ReplaceAllString(text, ""), -1); len(left) > 0 {
			// The evidence quotes the log's own timestamps: those are data, not times we render.
			for _, l := range left {
				if !strings.Contains(text, "[2025-04-28 "+l) && !strings.Contains(text, "08:22:01") {
					t.Errorf("%s shows a time %q outside a date token:\n%s", name, l, text)
				}
			}
		}
	}
	if got := texts(t, outcome.Message().Blocks); !strings.Contains(got, "approved by <@U0BOB>, requested by <@U0ALICE>") ||
		!strings.Contains(got, "U0BOBBY") || strings.Contains(got, "<@U0BOBBY>") || strings.Contains(got, "x<@U0BOB>") {
		t.Errorf("outcome mentions:\n%s", got)
	}
}

func TestMentionIDs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"approved by U0BOB, requested by U0ALICE.", "approved by <@U0BOB>, requested by <@U0ALICE>."},
		{"U0BOB", "<@U0BOB>"},
		{"U0BOBBY xU0BOB U0BOB_", "U0BOBBY xU0BOB <@U0BOB>_"},
		{"<@U0BOB> stays one mention", "<@U0BOB> stays one mention"},
		{"sweep", "sweep"},
	}
	for _, tt := range tests {
		if got := slackview.MentionIDs(tt.in, "U0BOB", "U0ALICE", "sweep", ""); got != tt.want {
			t.Errorf("MentionIDs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func sweepFacts() []slackview.AlertFacts {
	return []slackview.AlertFacts{
		{Key: "kafka/foobar-kafka-broker-0/metadata-log-offset-mismatch", Namespace: "kafka", Pod: "foobar-kafka-broker-0",
			Rule: "metadata-log-offset-mismatch", Title: "KRaft metadata log diverged", Severity: diagnose.SeverityCritical,
			Reason: "CrashLoopBackOff", StartsAt: now.Add(-20 * time.Minute), ResolvedAt: now, Resolution: slackview.ResolutionRecovered},
		{Key: "kafka/foobar-kafka-broker-1/", Namespace: "kafka", Pod: "foobar-kafka-broker-1", Reason: "OOMKilled", StartsAt: now.Add(-5 * time.Minute)},
	}
}

func TestGoldenSweepViews(t *testing.T) {
	f := sweepFacts()
	lines := []string{slackview.MemberLine(f[0]), slackview.MemberLine(f[1])}
	for name, blocks := range map[string][]slack.Block{
		"group":          slackview.Group{Namespace: "kafka", Cluster: "foobar", Firing: 2, Lines: lines, Now: now}.Message().Blocks,
		"group-resolved": slackview.ResolvedGroup("kafka", "foobar", lines, now).Blocks,
		"alert-resolved": slackview.ResolvedAlert(f[0]),
		"summary":        slackview.SweepSummary{At: now, KafkaPods: 5, Firing: f, Silenced: 1}.Message().Blocks,
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, blocks) })
	}
}

// An alerting pod is unhealthy: its line is never green, blue or yellow,
// however minor its finding, and red when it crash-loops or no rule
// explains it.
func TestAlertingPodsAreNeverGreen(t *testing.T) {
	for _, tt := range []struct {
		sev    diagnose.Severity
		reason string
		title  string
		want   string
	}{
		{diagnose.SeverityInfo, "FrequentRestarts", "a note", "🟠"},
		{diagnose.SeverityLow, "FrequentRestarts", "a minor finding", "🟠"},
		{diagnose.SeverityLow, "CrashLoopBackOff", "a minor finding", "🔴"},
		{diagnose.SeverityInfo, "OOMKilled", "a note", "🔴"},
		{"", "FrequentRestarts", "", "🔴"},
	} {
		line := slackview.MemberLine(slackview.AlertFacts{Namespace: "kafka", Pod: "p", Severity: tt.sev, Reason: tt.reason, Title: tt.title})
		if !strings.HasPrefix(line, "• "+tt.want+" ") {
			t.Errorf("%s/%s/%q: line %q, want %s", tt.sev, tt.reason, tt.title, line, tt.want)
		}
	}
}

// TestAlertSaysWhoRaisedIt: an alert Alertmanager raised says so, with its
// alertname, in the banner, the status or context line and the details,
// and never "the health sweep"; the sweep's own alert says the sweep. The
// alertname is label text from outside: it is shown as code, escaped.
func TestAlertSaysWhoRaisedIt(t *testing.T) {
	tests := []struct {
		name     string
		source   slackview.Source
		repeat   bool
		buttons  bool
		want     []string
		wantNot  []string
		detailOK []string
	}{
		{name: "the health sweep", want: []string{"🚨 *Alert from the health sweep*", "Found by the health sweep ·"},
			wantNot: []string{"Alertmanager", "Raised by"}},
		{name: "Alertmanager", source: slackview.Source{System: "Alertmanager", Alert: "KubePodCrashLooping"},
			want:     []string{"🚨 *Alert from Alertmanager* (`KubePodCrashLooping`) · noticed CrashLoopBackOff", "Raised by Alertmanager (`KubePodCrashLooping`) ·"},
			wantNot:  []string{"health sweep"},
			detailOK: []string{"*Raised by:* Alertmanager alert `KubePodCrashLooping`", "Raised by Alertmanager (`KubePodCrashLooping`) · diagnosed"}},
		{name: "Alertmanager, with Approve", source: slackview.Source{System: "Alertmanager", Alert: "KubePodCrashLooping"}, buttons: true,
			want:    []string{"🚨 *Alert from Alertmanager* (`KubePodCrashLooping`)", "· raised by Alertmanager (`KubePodCrashLooping`) · details in the thread"},
			wantNot: []string{"health sweep"}},
		{name: "Alertmanager, still firing", source: slackview.Source{System: "Alertmanager", Alert: "KubePodCrashLooping"}, repeat: true,
			want:    []string{"🔁 *Alert, still firing* · from Alertmanager (`KubePodCrashLooping`) · noticed"},
			wantNot: []string{"health sweep"}},
		{name: "a hostile alertname", source: slackview.Source{System: "Alertmanager", Alert: "<!channel> `x` *y*"},
			want:    []string{"(`&lt;!channel&gt; ˋxˋ *y*`)"},
			wantNot: []string{"<!channel>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := seedView()
			v.Requester = slackview.SweepRequester
			v.Source = tc.source
			if !tc.buttons {
				v.Token = ""
			}
			a := slackview.Alert{Diagnosis: v, Reason: "CrashLoopBackOff", StartsAt: now.Add(-9 * time.Minute), Repeat: tc.repeat}
			msg, details := texts(t, a.Message().Blocks), texts(t, a.Details().Blocks)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the alert lacks %q:\n%s", w, msg)
				}
			}
			for _, w := range tc.detailOK {
				if !strings.Contains(details, w) {
					t.Errorf("the details lack %q:\n%s", w, details)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(msg+details, w) {
					t.Errorf("the alert says %q:\n%s\n%s", w, msg, details)
				}
			}
		})
	}
}

// TestRepairRefusalHidesApprove: a snapshot whose reader found the repair
// would be refused (a root broker without ALLOW_ROOT_BROKER) is not
// repairable, and its message says so and why, up front, with no buttons.
func TestRepairRefusalHidesApprove(t *testing.T) {
	v := seedView()
	f := v.Findings[0]
	if !slackview.Repairable(v.Snapshot, f) {
		t.Fatal("fixture: the seed finding is not repairable")
	}
	v.Snapshot.RepairRefusal = (&kube.RootBrokerError{}).Reason()
	if slackview.Repairable(v.Snapshot, f) {
		t.Fatal("a refused repair is repairable")
	}
	v.Token = "" // as the handlers do for what is not repairable
	msg, details := texts(t, v.Message().Blocks), texts(t, v.Details().Blocks)
	for _, want := range []string{"*Decide:* repair by hand with the runbook in the thread", "I will not: the broker runs as uid 0", "ALLOW_ROOT_BROKER=true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(details, "but not on this pod (the broker runs as uid 0") {
		t.Errorf("the details do not say why:\n%s", details)
	}
	if slackview.HasButtons(v.Message().Blocks) {
		t.Error("the message has buttons")
	}
}

// Issue 27 item 3 (review finding 14): broker log text reaches Slack only
// scrubbed of secrets, as the bot's own log is. The crash log is synthetic,
// in Kafka's layout, with a secret in each shape a broker or plugin can
// print one: a password setting, a JAAS config, a keystore password, a
// bearer token.
func TestIssue27_3_BrokerLogSecretsAreScrubbedBeforeSlack(t *testing.T) {
	secrets := []string{"hunter2-secret", "jaas-pass-123", "keystore-pw-456", "abcDEF123456.ghiJKL-789_xyz"}
	log := "[2025-04-28 08:00:00,000] INFO Registered kafka:type=kafka.Log4jController MBean (kafka.utils.Log4jControllerRegistration$)\n" +
		"[2025-04-28 08:00:05,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
		"org.apache.kafka.common.KafkaException: com.example.VaultConfigProvider failed with password=hunter2-secret\n" +
		"\tat kafka.server.KafkaConfig.<init>(KafkaConfig.scala:1200)\n" +
		"Caused by: com.example.ProviderException: sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"jaas-pass-123\"; ssl.keystore.password = keystore-pw-456 (Authorization: Bearer abcDEF123456.ghiJKL-789_xyz)\n"
	snap := crashLooping()
	snap.Log = log
	findings := diagnose.Default().Diagnose(snap)
	if len(findings) == 0 {
		t.Fatal("no finding for a crash log")
	}
	v := slackview.Diagnosis{ClusterName: "prod-eu1", Snapshot: snap, Findings: findings, Requester: "U0ALICE", Now: now}
	all := texts(t, v.Message().Blocks) + texts(t, v.Details().Blocks)
	if !strings.Contains(all, "Exiting Kafka due to fatal exception") {
		t.Fatalf("the terminal event is not quoted, so the test shows nothing:\n%s", all)
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("secret %q reaches Slack:\n%s", s, all)
		}
	}
	if !strings.Contains(all, "[REDACTED]") {
		t.Errorf("no [REDACTED] mark in the posted text:\n%s", all)
	}
}
