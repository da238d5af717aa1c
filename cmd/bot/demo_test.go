package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// demoStory is the story's key lines: the diagnosis by rule, the approval,
// the move of the metadata log out of the log dir, the broker Ready again.
var demoStory = []*regexp.Regexp{
	regexp.MustCompile(`@alice \(on call\) types:  /kafka diagnose broker-0`),
	regexp.MustCompile(`│ 🔴 kafka/foobar-kafka-broker-0: KRaft metadata log diverged`),
	regexp.MustCompile(`rule metadata-log-offset-mismatch`),
	regexp.MustCompile(`│ \[ Approve repair \]  \[ Reject \]`),
	regexp.MustCompile(`🧵 ✅ @bob approved\. Starting: move-metadata-log of __cluster_metadata-0`),
	regexp.MustCompile(`Moved /kafka-data/0/data/__cluster_metadata-0 to /kafka-data/0/kafkabot-backup-[0-9TZ]+-[a-z0-9]+/data/__cluster_metadata-0`),
	regexp.MustCompile(`🧵 ✅ Repair succeeded: the broker is back\.`),
	regexp.MustCompile(`✅ Approved by @bob at `),
	regexp.MustCompile(`(?m)^moved __cluster_metadata-0 to the backup kafkabot-backup-[0-9TZ]+-[a-z0-9]+/data/__cluster_metadata-0$`),
	regexp.MustCompile(`foobar-kafka-broker-0 +broker +1/1 +Running`),
	regexp.MustCompile(`foobar-kafka-broker-0 is Ready: a new pod`),
	regexp.MustCompile(`Lease kafkabot-repair-foobar-kafka-broker-0: state done, approved by U0BOB`),
	regexp.MustCompile(`The broker is back\. That is the whole story\.`),
}

// TestDemoPlaysTheWholeStory runs `bot demo` as a newcomer would and
// checks that it exits 0 having told the whole story, under busybox and
// under the system /bin/sh, approving with --yes or with Enter.
func TestDemoPlaysTheWholeStory(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		stdin     string
		wantShell string
	}{
		{"--yes, busybox", []string{"--yes", "--shell", "busybox"}, "", `ran under busybox sh`},
		{"--yes, system sh", []string{"--yes", "--shell", "sh"}, "", `ran under the system /bin/sh`},
		{"Enter approves", []string{"--shell", "auto"}, "\n", `ran under `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, append([]string{"demo", "--verbose"}, tt.args...), strings.NewReader(tt.stdin), &stdout, &stderr)
			out := stdout.String()
			if code != 0 {
				t.Fatalf("bot demo exited %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
			}
			for _, re := range append(demoStory, regexp.MustCompile(tt.wantShell)) {
				if !re.MatchString(out) {
					t.Errorf("the story lacks %q\nstdout:\n%s", re, out)
				}
			}
			if tt.stdin != "" && !strings.Contains(out, "Press Enter to click [ Approve repair ] as @bob") {
				t.Errorf("the demo did not ask for Enter:\n%s", out)
			}
		})
	}
}

// TestDemoMetricsExcerpt: --metrics ends with the bot's series after the
// story, including the diagnosis by rule and the repair by outcome.
func TestDemoMetricsExcerpt(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"demo", "--yes", "--metrics", "--verbose"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("bot demo --metrics exited %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	_, excerpt, ok := strings.Cut(stdout.String(), "GET /metrics")
	if !ok {
		t.Fatalf("no /metrics excerpt:\n%s", stdout.String())
	}
	for _, want := range []string{
		`kafkabot_commands_total{outcome="accepted",subcommand="diagnose"}`,
		`kafkabot_diagnoses_total{rule="metadata-log-offset-mismatch"}`,
		`kafkabot_repairs_total{outcome="repaired"}`,
		`kafkabot_ack_latency_seconds_count`,
		`kafkabot_socket_mode_connected 1`,
	} {
		if !strings.Contains(excerpt, want) {
			t.Errorf("/metrics excerpt lacks %s:\n%s", want, excerpt)
		}
	}
}

// TestDemoFailsLoudly: a story that cannot end with the broker repaired
// exits non-zero, so the happy-path test above can trust exit 0.
func TestDemoFailsLoudly(t *testing.T) {
	brokenRules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(brokenRules, []byte("rules: [this is not a rule\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantErr  string
	}{
		{"no approval: input ends", []string{"--shell", "auto"}, "", 1, "no approval"},
		{"a rules file that does not load", []string{"--yes", "--rules", brokenRules}, "", 1, "RULES_FILE"},
		{"an unknown shell", []string{"--yes", "--shell", "zsh"}, "", 1, `unknown shell "zsh"`},
		{"an unknown flag", []string{"--no-such-flag"}, "", 2, "flag provided but not defined"},
		{"an argument", []string{"broker-0"}, "", 2, `unexpected argument "broker-0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), append([]string{"demo", "--verbose"}, tt.args...), strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}
