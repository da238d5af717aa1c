// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// decodeEnvelope decodes a Socket Mode frame the way slack-go's
// socketmode client does before it hands the bot an Event.
func decodeEnvelope(t *testing.T, path string) (socketmode.Request, any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var req socketmode.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatalf("%s: envelope: %v", path, err)
	}
	switch req.Type {
	case socketmode.RequestTypeSlashCommands:
		var cmd slack.SlashCommand
		if err := json.Unmarshal(req.Payload, &cmd); err != nil {
			t.Fatalf("%s: slash command: %v", path, err)
		}
		return req, cmd
	case socketmode.RequestTypeInteractive:
		var cb slack.InteractionCallback
		if err := json.Unmarshal(req.Payload, &cb); err != nil {
			t.Fatalf("%s: interaction: %v", path, err)
		}
		return req, cb
	}
	t.Fatalf("%s: unexpected envelope type %q", path, req.Type)
	return req, nil
}

func TestSlashCommandFixtures(t *testing.T) {
	paths, _ := filepath.Glob("testdata/socket.envelope.slash_commands.*.json")
	if len(paths) != 4 {
		t.Fatalf("want 4 slash-command fixtures, found %d", len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			req, data := decodeEnvelope(t, p)
			if req.EnvelopeID == "" || !req.AcceptsResponsePayload {
				t.Errorf("envelope %+v", req)
			}
			s := slashFrom(data.(slack.SlashCommand))
			if s.Channel == "" || s.User == "" || s.Team == "" || !strings.HasPrefix(s.Command, "/") || s.ResponseURL == "" {
				t.Errorf("decoded %+v", s)
			}
			cmd, err := command.Parse(s.Text)
			switch s.Text {
			case "":
				if err != nil || cmd.Verb != command.VerbHelp {
					t.Errorf("empty text parsed to %+v, %v; want help", cmd, err)
				}
			default: // "foobar": not a /kafka subcommand
				if err == nil {
					t.Errorf("%q parsed to %+v; want usage", s.Text, cmd)
				}
			}
			if u := slackview.Usage(s.Command); !strings.Contains(u, s.Command+" diagnose") {
				t.Errorf("usage does not name the command %s", s.Command)
			}
		})
	}
}

func TestBlockActionsFixture(t *testing.T) {
	req, data := decodeEnvelope(t, "testdata/socket.envelope.interactive.block_actions.java-sdk-test.json")
	cb := data.(slack.InteractionCallback)
	if req.EnvelopeID != "xxx-11-222-yyy-zzz" || cb.Type != slack.InteractionTypeBlockActions {
		t.Fatalf("decoded %q %q", req.EnvelopeID, cb.Type)
	}
	if _, ok := clickFrom(cb); ok {
		t.Fatal("a foreign button (action_id \"a\") was taken for ours")
	}
	// The same click on one of our buttons.
	cb.ActionCallback.BlockActions[0].ActionID = slackview.ActionApprove
	c, ok := clickFrom(cb)
	if !ok {
		t.Fatal("our button was not recognised")
	}
	want := click{Team: "T111", Channel: "C111", User: "U111", UserName: "test-test-test", MessageTS: "1605853634.000400",
		Approve: true, Token: "underlying", ResponseURL: "https://hooks.slack.com/actions/T111/111/xxx"}
	got := c
	got.Blocks = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("click\n got %+v\nwant %+v", got, want)
	}
	if len(c.Blocks) != 1 || c.Blocks[0].BlockType() != slack.MBTAction {
		t.Errorf("message blocks %v", c.Blocks)
	}
}
