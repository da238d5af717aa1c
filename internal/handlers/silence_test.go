// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

func TestSilenceClickByApprover(t *testing.T) {
	h := startAlertBot(t)
	m := h.notify(seedAlert(t, h.clock.Now()))
	h.chooseSilence(m, approver, "24h")
	h.waitFor("the silence in the thread", func() bool { return len(h.emu.Thread(alertChan, m.TS)) == 2 })

	calls := h.silencer.calls()
	want := alert.Silence{ID: "sil0", Key: seedNamespace + "/" + seedPod, Until: h.clock.Now().Add(24 * time.Hour), By: approver}
	if len(calls) != 1 || calls[0] != want {
		t.Fatalf("Silencer calls %+v, want [%+v]", calls, want)
	}
	line := shownDates(h.emu.Thread(alertChan, m.TS)[1].Text)
	for _, w := range []string{"🔕 <@" + approver + "> silenced `kafka/foobar-kafka-broker-0` for 24h", "until 2026-11-30 17:00 UTC"} {
		if !strings.Contains(line, w) {
			t.Errorf("thread line %q lacks %q", line, w)
		}
	}
	if !strings.Contains(h.logs.String(), `"event":"silence.created"`) {
		t.Error("no audit line for the silence")
	}
}

// chooseSilence picks choice in the message's Silence menu as user.
func (h *alertHarness) chooseSilence(m slackemu.Message, user, choice string) {
	h.t.Helper()
	token, _ := silenceMenu(h.t, m.Blocks)
	if token == "" {
		h.t.Fatal("the message has no Silence menu")
	}
	id, err := h.emu.SendClick(h.ctx(), slackemu.Click{ChannelID: m.Channel, UserID: user, MessageTS: m.TS,
		ActionID: slackview.ActionSilenceMenu + token, Option: choice})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.emu.WaitAck(h.ctx(), id); err != nil {
		h.t.Fatal(err)
	}
}

func TestSilenceClickRefused(t *testing.T) {
	forge := func(h *alertHarness, m slackemu.Message, user, chanID, token string) {
		h.clickRaw(slackemu.Click{ChannelID: chanID, UserID: user, MessageTS: m.TS, ActionID: slackview.ActionSilenceMenu + token, Option: "24h"})
	}
	forgeChoice := func(h *alertHarness, m slackemu.Message, token, choice string) {
		h.clickRaw(slackemu.Click{ChannelID: alertChan, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionSilenceMenu + token, Option: choice})
	}
	tests := []struct {
		name string
		// act clicks; it returns who must be told, and where.
		act  func(h *alertHarness, m slackemu.Message, token string) (user, chanID string)
		want string
	}{
		{"non-approver", func(h *alertHarness, m slackemu.Message, _ string) (string, string) {
			h.chooseSilence(m, stranger, "24h")
			return stranger, alertChan
		}, "only approvers may do it"},
		{"altered value", func(h *alertHarness, m slackemu.Message, token string) (string, string) {
			part, sig, _ := strings.Cut(token, ".")
			forge(h, m, approver, alertChan, part[:len(part)-2]+"xx."+sig)
			return approver, alertChan
		}, "not valid"},
		{"signed with another key", func(h *alertHarness, m slackemu.Message, _ string) (string, string) {
			tok, err := grant.SignSilence([]byte("an-attacker-guessed-this-secret-0123456789"), grant.Silence{Key: "kafka/foobar-kafka-broker-0",
				For: 3600, Channel: alertChan, IssuedAt: h.clock.Now().Unix(), ExpiresAt: h.clock.Now().Add(time.Hour).Unix()})
			if err != nil {
				t.Fatal(err)
			}
			forge(h, m, approver, alertChan, tok)
			return approver, alertChan
		}, "not valid"},
		{"approval token as silence", func(h *alertHarness, m slackemu.Message, _ string) (string, string) {
			tok, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
			forge(h, m, approver, alertChan, tok)
			return approver, alertChan
		}, "not valid"},
		{"replay in another channel", func(h *alertHarness, m slackemu.Message, token string) (string, string) {
			forge(h, m, approver, otherChan, token)
			return approver, otherChan
		}, "another channel"},
		{"expired button", func(h *alertHarness, m slackemu.Message, _ string) (string, string) {
			h.clock.Advance(grant.SilenceButtonTTL + time.Minute)
			h.chooseSilence(m, approver, "24h")
			return approver, alertChan
		}, "expired"},
		{"choice the bot never offers", func(h *alertHarness, m slackemu.Message, token string) (string, string) {
			forgeChoice(h, m, token, "30d")
			return approver, alertChan
		}, "not one the bot offers"},
		{"choice beyond a button's grant", func(h *alertHarness, m slackemu.Message, _ string) (string, string) {
			// A 1h grant (a Silence button's) may not be stretched to 7d.
			tok, err := grant.SignSilence(testSecret, grant.Silence{Key: "kafka/foobar-kafka-broker-0",
				For: 3600, Channel: alertChan, IssuedAt: h.clock.Now().Unix(), ExpiresAt: h.clock.Now().Add(time.Hour).Unix()})
			if err != nil {
				t.Fatal(err)
			}
			forgeChoice(h, m, tok, "7d")
			return approver, alertChan
		}, "not one the bot offers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startAlertBot(t)
			m := h.notify(seedAlert(t, h.clock.Now()))
			token, _ := silenceMenu(t, m.Blocks)
			user, where := tt.act(h, m, token)
			e := h.ephemeral(where, user, tt.want)
			if !strings.Contains(e.Text, "Nothing was silenced") {
				t.Errorf("answer %q does not say nothing was silenced", e.Text)
			}
			if calls := h.silencer.calls(); len(calls) != 0 {
				t.Errorf("Silencer called: %+v", calls)
			}
			if n := len(h.emu.Thread(alertChan, m.TS)); n != 1 {
				t.Errorf("%d thread replies, want only the details", n)
			}
			if !strings.Contains(h.logs.String(), `"event":"silence.refused"`) {
				t.Error("no audit line for the refusal")
			}
			if strings.Contains(h.logs.String(), token) {
				t.Error("the token was logged")
			}
		})
	}
}

