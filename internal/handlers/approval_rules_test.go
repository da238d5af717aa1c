// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

const (
	dmChannel = "D0DIRECTMSG"
	approver2 = "U0APPROVER2"
)

// TestSafety09_ApproveOnlyInApprovalChannels: an Approve is honoured only
// in the approval channels (APPROVAL_CHANNELS plus the alert channel); a
// diagnosis asked for in another channel or in the bot's DM offers
// buttons whose Approve is refused, and nothing runs.
func TestSafety09_ApproveOnlyInApprovalChannels(t *testing.T) {
	for _, where := range []string{otherChan, dmChannel} {
		t.Run(where, func(t *testing.T) {
			h := startBot(t, nil) // approval channels: channel only
			before := len(h.emu.Messages(where))
			h.slash(requester, where, "diagnose broker-0")
			h.waitFor("the diagnosis", func() bool { return len(h.emu.Messages(where)) > before })
			m := h.emu.Messages(where)[before]
			h.click(m, slackview.ActionApprove, approver)
			e := h.ephemeral(where, approver, "approved only in <#"+channel+">")
			if !strings.Contains(e.Text, "Nothing was changed") {
				t.Errorf("answer %q does not say nothing changed", e.Text)
			}
			if n := len(h.repairer.calls()); n != 0 {
				t.Errorf("repairer called %d times for an approval in %s", n, where)
			}
			if got := h.message(m); got.Updated != 0 {
				t.Errorf("the message changed (%d updates)", got.Updated)
			}
		})
	}
}

// TestSafety09_SelfApprovalForbiddenByDefault: with default options the
// person who asked for the diagnosis cannot approve its repair, even when
// they are an approver; AllowSelfApproval lets them.
func TestSafety09_SelfApprovalForbiddenByDefault(t *testing.T) {
	h := startBot(t, func(o *Options) { o.Approvers = append(o.Approvers, requester) })
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, requester)
	h.ephemeral(channel, requester, "someone else has to approve")
	if n := len(h.repairer.calls()); n != 0 {
		t.Fatalf("repairer called %d times on a self-approval", n)
	}

	h = startBot(t, func(o *Options) { o.Approvers = append(o.Approvers, requester); o.AllowSelfApproval = true })
	m = h.diagnose()
	h.click(m, slackview.ActionApprove, requester)
	h.waitRepairDone(m)
	if n := len(h.repairer.calls()); n != 1 {
		t.Errorf("with AllowSelfApproval: repairer called %d times, want 1", n)
	}
}

// TestSafety09_TwoApproversKeelStyle: with two approvals required, the
// first Approve is recorded and the message says 1 of 2 (buttons kept),
// the same approver cannot count twice, and the second approver's click
// starts the repair, which names both.
func TestSafety09_TwoApproversKeelStyle(t *testing.T) {
	h := startBot(t, func(o *Options) {
		o.Approvers = []string{approver, approver2}
		o.RequiredApprovals = 2
	})
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	h.waitFor("the 1 of 2 status", func() bool {
		return strings.Contains(blockTexts(t, h.message(m).Blocks), "1 of 2 approvals")
	})
	got := h.message(m)
	if len(buttons(t, got.Blocks)) != 2 {
		t.Errorf("buttons gone after the first of two approvals: %v", buttons(t, got.Blocks))
	}
	if n := len(h.repairer.calls()); n != 0 {
		t.Fatalf("repairer called %d times after one of two approvals", n)
	}

	h.click(m, slackview.ActionApprove, approver) // the same person again
	h.ephemeral(channel, approver, "You already approved this repair (1 of 2 approvals)")
	if n := len(h.repairer.calls()); n != 0 {
		t.Fatalf("repairer called %d times after the same approver clicked twice", n)
	}

	h.click(m, slackview.ActionApprove, approver2)
	h.waitFor("the repair to start", func() bool { return len(h.repairer.calls()) == 1 })
	if r := h.repairer.calls()[0]; r.Approver != approver+","+approver2 {
		t.Errorf("repair approver = %q, want both approvers", r.Approver)
	}
	h.waitFor("the approval line naming both", func() bool {
		return strings.Contains(blockTexts(t, h.message(m).Blocks), "Approved by <@"+approver+">, <@"+approver2+">")
	})
}

// TestRejectAfterOneOfTwoApprovals: a Reject while approvals are being
// gathered rejects the repair; a later Approve is refused.
func TestRejectAfterOneOfTwoApprovals(t *testing.T) {
	h := startBot(t, func(o *Options) {
		o.Approvers = []string{approver, approver2}
		o.RequiredApprovals = 2
	})
	m := h.diagnose()
	token, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	h.click(m, slackview.ActionApprove, approver)
	h.waitFor("the 1 of 2 status", func() bool {
		return strings.Contains(blockTexts(t, h.message(m).Blocks), "1 of 2 approvals")
	})
	h.click(m, slackview.ActionReject, requester)
	h.waitFor("the rejection", func() bool {
		return strings.Contains(blockTexts(t, h.message(m).Blocks), "Rejected by <@"+requester+">")
	})
	// A second approver whose view still shows the buttons.
	h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver2, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: token})
	h.ephemeral(channel, approver2, "already")
	if n := len(h.repairer.calls()); n != 0 {
		t.Errorf("repairer called %d times after a rejection", n)
	}
}

func TestNewRefusesUnreachableApprovalCount(t *testing.T) {
	_, err := New(Options{AppToken: "xapp-x", BotToken: "xoxb-x", ApprovalSecret: testSecret, Approvers: []string{approver},
		RequiredApprovals: 2, Clusters: []ClusterOptions{{Reader: newFakeCluster(t)}}, Diagnoser: seedDiagnoser{}})
	if err == nil || !strings.Contains(err.Error(), "2 approvals required but only 1 approvers") {
		t.Errorf("New = %v, want a refusal of 2 required approvals with 1 approver", err)
	}
}
