// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRules(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "site-rules.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const siteRule = `
rules:
- id: site-vault-agent-missing
  title: The Vault agent did not render the broker's secrets
  severity: high
  confidence: 0.8
  risk: none
  explanation: Our brokers read their TLS material from a Vault agent sidecar; it was not there.
  match:
    all:
    - 'vault-agent: (?P<what>template) render failed'
  remedy:
    label: check-vault
    steps:
    - Check the vault-agent container's log and the Vault role binding.
`

func TestSiteRulesFileAddsARule(t *testing.T) {
	extra, err := LoadRulesFile(writeRules(t, siteRule))
	if err != nil {
		t.Fatalf("LoadRulesFile: %v", err)
	}
	e, err := NewEngine(extra...)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	got := e.Diagnose(Snapshot{Log: "2025-01-01 vault-agent: template render failed: permission denied\n"})
	if len(got) != 1 || got[0].Rule != "site-vault-agent-missing" {
		t.Fatalf("got %v, want the site rule", ruleIDs(got))
	}
	if got[0].Remedy.Action != "check-vault" || got[0].Remedy.Automated {
		t.Errorf("remedy %+v", got[0].Remedy)
	}
	// Built-in rules still work next to it.
	got = e.Diagnose(Snapshot{Log: readLog(t, "testdata/crashlogs/71-too-many-open-files-acceptor.log")})
	if len(got) == 0 || got[0].Class != "fd-limit" || got[0].Remedy.Action != "raise-nofile" {
		t.Errorf("built-in rule lost: %v", ruleIDs(got))
	}
}

func TestSiteRuleOverridesBuiltinWithSameID(t *testing.T) {
	extra, err := LoadRulesFile(writeRules(t, `
rules:
- id: port-in-use
  title: Port clash (our sidecar takes 9092 on hostNetwork nodes)
  severity: medium
  confidence: 0.99
  risk: none
  explanation: On our hostNetwork pool the metrics sidecar binds 9092.
  match:
    any: ['Address already in use']
  remedy:
    label: move-sidecar
    steps: ['Move the sidecar to 9404.']
`))
	if err != nil {
		t.Fatalf("LoadRulesFile: %v", err)
	}
	e, err := NewEngine(extra...)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	if n, m := len(e.Rules()), len(Default().Rules()); n != m {
		t.Errorf("override changed the rule count from %d to %d", m, n)
	}
	got := e.Diagnose(Snapshot{Log: readLog(t, "testdata/crashlogs/59-port-in-use-k8s-yolean.log")})
	if len(got) == 0 || got[0].Rule != "port-in-use" || got[0].Remedy.Action != "move-sidecar" || got[0].Severity != SeverityMedium {
		t.Fatalf("site override not applied: %+v", got)
	}
}

func TestBrokenSiteRulesGiveClearErrors(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string // every one must appear in the error
	}{
		{"bad regex", strings.Replace(siteRule, `'vault-agent: (?P<what>template) render failed'`, `'vault-agent: (unclosed'`, 1),
			[]string{"site-vault-agent-missing", "match.all[0]", "invalid regular expression"}},
		{"unknown severity", strings.Replace(siteRule, "severity: high", "severity: huge", 1),
			[]string{"site-vault-agent-missing", "severity", `"huge"`}},
		{"misspelt field", strings.Replace(siteRule, "  match:", "  matches:", 1),
			[]string{"site-vault-agent-missing", `unknown field "matches"`}},
		{"automated action that does not exist", siteRule + `    automated:
      action: rm-rf
      target: data
      steps: [nope]