func TestSilencesCommand(t *testing.T) {
	tests := []struct {
		name string
		list []alert.Silence
		want []string
	}{
		{"none", nil, []string{"No silences are in force"}},
		{"two", []alert.Silence{
			{ID: "abc123", Key: "kafka/foobar-kafka-broker-0", Until: time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC), By: approver},
			{ID: "def456", Key: "cluster:kafka/foobar", Until: time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC), By: approver},
		}, []string{"2 silence(s) in force", "`kafka/foobar-kafka-broker-0` until 2026-11-30 17:00 UTC (24h0m0s left), by <@" + approver + ">",
			"`cluster:kafka/foobar` until 2026-11-29 18:00 UTC (1h0m0s left)", "id `def456`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startAlertBot(t)
			h.silencer.set(tt.list, nil)
			h.slash(stranger, channel, "silences")
			e := h.ephemeral(channel, stranger, strings.Fields(tt.want[0])[0])
			for _, w := range tt.want {
				if !strings.Contains(shownDates(e.Text), w) {
					t.Errorf("answer lacks %q:\n%s", w, e.Text)
				}
			}
		})
	}
}

func TestSweepCommand(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"leader", nil, "Swept every Kafka pod. New alerts, if any, are in <#" + alertChan + ">"},
		{"follower", fmt.Errorf("sweep: %w", alert.ErrNotLeader), "does not lead the sweep"},
		{"failure", errors.New("informer not synced"), "The sweep failed: informer not synced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startAlertBot(t)
			h.silencer.set(nil, tt.err)
			h.slash(requester, channel, "sweep")
			h.ephemeral(channel, requester, tt.want)
			if n := h.silencer.sweepCount(); n != 1 {
				t.Errorf("SweepNow called %d times, want 1", n)
			}
		})
	}
}

func TestAlertCommandsWithoutAlerts(t *testing.T) {
	h := startBot(t, nil)
	for _, text := range []string{"silences", "sweep"} {
		_, ack := h.slash(requester, channel, text)
		if !strings.Contains(string(ack.Payload), "Alerts are not enabled") {
			t.Errorf("/kafka %s acked %s", text, ack.Payload)
		}
	}
}

func TestParseAlertVerbs(t *testing.T) {
	tests := []struct {
		text    string
		want    command.Verb
		wantErr bool
	}{
		{"silences", command.VerbSilences, false},
		{"SWEEP", command.VerbSweep, false},
		{"silences now", "", true},
		{"sweep kafka", "", true},
	}
	for _, tt := range tests {
		got, err := command.Parse(tt.text)
		if (err != nil) != tt.wantErr || got.Verb != tt.want {
			t.Errorf("command.Parse(%q) = %+v, %v; want verb %q, error %t", tt.text, got, err, tt.want, tt.wantErr)
		}
	}
	if u := slackview.Usage("/kafka"); !strings.Contains(u, "/kafka silences") || !strings.Contains(u, "/kafka sweep") {
		t.Errorf("usage does not mention the alert verbs:\n%s", u)
	}
}
