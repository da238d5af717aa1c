// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

func TestParseRepairArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    repairArgs
		wantErr string
	}{
		{args: []string{"broker-0"}, want: repairArgs{pod: "broker-0"}},
		{args: []string{"-n", "kafka", "broker-0", "--yes"}, want: repairArgs{cluster: clusterFlags{namespace: "kafka"}, pod: "broker-0", yes: true}},
		{args: []string{"broker-0", "--dry-run", "-n", "kafka"}, want: repairArgs{cluster: clusterFlags{namespace: "kafka"}, pod: "broker-0", dryRun: true}},
		{args: []string{"broker-0", "--context", "prod", "--kubeconfig", "/k"}, want: repairArgs{cluster: clusterFlags{context: "prod", kubeconfig: "/k"}, pod: "broker-0"}},
		{args: nil, wantErr: "missing POD"},
		{args: []string{"a", "b"}, wantErr: "one POD expected, got 2"},
		{args: []string{"--force", "a"}, wantErr: "unknown flag: --force"},
		{args: []string{"-yes", "a"}, wantErr: "unknown shorthand flag"},
		{args: []string{"../etc"}, wantErr: `invalid name: pod "../etc"`},
	}
	for _, tc := range tests {
		var got repairArgs
		called := false
		cmd := newRepairCmd(func(_ context.Context, a repairArgs, _ io.Reader, _, _ io.Writer) error {
			got, called = a, true
			return nil
		})
		_, _, err := executeCmd(t, cmd, "", tc.args...)
		if tc.wantErr != "" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.wantErr) || called {
				t.Errorf("repair %q: err %v, ran %t; want a usage error %q", tc.args, err, called, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("repair %q = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

func TestAutomatedFinding(t *testing.T) {
	manual := diagnose.Finding{Rule: "heap-oom"}
	auto := diagnose.Finding{Rule: "metadata-log-offset-mismatch", Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveMetadataLog}}
	if f, err := automatedFinding("kafka/b-0", []diagnose.Finding{auto, manual}); err != nil || f.Rule != auto.Rule {
		t.Errorf("automatedFinding = %v, %v; want the automated top finding", f.Rule, err)
	}
	if _, err := automatedFinding("kafka/b-0", []diagnose.Finding{manual}); err == nil || !strings.Contains(err.Error(), "top finding heap-oom needs a person") {
		t.Errorf("manual only: %v", err)
	}
	if _, err := automatedFinding("kafka/b-0", nil); err == nil || !strings.Contains(err.Error(), "no finding") {
		t.Errorf("none: %v", err)
	}
}

// TestSafety11_CLIRepairsTopFindingOnly: Slack offers Approve only on the
// top finding; before the fix `bot repair` skipped a manual top finding and
// repaired the first automated one below it.
func TestSafety11_CLIRepairsTopFindingOnly(t *testing.T) {
	manual := diagnose.Finding{Rule: "heap-oom"}
	auto := diagnose.Finding{Rule: "metadata-log-offset-mismatch", Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveMetadataLog}}
	f, err := automatedFinding("kafka/b-0", []diagnose.Finding{manual, auto})
	if err == nil {
		t.Fatalf("automatedFinding chose %s below a manual top finding; want a refusal", f.Rule)
	}
	if !strings.Contains(err.Error(), "heap-oom") {
		t.Errorf("the refusal does not name the top finding: %v", err)
	}
}

func TestConfirmRepair(t *testing.T) {
	var out strings.Builder
	if err := confirmRepair(strings.NewReader("yes\n"), &out, "kafka/b-0"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "without --yes") {
		t.Errorf("a non-terminal stdin confirmed: %v", err)
	}
	for answer, ok := range map[string]bool{"yes\n": true, "yes": true, "y\n": false, "YES\n": false, "": false} {
		err := askYes(strings.NewReader(answer), &out, "kafka/b-0")
		if (err == nil) != ok {
			t.Errorf("answer %q: err %v, want ok=%t", answer, err, ok)
		}
	}
	if !strings.Contains(out.String(), "Type yes to repair kafka/b-0: ") {
		t.Errorf("prompt %q", out.String())
	}
}
