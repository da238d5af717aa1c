// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// setEnv sets the given variables for the test and clears every other
// variable the Config reads, so the developer's environment cannot leak in.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, name := range []string{"SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "SLACK_API_URL", "KUBECONFIG",
		"KAFKA_NAMESPACES", "KAFKA_POD_SELECTOR", "ALERT_CHANNEL", "SWEEP_SCHEDULE", "ALERT_REPEAT_INTERVAL",
		"ALERT_RESOLVE_GRACE", "ALERT_GROUP_THRESHOLD", "ALERT_GROUP_WAIT", "SWEEP_SUMMARY", "RESTART_ALERT_THRESHOLD", "RESTART_ALERT_WINDOW",
		"APPROVERS", "APPROVAL_SECRET", "APPROVAL_TTL", "FORBID_SELF_APPROVAL", "DRY_RUN", "DEBUG_IMAGE",
		"REPAIR_TIMEOUT", "LOG_TAIL_BYTES", "LOG_TAIL_LINES", "RULES_FILE", "WORKERS", "QUEUE_SIZE", "DIAGNOSIS_SHARE_WINDOW", "LEADER_ELECTION",
		"POD_NAMESPACE", "LOG_LEVEL", "LOG_FORMAT", "HTTP_ADDR", "REQUIRED_APPROVALS", "APPROVAL_CHANNELS",
		"REPAIR_WITHOUT_VISIBLE_CONTROLLER", "ALERTMANAGER_TOKEN", "REPAIR_SETTLE"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func TestLoadDefaults(t *testing.T) {
	setEnv(t, nil)
	c, err := Load()
	if err != nil {
		t.Fatalf("Load with no environment: %v", err)
	}
	if c.SlackAPIURL != "https://slack.com/api/" || c.SweepSchedule != "@every 5m" || c.HTTPAddr != ":8080" {
		t.Errorf("defaults: api=%q schedule=%q http=%q", c.SlackAPIURL, c.SweepSchedule, c.HTTPAddr)
	}
	if len(c.KafkaNamespaces) != 0 {
		t.Errorf("KafkaNamespaces = %v, want empty (all)", c.KafkaNamespaces)
	}
}

// TestSafety09_ApprovalDefaults: by default the requester may not approve
// their own repair, one approver suffices, and no channel beyond the alert
// channel is an approval channel; the quorum gate refuses without a visible
// controller.
func TestSafety09_ApprovalDefaults(t *testing.T) {
	setEnv(t, nil)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if !c.ForbidSelfApproval || c.RequiredApprovals != 1 || len(c.ApprovalChannels) != 0 || c.RepairWithoutVisibleController {
		t.Errorf("defaults: forbid self-approval %t, required %d, approval channels %v, repair without visible controller %t",
			c.ForbidSelfApproval, c.RequiredApprovals, c.ApprovalChannels, c.RepairWithoutVisibleController)
	}
	setEnv(t, map[string]string{"APPROVAL_CHANNELS": " C0OPS, G0PRIVATE ", "APPROVERS": "U0A,U0B", "REQUIRED_APPROVALS": "2"})
	if c, err = Load(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.ApprovalChannels, "|") != "C0OPS|G0PRIVATE" || c.RequiredApprovals != 2 {
		t.Errorf("ApprovalChannels = %q, RequiredApprovals = %d", c.ApprovalChannels, c.RequiredApprovals)
	}
}

func TestLoadLists(t *testing.T) {
	setEnv(t, map[string]string{"KAFKA_NAMESPACES": " kafka, ,streaming ", "APPROVERS": "U012ABCDEF,W0XYZ"})
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.KafkaNamespaces, "|") != "kafka|streaming" {
		t.Errorf("KafkaNamespaces = %q", c.KafkaNamespaces)
	}
	if strings.Join(c.Approvers, "|") != "U012ABCDEF|W0XYZ" {
		t.Errorf("Approvers = %q", c.Approvers)
	}
}

