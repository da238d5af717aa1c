// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

var renderNow = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)

// diagnosisView is the view the handlers render a diagnosis from.
type diagnosisView = slackview.Diagnosis

// renderDiagnosis renders the message and its details reply as one list,
// for checks that a fact is shown somewhere; the fallback is the message's.
func renderDiagnosis(v diagnosisView) ([]slack.Block, string) {
	m, d := v.Message(), v.Details()
	return append(m.Blocks, d.Blocks...), m.Fallback
}

func renderStatus(pods []diagnose.Snapshot, now time.Time) ([]slack.Block, string) {
	m := slackview.Pods(pods, now)
	return m.Blocks, m.Fallback
}

var evidenceText = slackview.EvidenceText

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRenderSeedDiagnosis(t *testing.T) {
	snap := seedSnapshot(t)
	findings := seedDiagnoser{}.Diagnose(snap)
	token := strings.Repeat("t", 180) + "." + strings.Repeat("s", 43)
	blocks, fallback := renderDiagnosis(diagnosisView{Snapshot: snap, Findings: findings, Requester: "U0REQ",
		Token: token, ExpiresAt: renderNow.Add(30 * time.Minute), Now: renderNow})
	if p := validateBlocks(blocks); len(p) > 0 {
		t.Fatalf("invalid blocks:\n%s", strings.Join(p, "\n"))
	}
	raw := mustJSON(t, blocks)
	text := blockTexts(t, raw)
	for _, want := range []string{
		seedNamespace + "/" + seedPod, "KRaft metadata log diverged", "UnexpectedAppendOffsetException: Unexpected offset in append",
		"*Restarts*\n37", "CrashLoopBackOff", "Error, exit code 1", seedNode, seedPVC, "broker, node.id 100",
		"*Risk of the remedy:* low", "<@U0REQ>",
		"Awaiting approval",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	if !strings.Contains(fallback, seedPod) {
		t.Errorf("fallback %q lacks the pod", fallback)
	}
	bs := buttons(t, raw)
	approve, reject := bs[slackview.ActionApprove], bs[slackview.ActionReject]
	if approve == nil || reject == nil {
		t.Fatalf("want Approve and Reject buttons, got %v", bs)
	}
	if approve["style"] != "primary" || reject["style"] != "danger" || approve["value"] != token || reject["value"] != token {
		t.Errorf("buttons: approve %v, reject %v", approve, reject)
	}
	confirm, _ := approve["confirm"].(map[string]any)
	ctext, _ := confirm["text"].(map[string]any)
	want := "Move __cluster_metadata-0 out of the log dir of PVC " + seedPVC + " to <volume root>/kafkabot-backup-… on node " +
		seedNode + ", then restart " + seedPod + "."
	if got, _ := ctext["text"].(string); !strings.HasPrefix(got, want) {
		t.Errorf("confirm text\n got %q\nwant prefix %q", got, want)
	}
}

func TestRenderWithoutButtons(t *testing.T) {
	snap := seedSnapshot(t)
	f := seedDiagnoser{}.Diagnose(snap)[0]
	tests := []struct {
		name   string
		mutate func(*diagnose.Snapshot, *diagnose.Finding)
		why    string
	}{
		{"controller", func(s *diagnose.Snapshot, _ *diagnose.Finding) { s.Role = diagnose.RoleController }, "broker-only"},
		{"combined", func(s *diagnose.Snapshot, _ *diagnose.Finding) { s.Role = diagnose.RoleCombined }, "broker-only"},
		{"unknown role", func(s *diagnose.Snapshot, _ *diagnose.Finding) { s.Role = diagnose.RoleUnknown }, "unknown role"},
		{"controllers hold bad state", func(_ *diagnose.Snapshot, f *diagnose.Finding) {
			f.Offsets = &diagnose.OffsetTriage{NextOffset: 5, LogStartOffset: 9}
		}, "controllers hold"},
		{"manual remedy", func(_ *diagnose.Snapshot, f *diagnose.Finding) { f.Remedy.Automated = false }, "What to do"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := snap, f
			tt.mutate(&s, &f)
			if slackview.Repairable(s, f) {
				t.Fatal("repairable, want not")
			}
			blocks, _ := renderDiagnosis(diagnosisView{Snapshot: s, Findings: []diagnose.Finding{f}, Requester: "U0REQ", Now: renderNow})
			raw := mustJSON(t, blocks)
			if len(buttons(t, raw)) != 0 {
				t.Fatal("buttons offered")
			}
			if !strings.Contains(blockTexts(t, raw), tt.why) {
				t.Errorf("message does not say %q", tt.why)
			}
		})
	}
}

