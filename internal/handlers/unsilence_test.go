// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// TestEndSilenceEarly: the silence's confirmation in the alert's thread
// carries an End silence button; only an approver may press it, in the
// alert's channel, once; it ends the silence and says so in the thread.
func TestEndSilenceEarly(t *testing.T) {
	h := startAlertBot(t)
	m := h.notify(seedAlert(t, h.clock.Now()))
	h.chooseSilence(m, approver, "24h")
	h.waitFor("the silence's confirmation", func() bool { return len(h.emu.Thread(alertChan, m.TS)) == 2 })
	confirmation := h.emu.Thread(alertChan, m.TS)[1]
	if p := validateBlocksJSON(confirmation.Blocks); len(p) > 0 {
		t.Fatalf("confirmation blocks:\n%s", strings.Join(p, "\n"))
	}
	btn := buttons(t, confirmation.Blocks)[actionUnsilence]
	if btn == nil {
		t.Fatalf("the silence's confirmation offers no End silence button: %s", confirmation.Blocks)
	}
	token, _ := btn["value"].(string)
	g, err := grant.VerifyUnsilence(testSecret, token, h.clock.Now())
	if err != nil || g.ID != "sil0" || g.Channel != alertChan || g.ExpiresAt != h.clock.Now().Add(24*time.Hour).Unix() {
		t.Fatalf("End silence grants %+v, %v", g, err)
	}
	click := func(user, chanID, value string) {
		t.Helper()
		if chanID == alertChan && value == token {
			id, err := h.emu.SendClick(h.ctx(), slackemu.Click{ChannelID: chanID, UserID: user, MessageTS: confirmation.TS, ActionID: actionUnsilence})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.emu.WaitAck(h.ctx(), id); err != nil {
				t.Fatal(err)
			}
			return
		}
		h.clickRaw(slackemu.Click{ChannelID: chanID, UserID: user, MessageTS: confirmation.TS, ActionID: actionUnsilence, Value: value})
	}

	click(stranger, alertChan, token)
	h.ephemeral(alertChan, stranger, "Only approvers may end a silence")
	click(approver, otherChan, token)
	h.ephemeral(otherChan, approver, "belongs to another channel")
	part, sig, _ := strings.Cut(token, ".")
	click(approver, alertChan, part[:len(part)-2]+"xx."+sig)
	h.ephemeral(alertChan, approver, "not valid")
	if got := h.silencer.endedIDs(); len(got) != 0 {
		t.Fatalf("refused clicks ended silences %v", got)
	}

	click(approver, alertChan, token)
	h.waitFor("the end in the thread", func() bool { return len(h.emu.Thread(alertChan, m.TS)) == 3 })
	if got := h.silencer.endedIDs(); len(got) != 1 || got[0] != "sil0" {
		t.Fatalf("ended %v, want [sil0]", got)
	}
	line := h.emu.Thread(alertChan, m.TS)[2].Text
	if !strings.Contains(line, "<@"+approver+"> ended the silence of `kafka/foobar-kafka-broker-0`") {
		t.Errorf("thread line %q", line)
	}
	click(approver, alertChan, token)
	h.ephemeral(alertChan, approver, "no longer in force")
	if !strings.Contains(h.logs.String(), `"event":"silence.ended"`) {
		t.Error("no audit line for the end of the silence")
	}
	if strings.Contains(h.logs.String(), token) {
		t.Error("the token was logged")
	}
}

// TestSilencesListOffersEnd: /kafka silences lists each silence with an
// End silence button for the channel it was asked in.
func TestSilencesListOffersEnd(t *testing.T) {
	h := startAlertBot(t)
	until := h.clock.Now().Add(24 * time.Hour)
	h.silencer.set([]alert.Silence{{ID: "abc123", Key: "kafka/foobar-kafka-broker-0", Until: until, By: approver}}, nil)
	h.slash(stranger, channel, "silences")
	e := h.ephemeral(channel, stranger, "1 silence(s) in force")
	if p := validateBlocksJSON(e.Blocks); len(p) > 0 {
		t.Fatalf("blocks:\n%s", strings.Join(p, "\n"))
	}
	var token string
	for _, b := range accessories(t, e.Blocks) {
		if b["action_id"] == actionUnsilence {
			token, _ = b["value"].(string)
		}
	}
	g, err := grant.VerifyUnsilence(testSecret, token, h.clock.Now())
	if err != nil || g.ID != "abc123" || g.Channel != channel {
		t.Errorf("the listed silence's End button grants %+v, %v", g, err)
	}
}

// accessories returns the section accessories of the blocks.
func accessories(t testing.TB, raw []byte) []map[string]any {
	t.Helper()
	var list []struct {
		Accessory map[string]any `json:"accessory"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("blocks are not JSON: %v", err)
	}
	var out []map[string]any
	for _, b := range list {
		if b.Accessory != nil {
			out = append(out, b.Accessory)
		}
	}
	return out
}
