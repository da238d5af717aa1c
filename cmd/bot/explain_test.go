// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// seedLogPath is the seed incident's log, kept with the diagnose package's test data.
var seedLogPath = filepath.Join("..", "..", "internal", "diagnose", "testdata", "crashlogs", "34-kraft-metadata-log-unexpected-append-offset.log")

func explain(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return execute(t, stdin, append([]string{"explain"}, args...)...)
}

func TestExplainSeedLogJSON(t *testing.T) {
	cases := []struct {
		name      string
		args      []string
		automated bool
	}{
		{"flags before file, broker", []string{"--output", "json", "--role", "broker", seedLogPath}, true},
		{"flags after file, broker", []string{seedLogPath, "--output=json", "--role=broker"}, true},
		{"no role: unknown, manual", []string{"-o", "json", seedLogPath}, false},
		{"controller: manual", []string{"--role", "controller", seedLogPath, "--output", "json"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := explain(t, "", tc.args...)
			if err != nil {
				t.Fatalf("runExplain: %v", err)
			}
			dec := json.NewDecoder(strings.NewReader(out))
			var doc map[string]json.RawMessage
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("output is not one JSON object: %v\n%s", err, out)
			}
			if dec.More() {
				t.Fatalf("more than one JSON value in output:\n%s", out)
			}
			if len(doc) != 1 || doc["findings"] == nil {
				t.Fatalf("top-level keys: want only \"findings\", got %s", out)
			}
			var findings []struct {
				Rule       string   `json:"rule"`
				Title      string   `json:"title"`
				Severity   string   `json:"severity"`
				Confidence *float64 `json:"confidence"`
				Risk       string   `json:"risk"`
				Evidence   []string `json:"evidence"`
				Remedy     *struct {
					Automated *bool    `json:"automated"`
					Action    string   `json:"action"`
					Steps     []string `json:"steps"`
				} `json:"remedy"`
				Offsets *struct {
					NextOffset int64 `json:"nextOffset"`
				} `json:"offsets"`
			}
			if err := json.Unmarshal(doc["findings"], &findings); err != nil {
				t.Fatalf("findings: %v", err)
			}
			if len(findings) == 0 {
				t.Fatal("no findings for the seed log")
			}
			f := findings[0]
			if f.Rule != "metadata-log-offset-mismatch" || f.Title == "" || f.Severity != "critical" ||
				f.Confidence == nil || f.Risk == "" || len(f.Evidence) == 0 || f.Remedy == nil ||
				f.Remedy.Automated == nil || f.Remedy.Action == "" || len(f.Remedy.Steps) == 0 {
				t.Fatalf("first finding is missing fields: %+v", f)
			}
			if *f.Remedy.Automated != tc.automated {
				t.Errorf("automated = %v, want %v", *f.Remedy.Automated, tc.automated)
			}
			if f.Offsets == nil || f.Offsets.NextOffset != 57876669 {
				t.Errorf("offsets %+v", f.Offsets)
			}
		})
	}
}

func TestExplainNoMatchPrintsEmptyList(t *testing.T) {
	out, _, err := explain(t, "[2025-01-01 00:00:00,000] INFO all good (kafka.server.KafkaServer)\n", "--output", "json", "-")
	if err != nil {
		t.Fatalf("no match must not be an error: %v", err)
	}
	if strings.TrimSpace(out) != `{`+"\n"+`  "findings": []`+"\n"+`}` {
		t.Fatalf("output %q, want an empty findings list", out)
	}
	text, _, err := explain(t, "nothing\n", "-")
	if err != nil || !strings.Contains(text, "No known failure pattern") {
		t.Fatalf("text for no match: %q, %v", text, err)
	}
}