// TestRenderHostileInputs feeds the renderer what a broken or malicious
// cluster could produce and checks that every Slack limit holds and that
// nothing becomes a mention or link.
func TestRenderHostileInputs(t *testing.T) {
	huge := strings.Repeat("x", 10<<10)
	evil := "<!channel> <@U0ADMIN> <https://evil.example|click> & ``` `"
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("line %d %s %s", i, evil, strings.Repeat("y", 50)))
	}
	var steps []string
	for i := range 100 {
		steps = append(steps, fmt.Sprintf("step %d %s %s", i, evil, strings.Repeat("z", 100)))
	}
	var findings []diagnose.Finding
	for i := range 60 {
		findings = append(findings, diagnose.Finding{
			Rule: "rule-" + evil, Title: fmt.Sprintf("title %d %s\n%s", i, evil, huge), Severity: diagnose.SeverityHigh,
			Risk: diagnose.Risk(evil), Evidence: many, Explanation: evil + huge + huge,
			Remedy: diagnose.Remedy{Automated: true, Action: evil, Target: evil + huge, Steps: steps},
		})
	}
	cases := map[string]diagnosisView{
		"10 KB names everywhere": {Snapshot: diagnose.Snapshot{
			Namespace: huge, Pod: huge, UID: huge, Node: huge, KafkaCluster: huge, NodeID: huge, Role: diagnose.RoleBroker,
			Containers: []diagnose.ContainerState{{Name: "k", WaitingReason: huge, RestartCount: 1 << 30,
				LastTerminated: &diagnose.Termination{Reason: huge, ExitCode: -1}}},
			Claims: []diagnose.VolumeClaim{{ClaimName: huge}, {ClaimName: evil}}, LogBytes: 1 << 40,
		}, Findings: findings, Requester: evil, Token: strings.Repeat("a", 2000), Now: renderNow},
		"control characters and mentions in the log": {Snapshot: diagnose.Snapshot{
			Namespace: "kafka", Pod: evil, Node: evil, Role: diagnose.RoleBroker,
		}, Findings: []diagnose.Finding{{Rule: "r", Title: "\x00\x1b[31m" + evil, Evidence: []string{evil, "\xff\xfe", ""},
			Remedy: diagnose.Remedy{Steps: []string{evil}}}}, Requester: "U0REQ", Now: renderNow},
		"nothing at all": {Now: renderNow},
		"empty strings":  {Snapshot: diagnose.Snapshot{Pod: " "}, Findings: []diagnose.Finding{{}}, Now: renderNow},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			blocks, fallback := renderDiagnosis(v)
			if p := validateBlocks(blocks); len(p) > 0 {
				t.Fatalf("invalid blocks:\n%s", strings.Join(p, "\n"))
			}
			raw := mustJSON(t, blocks)
			text := blockTexts(t, raw)
			if strings.Contains(text, "<!channel>") || strings.Contains(fallback, "<!channel>") {
				t.Error("an @channel survived")
			}
			if strings.Contains(text, "<@U0ADMIN>") || strings.Contains(text, "<https://evil") {
				t.Error("a mention or link from the input survived")
			}
			if slackview.RuneLen(fallback) > slackview.MaxFallbackText {
				t.Errorf("fallback of %d characters", slackview.RuneLen(fallback))
			}
		})
	}
}

