// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"strings"
	"testing"
	"time"
)

func TestAlertDefaults(t *testing.T) {
	setEnv(t, nil)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.AlertChannel, c.RepeatInterval, c.ResolveGrace, c.GroupThreshold, c.GroupWait, c.SweepSummary, c.RestartAlerts, c.RestartWindow}
	want := []any{"", 4 * time.Hour, 5 * time.Minute, 3, 10 * time.Second, "unhealthy", 3, 10 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("alert setting %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestAlertSettingsValidated(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string // "" means valid
	}{
		{map[string]string{"ALERT_CHANNEL": "C0KAFKAOPS", "SWEEP_SUMMARY": "always", "ALERT_GROUP_WAIT": "0s"}, ""},
		{map[string]string{"ALERT_CHANNEL": "G012PRIVATE", "SWEEP_SUMMARY": "never"}, ""},
		{map[string]string{"ALERT_CHANNEL": "#kafka-alerts"}, "ALERT_CHANNEL"},
		{map[string]string{"ALERT_CHANNEL": "U012ABCDEF"}, "ALERT_CHANNEL"},
		{map[string]string{"ALERT_RESOLVE_GRACE": "0s"}, "ALERT_RESOLVE_GRACE"},
		{map[string]string{"ALERT_GROUP_THRESHOLD": "1"}, "ALERT_GROUP_THRESHOLD"},
		{map[string]string{"ALERT_GROUP_WAIT": "-1s"}, "ALERT_GROUP_WAIT"},
		{map[string]string{"ALERT_GROUP_WAIT": "1h"}, "ALERT_GROUP_WAIT"},
		{map[string]string{"SWEEP_SUMMARY": "sometimes"}, "SWEEP_SUMMARY"},
		{map[string]string{"RESTART_ALERT_THRESHOLD": "0"}, "RESTART_ALERT_THRESHOLD"},
		{map[string]string{"RESTART_ALERT_WINDOW": "-5m"}, "RESTART_ALERT_WINDOW"},
		{map[string]string{"ALERT_CHANNEL": "C0KAFKAOPS", "ALERTMANAGER_TOKEN": "0123456789abcdef"}, ""},
		{map[string]string{"ALERT_CHANNEL": "C0KAFKAOPS", "ALERTMANAGER_TOKEN": " 0123456789abcdef\n"}, ""},
		{map[string]string{"ALERTMANAGER_TOKEN": "0123456789abcdef"}, "needs ALERT_CHANNEL"},
		{map[string]string{"ALERT_CHANNEL": "C0KAFKAOPS", "ALERTMANAGER_TOKEN": "short-secret"}, "ALERTMANAGER_TOKEN: shorter than 16"},
	}
	for _, tt := range tests {
		setEnv(t, tt.env)
		_, err := Load()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Load(%v) = %v, want valid", tt.env, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Load(%v) error = %v, want it to name %s", tt.env, err, tt.want)
		}
	}
}

// TestAlertmanagerTokenIsSecret: the token is trimmed, redacted from logs
// (it is among Secrets) and never echoed by a validation error.
func TestAlertmanagerTokenIsSecret(t *testing.T) {
	setEnv(t, map[string]string{"ALERT_CHANNEL": "C0KAFKAOPS", "ALERTMANAGER_TOKEN": "am-token-0123456789\n"})
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.AlertmanagerToken != "am-token-0123456789" {
		t.Errorf("token %q, want it trimmed", c.AlertmanagerToken)
	}
	found := false
	for _, s := range c.Secrets() {
		found = found || s == c.AlertmanagerToken
	}
	if !found {
		t.Error("ALERTMANAGER_TOKEN is not among the secrets the logger redacts")
	}
	setEnv(t, map[string]string{"ALERT_CHANNEL": "C0KAFKAOPS", "ALERTMANAGER_TOKEN": "short-secret"})
	if _, err := Load(); err == nil || strings.Contains(err.Error(), "short-secret") {
		t.Errorf("error %v: want a refusal that does not echo the token", err)
	}
}
