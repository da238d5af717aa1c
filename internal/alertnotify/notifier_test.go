// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package alertnotify

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// fakeBot signs silences as "tok-<key>-<seconds>" (or fails to).
type fakeBot struct{ signErr error }

func (fakeBot) Cluster(name string) (string, bool) { return name, true }
func (fakeBot) InCluster(_, path string) string    { return path }
func (fakeBot) KafkaView(context.Context, string, diagnose.Snapshot) slackview.KafkaView {
	return slackview.KafkaView{}
}
func (fakeBot) Offer(string, diagnose.Snapshot, diagnose.Finding, string, string, string, time.Time) (string, time.Time) {
	return "", time.Time{}
}
func (f fakeBot) SignSilence(_, key string, d time.Duration, _ string, _ time.Time) (string, error) {
	return "tok-" + key + "-" + d.String(), f.signErr
}
func (fakeBot) PostDetails(context.Context, string, string, slackview.Message) {}
func (fakeBot) Messages() *slacktransport.Messages                             { return slacktransport.NewMessages(1) }
func (fakeBot) Logger() *slog.Logger                                           { return slog.New(slog.DiscardHandler) }
func (fakeBot) Now() time.Time                                                 { return time.Time{} }

// TestSilenceControls: a menu when its token fits an action_id, else the
// three buttons; nothing when signing fails.
func TestSilenceControls(t *testing.T) {
	tests := []struct {
		name        string
		key         string
		signErr     error
		wantMenu    bool
		wantButtons bool
	}{
		{"menu", "kafka/broker-0", nil, true, true},
		{"key too long for a menu", strings.Repeat("k", 250), nil, false, true},
		{"signing fails", "kafka/broker-0", errors.New("no secret"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fakeBot{signErr: tt.signErr}
			menu := silenceMenu(b, "", tt.key, "pod", "C1", time.Time{})
			if got := menu != nil; got != tt.wantMenu {
				t.Fatalf("menu %v, want %t", menu, tt.wantMenu)
			}
			if tt.wantMenu && menu.(*slack.OverflowBlockElement).ActionID != slackview.ActionSilenceMenu+"tok-"+tt.key+"-168h0m0s" {
				t.Errorf("menu action_id %q does not carry the longest choice's grant", menu.(*slack.OverflowBlockElement).ActionID)
			}
			buttons := silenceButtons(b, "", tt.key, "pod", "C1", time.Time{})
			if got := buttons != nil; got != tt.wantButtons {
				t.Fatalf("buttons %v, want %t", buttons, tt.wantButtons)
			}
			if tt.wantButtons && len(buttons.Elements.ElementSet) != 3 {
				t.Errorf("%d buttons, want 3", len(buttons.Elements.ElementSet))
			}
		})
	}
}

// TestResolved: a resolved alert keeps the decision and a status that
// tells an outcome, drops buttons, old header and banner and an
// "awaiting" status, and is rebuilt from fallback when never seen.
func TestResolved(t *testing.T) {
	header := slackview.Section("new-header", "resolved")
	banner := slackview.Section("new-banner", "✅")
	fallback := []slack.Block{slackview.Section("rebuilt", "was")}
	section := func(id string) slack.Block { return slackview.Section(id, id) }
	buttons := slack.NewActionBlock(slackview.BlockActions, slack.NewButtonBlockElement(slackview.ActionApprove, "t", slackview.Plain("Approve")))
	ids := func(blocks []slack.Block) string {
		var out []string
		for _, b := range blocks {
			out = append(out, b.ID())
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name string
		in   []slack.Block
		want string
	}{
		{"never seen", nil, "rebuilt"},
		{"awaiting approval", []slack.Block{section(slackview.BlockHeader), section(slackview.BlockAlert), section("kafkabot.cause"), section(slackview.BlockStatus), buttons},
			"new-header,new-banner,kafkabot.cause"},
		{"decided", []slack.Block{section(slackview.BlockHeader), section(slackview.BlockAlert), section("kafkabot.cause"), section(slackview.BlockStatus)},
			"new-header,new-banner,kafkabot.cause," + slackview.BlockStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(resolved(tt.in, header, banner, fallback)); got != tt.want {
				t.Errorf("blocks %s, want %s", got, tt.want)
			}
		})
	}
}