func TestLoadNamesTheWrongVariable(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SWEEP_SCHEDULE": "every five minutes"}, "SWEEP_SCHEDULE"},
		{map[string]string{"REQUIRED_APPROVALS": "0"}, "REQUIRED_APPROVALS"},
		{map[string]string{"REQUIRED_APPROVALS": "2", "APPROVERS": "U0ONLYONE"}, "REQUIRED_APPROVALS 2: APPROVERS lists only 1"},
		{map[string]string{"APPROVAL_CHANNELS": "D0DIRECTMSG"}, "APPROVAL_CHANNELS"},
		{map[string]string{"APPROVAL_CHANNELS": "#kafka-ops"}, "APPROVAL_CHANNELS"},
		{map[string]string{"SLACK_API_URL": "ftp://example.invalid/"}, "SLACK_API_URL"},
		{map[string]string{"SLACK_API_URL": "http://127.0.0.1:9/api"}, "must end with /"},
		{map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL"},
		{map[string]string{"LOG_FORMAT": "xml"}, "LOG_FORMAT"},
		{map[string]string{"HTTP_ADDR": "8080"}, "HTTP_ADDR"},
		{map[string]string{"APPROVERS": "alice"}, "APPROVERS"},
		{map[string]string{"WORKERS": "0"}, "WORKERS"},
		{map[string]string{"WORKERS": "many"}, "WORKERS"},
		{map[string]string{"QUEUE_SIZE": "-1"}, "QUEUE_SIZE"},
		{map[string]string{"DIAGNOSIS_SHARE_WINDOW": "-5s"}, "DIAGNOSIS_SHARE_WINDOW"},
		{map[string]string{"DIAGNOSIS_SHARE_WINDOW": "2h"}, "DIAGNOSIS_SHARE_WINDOW"},
		{map[string]string{"APPROVAL_TTL": "-1m"}, "APPROVAL_TTL"},
		{map[string]string{"REPAIR_SETTLE": "-1s"}, "REPAIR_SETTLE"},
		{map[string]string{"REPAIR_SETTLE": "soon"}, "REPAIR_SETTLE"},
		{map[string]string{"LOG_TAIL_BYTES": "0"}, "LOG_TAIL_BYTES"},
		{map[string]string{"CLUSTER_NAME": strings.Repeat("c", 64)}, "CLUSTER_NAME"},
		{map[string]string{"CLUSTER_NAME": "prod\neu"}, "CLUSTER_NAME"},
	}
	for _, tt := range tests {
		setEnv(t, tt.env)
		_, err := Load()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%v) error = %v, want it to mention %q", tt.env, err, tt.want)
		}
	}
}

func TestValidateServeNeverEchoesSecrets(t *testing.T) {
	const secret = "xoxp-not-a-bot-token-but-secret-value"
	setEnv(t, map[string]string{"SLACK_APP_TOKEN": "xapp-placeholder-app-token", "SLACK_BOT_TOKEN": secret, "APPROVAL_SECRET": "short"})
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	err = c.ValidateServe()
	if err == nil || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
		t.Fatalf("ValidateServe = %v, want a SLACK_BOT_TOKEN error", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error echoes the secret: %v", err)
	}
	c.SlackBotToken = "xoxb-test-placeholder"
	if err := c.ValidateServe(); err == nil || !strings.Contains(err.Error(), "APPROVAL_SECRET") {
		t.Errorf("ValidateServe = %v, want an APPROVAL_SECRET error", err)
	}
	c.ApprovalSecret = strings.Repeat("k", 32)
	if err := c.ValidateServe(); err != nil {
		t.Errorf("ValidateServe with valid values: %v", err)
	}
	if got := c.Secrets(); len(got) != 3 {
		t.Errorf("Secrets() returned %d values, want 3", len(got))
	}
}

