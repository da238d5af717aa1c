// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"os"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"sigs.k8s.io/yaml"
)

// TestManifestUsageHintNamesEveryCommand: the Slack app manifest's usage
// hint for /kafka (what Slack shows while typing) names every subcommand
// of /kafka help and the CLUSTER/ prefix (issue 25 item 6: it lacked
// `sweep` and `CLUSTER/`).
func TestManifestUsageHintNamesEveryCommand(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Features struct {
			SlashCommands []struct {
				UsageHint string `json:"usage_hint"`
			} `json:"slash_commands"`
		} `json:"features"`
	}
	if err := yaml.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Features.SlashCommands) != 1 {
		t.Fatalf("manifest slash commands = %+v", manifest.Features.SlashCommands)
	}
	hint := manifest.Features.SlashCommands[0].UsageHint
	help := slackview.Usage("/kafka")
	for _, verb := range []command.Verb{command.VerbDiagnose, command.VerbStatus, command.VerbSilences, command.VerbSweep, command.VerbHelp} {
		if !strings.Contains(help, "/kafka "+string(verb)) {
			t.Fatalf("/kafka help does not list %q: fix this test's list", verb)
		}
		if !strings.Contains(hint, string(verb)) {
			t.Errorf("manifest usage_hint %q lacks %q", hint, verb)
		}
	}
	if !strings.Contains(strings.ToLower(hint), "[cluster/]") {
		t.Errorf("manifest usage_hint %q lacks the [CLUSTER/] prefix of diagnose", hint)
	}
}
