// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// A site rules file with one mistake per rule; each issue must name the
// line it is on.
const lintSample = `rules:
- id: good-rule
  title: fine
  severity: high
  confidence: 0.5
  risk: none
  explanation: x
  match:
    any:
    - 'SomeException: boom'
  remedy: {label: l, steps: [s]}
- id: bad-regex
  title: t
  severity: high
  confidence: 0.5
  risk: none
  explanation: x
  match:
    all:
    - 'fine literal here'
    - 'broken (regex'
  remedy: {label: l, steps: [s]}
- id: typo-field
  title: t
  severity: high
  confidence: 0.5
  risk: none
  explanation: x
  match:
    anyy:
    - 'SomeException'
  remedy: {label: l, steps: [s]}
- id: bad-severity
  title: t
  severity: urgent
  confidence: 1.5
  risk: none
  explanation: x
  match:
    any: ['(?i)slow pattern']
  remedy: {label: l, steps: [s]}
- id: good-rule
  title: again
  severity: low
  confidence: 0.5
  risk: none
  explanation: x
  match: {any: ['OtherException']}
  remedy: {label: l, steps: [s]}
- id: heap-oom
  title: override
  severity: low
  confidence: 0.5
  risk: none
  explanation: x
  match: {any: ['OutOfMemoryError: Java heap space']}
  remedy: {label: l, steps: [s]}
`

func TestLintRulesNamesLines(t *testing.T) {
	issues := LintRules([]byte(lintSample), []string{"heap-oom"})
	want := []struct {
		line    int
		warning bool
		text    string
	}{
		{21, false, `rule "bad-regex": match.all[1]: invalid regular expression`},
		{30, false, `rule "typo-field": anyy: unknown field`},
		{35, false, `rule "bad-severity": severity: "urgent" is not one of`},
		{36, false, `rule "bad-severity": confidence: 1.5 is not in (0, 1]`},
		{40, true, `rule "bad-severity": match.any[0]: has no literal of 4+ bytes`},
		{42, false, `rule "good-rule": id: is defined twice in this file (first on line 2)`},
		{50, true, `rule "heap-oom": id: replaces the built-in rule`},
	}
	if len(issues) != len(want) {
		for _, i := range issues {
			t.Log(i)
		}
		t.Fatalf("%d issues, want %d", len(issues), len(want))
	}
	for k, w := range want {
		got := issues[k]
		if got.Line != w.line || got.Warning != w.warning || !strings.Contains(got.String(), w.text) {
			t.Errorf("issue %d = %q (line %d, warning %v), want line %d warning %v containing %q",
				k, got.String(), got.Line, got.Warning, w.line, w.warning, w.text)
		}
	}
}

func TestLintRulesFileLevelErrors(t *testing.T) {
	cases := []struct {
		name, data string
		line       int
		text       string
	}{
		{"YAML syntax", "rules:\n- id: x\n  title: [unclosed\n", 3, "not valid YAML"},
		{"no rules", "rulez:\n- id: x\n", 1, "unknown top-level field"},
		{"empty list", "rules: []\n", 1, "no rules"},
		{"empty file", "", 1, "empty file"},
	}
	for _, tc := range cases {
		issues := LintRules([]byte(tc.data), nil)
		if len(issues) == 0 || !strings.Contains(issues[0].String(), tc.text) {
			t.Errorf("%s: issues %v, want %q first", tc.name, issues, tc.text)
			continue
		}
		if issues[0].Line < 1 || issues[0].Line > tc.line {
			t.Errorf("%s: line %d, want 1..%d", tc.name, issues[0].Line, tc.line)
		}
	}
}

// The shipped rules.yaml lints clean: no error and no warning.
func TestEmbeddedRulesLintClean(t *testing.T) {
	for _, i := range LintRules(builtinRules, nil) {
		t.Errorf("rules.yaml:%s", i)
	}
}

// Every built-in rule with hand patterns says, under "match:", why a
// template of the catalogue cannot say the same (rules.yaml's header).
func TestEveryHandPatternSaysWhy(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(builtinRules, &doc); err != nil {
		t.Fatal(err)
	}
	rules := mapValue(doc.Content[0], "rules")
	if rules == nil || len(rules.Content) == 0 {
		t.Fatal("rules.yaml has no rules")
	}
	for _, item := range rules.Content {
		id := mapValue(item, "id").Value
		match := mapValue(item, "match")
		if match == nil || (mapValue(match, "all") == nil && mapValue(match, "any") == nil) {
			continue
		}
		var comments strings.Builder
		for _, n := range match.Content {
			comments.WriteString(n.HeadComment + n.LineComment)
		}
		if !strings.Contains(comments.String(), "Hand pattern") {
			t.Errorf("rule %s: its patterns do not say why a template cannot (a comment beginning \"Hand pattern\" under match:)", id)
		}
	}
}