// TestREADMEConfigTable keeps the README's configuration table generated
// from the struct tags: edit the tags, then paste MarkdownTable() output.
func TestREADMEConfigTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("reading README.md: %v", err)
	}
	if !strings.Contains(string(readme), MarkdownTable()) {
		t.Errorf("README.md's configuration table is out of date; replace it with:\n%s", MarkdownTable())
	}
}

// TestLoadReportsEveryErrorAtOnce: a configuration with several wrong
// variables gets them all in one run, each named with what it wants, and
// never a Go type name (issue 25 item 6: they came one per run, and an
// unreadable number said "converting 'many' to type int").
func TestLoadReportsEveryErrorAtOnce(t *testing.T) {
	setEnv(t, map[string]string{
		"WORKERS":           "many",
		"REPAIR_TIMEOUT":    "ten minutes",
		"DRY_RUN":           "maybe",
		"LOG_FORMAT":        "xml",
		"ALERT_CHANNEL":     "#kafka-alerts",
		"APPROVERS":         "alice",
		"SLACK_API_URL":     "http://127.0.0.1:9/api",
		"QUEUE_SIZE":        "-1",
		"LOG_TAIL_LINES":    "0",
		"APPROVAL_CHANNELS": "D0DIRECT",
	})
	_, err := Load()
	if err == nil {
		t.Fatal("Load accepted a configuration with ten wrong variables")
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load error is a %T, want Errors: %v", err, err)
	}
	msg := err.Error()
	for _, want := range []string{
		"10 configuration errors:",
		`WORKERS "many": want a whole number`,
		`REPAIR_TIMEOUT "ten minutes": want a duration`,
		`DRY_RUN "maybe": want true or false`,
		"LOG_FORMAT", "ALERT_CHANNEL", "APPROVERS", "SLACK_API_URL", "QUEUE_SIZE", "LOG_TAIL_LINES", "APPROVAL_CHANNELS",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Load error does not mention %q:\n%s", want, msg)
		}
	}
	if len(errs) != 10 {
		t.Errorf("Load reported %d errors, want 10 (one per wrong variable):\n%s", len(errs), msg)
	}
	for _, goName := range []string{"type int", "int64", "time.Duration", "strconv", "envconfig", "bool"} {
		if strings.Contains(msg, goName) {
			t.Errorf("Load error shows the Go name %q:\n%s", goName, msg)
		}
	}
}

// TestValidateServeReportsEveryError: the three values serve needs are all
// reported at once.
func TestValidateServeReportsEveryError(t *testing.T) {
	setEnv(t, nil)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	err = c.ValidateServe()
	if err == nil {
		t.Fatal("ValidateServe accepted no tokens")
	}
	for _, want := range []string{"3 configuration errors", "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "APPROVAL_SECRET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateServe error does not mention %q:\n%v", want, err)
		}
	}
}

// TestLoadServeReportsBothKinds: bot serve's load reports a wrong variable
// and a missing token in the same run.
func TestLoadServeReportsBothKinds(t *testing.T) {
	setEnv(t, map[string]string{"WORKERS": "0", "SLACK_APP_TOKEN": "xapp-placeholder-app-token", "SLACK_BOT_TOKEN": "xoxb-1-placeholder"})
	_, err := LoadServe()
	if err == nil || !strings.Contains(err.Error(), "WORKERS 0") || !strings.Contains(err.Error(), "APPROVAL_SECRET") {
		t.Fatalf("LoadServe error = %v, want both WORKERS and APPROVAL_SECRET", err)
	}
	setEnv(t, map[string]string{"SLACK_APP_TOKEN": "xapp-placeholder-app-token", "SLACK_BOT_TOKEN": "xoxb-1-placeholder", "APPROVAL_SECRET": strings.Repeat("k", 32)})
	if _, err := LoadServe(); err != nil {
		t.Fatalf("LoadServe with a valid environment: %v", err)
	}
}
