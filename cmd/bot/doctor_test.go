// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorCommandReportsEveryConfigurationError: `bot doctor` with a
// configuration that is wrong in several ways lists each problem with what
// to do, in one run, and exits 1.
func TestDoctorCommandReportsEveryConfigurationError(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	missing := filepath.Join(t.TempDir(), "absent-kubeconfig")
	for k, v := range map[string]string{
		"WORKERS": "many", "LOG_FORMAT": "xml", "ALERT_CHANNEL": "#kafka-alerts", "KUBECONFIG": missing,
		"SLACK_APP_TOKEN": "", "SLACK_BOT_TOKEN": "", "APPROVAL_SECRET": "",
	} {
		t.Setenv(k, v)
	}
	code, stdout, stderr := runCLI(t, "doctor")
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr: %s", code, stderr)
	}
	for _, want := range []string{
		`✗ config: WORKERS "many": want a whole number`,
		`✗ config: LOG_FORMAT "xml"`,
		`✗ config: ALERT_CHANNEL "#kafka-alerts"`,
		"✗ config: SLACK_APP_TOKEN", "✗ config: SLACK_BOT_TOKEN", "✗ config: APPROVAL_SECRET",
		"✗ config: loading Kubernetes client configuration: KUBECONFIG=" + missing,
		"fix: ",
		"7 problem(s) found",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("bot doctor's report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "bot doctor: 7 problem(s) found") {
		t.Errorf("stderr %q", stderr)
	}
}
