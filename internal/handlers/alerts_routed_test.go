// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// TestRoutedAlertPostsAndApprovesInItsChannel: an alert whose
// Alertmanager route named another approval channel is posted there, with
// Approve and Silence tokens bound to that channel, and Approve there runs
// the repair in that thread.
func TestRoutedAlertPostsAndApprovesInItsChannel(t *testing.T) {
	h := startAlertBot(t)
	now := h.clock.Now()
	a := seedAlert(t, now)
	a.Channel = channel // an approval channel other than ALERT_CHANNEL
	ref, err := h.notifier.Notify(h.ctx(), a)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Channel != channel {
		t.Fatalf("posted to %s, want %s", ref.Channel, channel)
	}
	if n := len(h.emu.Messages(alertChan)); n != 0 {
		t.Errorf("%d messages in ALERT_CHANNEL, want none", n)
	}
	m, ok := h.emu.Message(ref.Channel, ref.TS)
	if !ok {
		t.Fatal("no message at the returned ref")
	}
	tok, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	ap, err := approval.Verify(testSecret, tok, now)
	if err != nil || ap.Channel != channel {
		t.Fatalf("approve token %+v (%v), want bound to %s", ap, err, channel)
	}
	if token, _ := silenceMenu(t, m.Blocks); token == "" {
		t.Error("no Silence menu")
	} else if g, err := grant.VerifySilence(testSecret, token, now); err != nil || g.Channel != channel {
		t.Errorf("silence grant %+v (%v), want bound to %s", g, err, channel)
	}
	h.click(m, slackview.ActionApprove, approver)
	h.waitFor("the repair to finish", func() bool {
		th := h.emu.Thread(channel, m.TS)
		return len(th) > 0 && strings.Contains(th[len(th)-1].Text, "Repair succeeded")
	})
	if reqs := h.repairer.calls(); len(reqs) != 1 || reqs[0].Channel != channel {
		t.Fatalf("repair requests %+v", reqs)
	}
}