func TestExplainTextFromStdin(t *testing.T) {
	log := "\tprocess.roles = [broker]\n" +
		"[2025-04-28 08:22:01,792] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
		"kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 5 is less than the next offset 9. Log start offset = 1\n"
	out, _, err := explain(t, log, "-")
	if err != nil {
		t.Fatalf("runExplain: %v", err)
	}
	for _, want := range []string{"CRITICAL", "metadata-log-offset-mismatch", "Evidence:", "AUTOMATED after approval", "move-metadata-log", "next > log start", "inferred from the log"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestExplainErrors(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.log")}, false, "nope.log"},
		{"no file", nil, true, "missing FILE"},
		{"two files", []string{"a.log", "b.log"}, true, "one FILE"},
		{"bad output", []string{"--output", "yaml", seedLogPath}, true, "--output"},
		{"bad role", []string{"--role", "voter", seedLogPath}, true, "--role"},
		{"unknown flag", []string{"--colour", seedLogPath}, true, "colour"},
		{"broken rules file", []string{"--rules", filepath.Join(t.TempDir(), "none.yaml"), seedLogPath}, false, "reading rules file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := explain(t, "", tc.args...)
			if err == nil {
				t.Fatal("want an error")
			}
			if errors.Is(err, errUsage) != tc.usage {
				t.Errorf("errors.Is(err, errUsage) = %v, want %v (%v)", !tc.usage, tc.usage, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestExplainCheckLintsARulesFileWithLineNumbers(t *testing.T) {
	bad := "rules:\n- id: site-x\n  title: t\n  severity: urgent\n  confidence: 0.5\n  risk: none\n  explanation: x\n  match:\n    any: ['(?i)slow']\n  remedy: {label: l, steps: [s]}\n"
	out, _, err := explain(t, bad, "--check", "-")
	if !errors.Is(err, errRulesInvalid) {
		t.Fatalf("err %v, want errRulesInvalid", err)
	}
	for _, want := range []string{
		`standard input:4: rule "site-x": severity: "urgent" is not one of`,
		`standard input:9: warning: rule "site-x": match.any[0]: has no literal`,
		"standard input: 1 error(s), 1 warning(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	good := "rules:\n- id: site-y\n  title: t\n  severity: high\n  confidence: 0.5\n  risk: none\n  explanation: x\n  match:\n    any: ['VaultAgentException']\n  remedy: {label: l, steps: [s]}\n"
	if out, _, err := explain(t, good, "--check", "-"); err != nil || !strings.Contains(out, "0 error(s), 0 warning(s)") {
		t.Errorf("a clean file: err %v, output %s", err, out)
	}
}

// Issue 24 item 5: --list prints every class with its remedy kind.
func TestExplainListPrintsEveryClassWithItsRemedyKind(t *testing.T) {
	out, _, err := explain(t, "", "--list")
	if err != nil {
		t.Fatalf("explain --list: %v", err)
	}
	classes := diagnose.Default().Classes()
	if len(classes) < 46 {
		t.Fatalf("%d classes, want the 44 of the knowledge base plus container-oom-killed and unclassified-fatal", len(classes))
	}
	lines := strings.Split(out, "\n")
	for _, c := range classes {
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == c.Class && strings.Contains(l, c.Remedy) && strings.Contains(l, string(c.Risk)) {
				found = true
			}
		}
		if !found {
			t.Errorf("class %s (%s) is not listed with its remedy:\n%s", c.Class, c.Remedy, out)
		}
	}
	if !strings.Contains(out, "automated: move-metadata-log (broker-only)") || !strings.Contains(out, "manual: ") {
		t.Errorf("remedy kinds missing:\n%s", out)
	}
	if _, _, err := explain(t, "", "--list", "x.log"); err == nil {
		t.Error("--list with a FILE must be a usage error")
	}
}

// Issue 24 item 5: a log that shows Kafka dying gives a finding without
// pod status, quoting the terminal event and the root cause (synthetic,
// Kafka's layout, a cause no rule knows).
func TestExplainDyingLogIsNeverSilent(t *testing.T) {
	log := "[2025-05-01 10:00:02,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
		"org.apache.kafka.common.KafkaException: com.example.QuotaPlugin failed to initialise\n" +
		"Caused by: java.lang.IllegalStateException: quota backend unavailable\n"
	out, _, err := explain(t, log, "-")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	for _, want := range []string{"unclassified-fatal", "Exiting Kafka due to fatal exception", "Caused by: java.lang.IllegalStateException: quota backend unavailable", "the log shows the process dying"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "No known failure pattern") {
		t.Errorf("a dying log was reported as nothing:\n%s", out)
	}
}
