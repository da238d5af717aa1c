// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build !nodemo

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/klog/v2"

	"github.com/kafka-chatops/kafkabot/internal/logging"
)

// demoStory is the story's key lines, in the order they must appear: the
// health sweep's alert in #kafka-alerts (with Approve / Reject and the
// Silence menu), the diagnosis and its details reply, the approval, the move of the metadata
// log out of the log dir, the broker Ready again, the alert resolved.
var demoStory = []*regexp.Regexp{
	regexp.MustCompile(`foobar-kafka-broker-0 +broker +0/1 +CrashLoopBackOff`),
	regexp.MustCompile(`── 2\. The alert, in #kafka-alerts`),
	regexp.MustCompile(`health sweep leads \(Lease kafka-bot/kafkabot-leader, held by kafkabot-demo\)`),
	regexp.MustCompile(`│ 🔴 kind-demo/kafka/foobar-kafka-broker-0: KRaft metadata log diverged`),
	regexp.MustCompile(`│ 🚨 Alert from the health sweep · noticed CrashLoopBackOff`),
	regexp.MustCompile(`│ \[ Approve repair \]  \[ Reject \]  \[ ⋯ \]`),
	regexp.MustCompile(`on record in ConfigMap kafka-bot/kafkabot-alert-state`),
	regexp.MustCompile(`@alice \(on call\) types:  /kafka diagnose broker-0`),
	regexp.MustCompile(`│ 🔴 kind-demo/kafka/foobar-kafka-broker-0: KRaft metadata log diverged`),
	regexp.MustCompile(`│ \[ Approve repair \]  \[ Reject \]`),
	regexp.MustCompile(`rule metadata-log-offset-mismatch`),
	regexp.MustCompile(`🧵 ✅ @bob approved\. Starting: move-metadata-log of __cluster_metadata-0`),
	regexp.MustCompile(`Moved /kafka-data/0/data/__cluster_metadata-0 to /kafka-data/0/kafkabot-backup-[0-9TZ]+-[a-z0-9]+/data/__cluster_metadata-0`),
	regexp.MustCompile(`🧵 ✅ Repair succeeded: the broker is back\.`),
	regexp.MustCompile(`✅ Approved by @bob at `),
	regexp.MustCompile(`(?m)^moved __cluster_metadata-0 to the backup kafkabot-backup-[0-9TZ]+-[a-z0-9]+/data/__cluster_metadata-0$`),
	regexp.MustCompile(`foobar-kafka-broker-0 +broker +1/1 +Running`),
	regexp.MustCompile(`foobar-kafka-broker-0 is Ready: a new pod`),
	regexp.MustCompile(`Lease kafkabot-repair-foobar-kafka-broker-0: state done, approved by U0BOB`),
	regexp.MustCompile(`── 7\. The alert resolves`),
	regexp.MustCompile(`for ALERT_RESOLVE_GRACE \(5m0s\): a sweep now \(what /kafka sweep asks for\) leaves it open`),
	regexp.MustCompile(`│ ✅ Resolved · kafka/foobar-kafka-broker-0: KRaft metadata log diverged`),
	regexp.MustCompile(`│ ✅ Resolved: kafka/foobar-kafka-broker-0 is Ready again and stayed Ready for the grace period\.`),
	regexp.MustCompile(`│ Fired from [0-9-]+ [0-9:]+ UTC to [0-9-]+ [0-9:]+ UTC \([0-9]+m0s\)\.`),
	regexp.MustCompile(`🧵 ✅ kafka/foobar-kafka-broker-0 is Ready again and stayed Ready for the grace period\. Finding metadata-log-offset-mismatch fired since `),
	regexp.MustCompile(`The broker is back and its alert is resolved\. That is the whole story\.`),
}

// missingInOrder returns the first of res that does not match out after
// the previous one's match, or nil when all match in order.
func missingInOrder(out string, res []*regexp.Regexp) *regexp.Regexp {
	rest := out
	for _, re := range res {
		loc := re.FindStringIndex(rest)
		if loc == nil {
			return re
		}
		rest = rest[loc[1]:]
	}
	return nil
}

// demoOnce is a line the story must print exactly once: one alert, and
// no second one about the same crash loop.
var demoOnce = []string{"🚨 Alert from the health sweep", "stayed Ready for the grace period. Finding"}

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
			if re := missingInOrder(out, demoStory); re != nil {
				t.Errorf("the story lacks %q (in order)\nstdout:\n%s", re, out)
			}
			if re := regexp.MustCompile(tt.wantShell); !re.MatchString(out) {
				t.Errorf("the story lacks %q\nstdout:\n%s", re, out)
			}
			for _, line := range demoOnce {
				if n := strings.Count(out, line); n != 1 {
					t.Errorf("the story prints %q %d times, want once", line, n)
				}
			}
			if tt.stdin != "" && !strings.Contains(out, "Press Enter to click [ Approve repair ] as @bob") {
				t.Errorf("the demo did not ask for Enter:\n%s", out)
			}
		})
	}
}

// TestDemoMetricsExcerpt: --metrics ends with the bot's series after the
// story, including the diagnosis by rule, the repair by outcome and the
// alert fired and resolved.
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
		`kafkabot_alerts_total{state="fired"}`,
		`kafkabot_alerts_total{state="resolved"}`,
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
		{"an unknown shell", []string{"--yes", "--shell", "zsh"}, "", 2, `--shell "zsh": want auto, busybox or sh`},
		{"an unknown flag", []string{"--no-such-flag"}, "", 2, "unknown flag: --no-such-flag"},
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

// TestDemoLoggerRoutesKlog: what client-go logs through klog during bot
// demo is a record of the demo bot's text logger (logger=klog), on the
// same writer as the bot's own lines, not klog's own format.
func TestDemoLoggerRoutesKlog(t *testing.T) {
	var buf logging.Buffer
	t.Cleanup(klog.ClearLogger)
	log := demoLogger(&buf, slog.LevelDebug)
	log.Info("bot line")
	klog.Warningf("Use tokens from the TokenRequest API (%s)", "w1")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want the bot's line and the klog one, got:\n%s", buf.String())
	}
	if !strings.HasPrefix(lines[1], "time=") || !strings.Contains(lines[1], `msg="Use tokens from the TokenRequest API (w1)"`) || !strings.Contains(lines[1], "logger=klog") {
		t.Errorf("klog line %q; want a slog text record with logger=klog", lines[1])
	}
}