`, []string{"remedy.automated.action", `"rm-rf"`}},
		{"targetFrom without that group", strings.Replace(siteRule, "    steps:\n    - Check", "    automated:\n      action: move-foreign-dir\n      targetFrom: dir\n      steps: [x]\n    steps:\n    - Check", 1),
			[]string{"remedy.automated.targetFrom", `"dir"`}},
		{"confidence out of range", strings.Replace(siteRule, "confidence: 0.8", "confidence: 3", 1),
			[]string{"site-vault-agent-missing", "confidence"}},
		{"no rules list", "rule:\n- id: x\n", []string{"unknown field"}},
		{"not YAML", "rules: [\n", []string{"not valid YAML"}},
		{"duplicate id", siteRule + strings.TrimPrefix(siteRule, "\nrules:\n"), []string{"defined twice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeRules(t, tc.body)
			_, err := LoadRulesFile(path)
			if err == nil {
				t.Fatal("broken rules file was accepted")
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := LoadRulesFile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "reading rules file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewEngineRejectsInvalidRule(t *testing.T) {
	_, err := NewEngine(Rule{ID: "Bad ID"})
	if err == nil || !strings.Contains(err.Error(), `rule "Bad ID"`) || !strings.Contains(err.Error(), "id:") {
		t.Fatalf("err = %v", err)
	}
}

func TestRequiredLiterals(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`UnexpectedAppendOffsetException`, []string{"UnexpectedAppendOffsetException"}},
		{`Found directory (?P<dir>[^,]+), '`, []string{"Found directory "}},
		{`(?:First offset|Last offset of the first batch) (?P<first>\d+)`, []string{"First offset", "Last offset of the first batch"}},
		{`Log start offset = (?P<logstart>\d+)`, []string{"Log start offset = "}},
		{`(?i)heap space`, nil},
		{`a.b`, nil},
		{`\d+`, nil},
	}
	for _, tc := range cases {
		got := requiredLiterals(tc.expr)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("requiredLiterals(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestLiteralScannerFindsOverlappingKeywords(t *testing.T) {
	m := newLiteralScanner([]string{"he", "she", "hers", "his"})
	var got []string
	m.scan(0, []byte("ushers"), func(k, end int) {
		got = append(got, []string{"he", "she", "hers", "his"}[k]+"@"+string(rune('0'+end)))
	})
	if want := "she@3 he@3 hers@5"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
}

// TestReadmeExampleIsValid keeps the documented example rule loadable.
func TestReadmeExampleIsValid(t *testing.T) {
	doc := readLog(t, "README.md")
	start := strings.Index(doc, "```yaml\n")
	if start < 0 {
		t.Fatal("README.md has no yaml example")
	}
	body := doc[start+len("```yaml\n"):]
	body = body[:strings.Index(body, "```")]
	rules, err := ParseRules([]byte(body), "README.md example")
	if err != nil {
		t.Fatalf("README example: %v", err)
	}
	e, err := NewEngine(rules...)
	if err != nil {
		t.Fatal(err)
	}
	got := e.Diagnose(Snapshot{Log: "vault-agent: template render failed\nNoSuchFileException: /vault/secrets/ks.jks\n"})
	if len(got) == 0 || got[0].Rule != "site-vault-agent-missing" {
		t.Fatalf("README example rule did not fire: %v", ruleIDs(got))
	}
}

// A rule selected by class (match.byClass) has no pattern of its own: the
// structural reader names its class and the rule gives the finding its
// title and remedy. It cannot also carry patterns or an automated remedy.
func TestByClassRules(t *testing.T) {
	log := "[2025-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
		"java.io.IOException: Too many open files\n\tat kafka.log.LogManager.loadLog(LogManager.scala:300)\n"
	got := Default().Diagnose(Snapshot{Log: log})
	if len(got) == 0 || got[0].Rule != "fd-limit" || got[0].Remedy.Action != "raise-nofile" || len(got[0].Remedy.Steps) == 0 {
		t.Fatalf("got %v, want the fd-limit rule's finding", ruleIDs(got))
	}
	for _, r := range Default().Rules() {
		if r.ID == "fd-limit" && (!r.Match.ByClass || len(r.Match.Any)+len(r.Match.All) > 0) {
			t.Errorf("fd-limit is not selected by class: %+v", r.Match)
		}
	}
	bad := Rule{ID: "site-by-class", Title: "x", Severity: SeverityHigh, Confidence: 0.5, Risk: RiskNone, Explanation: "x",
		Match: LogMatch{ByClass: true, Any: []string{"boom"}}, Remedy: RemedySpec{Label: "x", Steps: []string{"x"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "byClass") {
		t.Errorf("byClass with a pattern: error %v, want one naming byClass", err)
	}
	bad.Match.Any = nil
	if err := bad.Validate(); err != nil {
		t.Errorf("byClass alone: %v", err)
	}
}