func TestEvidenceIsTruncatedWithANote(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("ERROR %03d %s", i, strings.Repeat("q", 1000)))
	}
	text := evidenceText(lines)
	if slackview.RuneLen(text) > slackview.MaxSectionText {
		t.Fatalf("evidence of %d characters", slackview.RuneLen(text))
	}
	if !strings.Contains(text, "more line(s) not shown") || !strings.Contains(text, "long lines cut") {
		t.Errorf("no truncation note in %q", text[len(text)-200:])
	}
	if !strings.Contains(text, "ERROR 000") {
		t.Error("the first line is missing")
	}
}

func TestRenderStatus(t *testing.T) {
	c := newFakeCluster(t)
	pods, _ := c.KafkaPods(t.Context())
	blocks, fallback := renderStatus(pods, renderNow)
	if p := validateBlocks(blocks); len(p) > 0 {
		t.Fatalf("invalid blocks:\n%s", strings.Join(p, "\n"))
	}
	text := blockTexts(t, mustJSON(t, blocks))
	for _, want := range []string{"*kafka / foobar*", "*streaming / events*", "🔴 `foobar-kafka-broker-0` — CrashLoopBackOff, 37 restarts",
		"🟢 `foobar-kafka-broker-1` — Ready", "4 Kafka pod(s), 1 not healthy"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(fallback, "1 not healthy") {
		t.Errorf("fallback %q", fallback)
	}
	if strings.Index(text, "kafka / foobar") > strings.Index(text, "streaming / events") {
		t.Error("groups not sorted")
	}
}

func TestRenderStatusManyPods(t *testing.T) {
	var pods []diagnose.Snapshot
	for i := range 3000 {
		pods = append(pods, diagnose.Snapshot{Namespace: fmt.Sprintf("ns-%03d", i%120), KafkaCluster: "<!here>",
			Pod:        fmt.Sprintf("kafka-%d-%s", i, strings.Repeat("p", 100)),
			Containers: []diagnose.ContainerState{{Name: "kafka", WaitingReason: "CrashLoopBackOff", RestartCount: 3}}})
	}
	blocks, _ := renderStatus(pods, renderNow)
	if p := validateBlocks(blocks); len(p) > 0 {
		t.Fatalf("invalid blocks:\n%s", strings.Join(p, "\n"))
	}
	if !strings.Contains(blockTexts(t, mustJSON(t, blocks)), "not shown") {
		t.Error("no note about pods left out")
	}
}

func TestParentMessageDecision(t *testing.T) {
	snap := seedSnapshot(t)
	blocks := diagnosisView{Snapshot: snap, Findings: seedDiagnoser{}.Diagnose(snap), Requester: "U0REQ",
		Token: "x.y", ExpiresAt: renderNow.Add(time.Hour), Now: renderNow}.Message().Blocks
	m := slacktransport.NewMessages(1).Get("C1", "1.2", blocks)
	decide(m, "✅ Approved by <@U0APPROVER>", "⏳ starting")
	m.SetStatus("✅ done")
	got, _ := m.Snapshot()
	if slackview.HasButtons(got) {
		t.Fatal("buttons survived the decision")
	}
	if p := validateBlocks(got); len(p) > 0 {
		t.Fatalf("invalid blocks:\n%s", strings.Join(p, "\n"))
	}
	text := blockTexts(t, mustJSON(t, got))
	if !strings.Contains(text, "Approved by <@U0APPROVER>") || !strings.Contains(text, "✅ done") || strings.Contains(text, "starting") {
		t.Errorf("decided message:\n%s", text)
	}
}

func BenchmarkRenderDiagnosis(b *testing.B) {
	snap := seedSnapshot(b)
	findings := seedDiagnoser{}.Diagnose(snap)
	v := diagnosisView{Snapshot: snap, Findings: findings, Requester: "U0REQ", Token: "x.y", Now: renderNow}
	for b.Loop() {
		renderDiagnosis(v)
	}
}
