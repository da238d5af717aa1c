// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"errors"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// approvalBlocks is a message like the bot's: a section and Approve/Reject buttons, Reject with a confirm.
func approvalBlocks(summary string) []slack.Block {
	approve := slack.NewButtonBlockElement("approve", "req-42", slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
	approve.Style = slack.StylePrimary
	reject := slack.NewButtonBlockElement("reject", "req-42", slack.NewTextBlockObject(slack.PlainTextType, "Reject", false, false))
	reject.Style = slack.StyleDanger
	reject.Confirm = slack.NewConfirmationBlockObject(
		slack.NewTextBlockObject(slack.PlainTextType, "Are you sure?", false, false),
		slack.NewTextBlockObject(slack.MarkdownType, "Reject *req-42*?", false, false),
		slack.NewTextBlockObject(slack.PlainTextType, "Reject", false, false),
		slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false))
	return []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, summary, false, false), nil, nil),
		slack.NewActionBlock("decision", approve, reject),
	}
}

// clickAndReceive sends a click and returns the callback slack-go decoded, acking it.
func clickAndReceive(t *testing.T, emu *Server, bc *botClient, c Click) slack.InteractionCallback {
	t.Helper()
	id, err := emu.SendClick(testContext(t), c)
	if err != nil {
		t.Fatalf("SendClick: %v", err)
	}
	evt := bc.waitEvent(t, socketmode.EventTypeInteractive)
	cb, ok := evt.Data.(slack.InteractionCallback)
	if !ok {
		t.Fatalf("event data is %T, want slack.InteractionCallback", evt.Data)
	}
	if evt.Request.EnvelopeID != id {
		t.Errorf("envelope %q, want %q", evt.Request.EnvelopeID, id)
	}
	if err := bc.Ack(*evt.Request); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.WaitAck(testContext(t), id); err != nil {
		t.Fatal(err)
	}
	return cb
}

func TestClickDecodesAsBlockActionsAndFollowsUpdates(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)

	_, ts, err := bc.PostMessage(testChannel, slack.MsgOptionText("approval needed", false),
		slack.MsgOptionBlocks(approvalBlocks("Restart *broker-0*?")...))
	if err != nil {
		t.Fatalf("PostMessage: %v", err)
	}

	cb := clickAndReceive(t, emu, bc, Click{ChannelID: testChannel, UserID: testUser, UserName: "alice", MessageTS: ts, ActionID: "approve"})
	if cb.Type != slack.InteractionTypeBlockActions {
		t.Errorf("type = %q, want block_actions", cb.Type)
	}
	if len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("BlockActions = %v, want one", cb.ActionCallback.BlockActions)
	}
	action := cb.ActionCallback.BlockActions[0]
	if action.ActionID != "approve" || action.BlockID != "decision" || action.Value != "req-42" ||
		action.Type != "button" || action.ActionTs == "" || action.Text.Text != "Approve" {
		t.Errorf("action = %+v, want approve/decision/req-42 button", action)
	}
	if cb.Container.Type != "message" || cb.Container.MessageTs != ts || cb.Container.ChannelID != testChannel || cb.Container.IsEphemeral {
		t.Errorf("container = %+v", cb.Container)
	}
	if cb.Message.Timestamp != ts || len(cb.Message.Blocks.BlockSet) != 2 || cb.Message.Text != "approval needed" {
		t.Errorf("message ts %q, %d blocks, text %q", cb.Message.Timestamp, len(cb.Message.Blocks.BlockSet), cb.Message.Text)
	}
	if cb.User.ID != testUser || cb.User.Name != "alice" || cb.Channel.ID != testChannel || cb.Team.ID != DefaultTeamID ||
		cb.APIAppID != DefaultAppID || cb.TriggerID == "" || cb.ResponseURL == "" {
		t.Errorf("user %+v channel %q team %q app %q trigger %q response_url %q",
			cb.User, cb.Channel.ID, cb.Team.ID, cb.APIAppID, cb.TriggerID, cb.ResponseURL)
	}

	// The bot replaces the buttons with a result; the next click payload must carry the updated message,
	// and the removed button can no longer be clicked.
	result := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "Approved by <@U0TESTUSER>", false, false), nil,
		slack.NewAccessory(slack.NewButtonBlockElement("details", "req-42", slack.NewTextBlockObject(slack.PlainTextType, "Details", false, false))))
	result.BlockID = "result"
	if _, _, _, err := bc.UpdateMessage(testChannel, ts, slack.MsgOptionText("approved", false), slack.MsgOptionBlocks(result)); err != nil {
		t.Fatalf("UpdateMessage: %v", err)
	}
	if _, err := emu.SendClick(testContext(t), Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "approve"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("click on a removed button: %v, want ErrNotFound", err)
	}
	cb = clickAndReceive(t, emu, bc, Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "details"})
	if cb.Message.Text != "approved" || len(cb.Message.Blocks.BlockSet) != 1 {
		t.Errorf("message after update: text %q, %d blocks; want the updated message", cb.Message.Text, len(cb.Message.Blocks.BlockSet))
	}
	if a := cb.ActionCallback.BlockActions; len(a) != 1 || a[0].BlockID != "result" || a[0].ActionID != "details" {
		t.Errorf("accessory click actions = %+v, want details in block result", a)
	}
	if m, _ := emu.Message(testChannel, ts); m.Updated != 1 {
		t.Errorf("Updated = %d, want 1", m.Updated)
	}
}

func TestClickErrorsAndForgery(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)
	_, ts, err := bc.PostMessage(testChannel, slack.MsgOptionBlocks(approvalBlocks("x")...))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	tests := []struct {
		name  string
		click Click
	}{
		{"unknown message", Click{ChannelID: testChannel, UserID: testUser, MessageTS: "1.000001", ActionID: "approve"}},
		{"unknown channel", Click{ChannelID: "C0OTHER", UserID: testUser, MessageTS: ts, ActionID: "approve"}},
		{"unknown action", Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "nope"}},
		{"value differs", Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "approve", Value: "forged"}},
		{"missing fields", Click{ChannelID: testChannel, MessageTS: ts, ActionID: "approve"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := emu.SendClick(ctx, tt.click); err == nil {
				t.Error("SendClick succeeded")
			}
		})
	}

	// A forged click goes out as given.
	if _, err := emu.SendClickRaw(ctx, Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "approve", Value: "forged"}, "decision"); err != nil {
		t.Fatal(err)
	}
	evt := bc.waitEvent(t, socketmode.EventTypeInteractive)
	cb := evt.Data.(slack.InteractionCallback)
	if a := cb.ActionCallback.BlockActions; len(a) != 1 || a[0].Value != "forged" || a[0].BlockID != "decision" {
		t.Errorf("forged actions = %+v", a)
	}
	if cb.Message.Timestamp != ts {
		t.Errorf("forged click message ts %q, want the stored %q", cb.Message.Timestamp, ts)
	}
}

func TestGeneratedIDsForBlocksWithout(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)
	button := slack.NewButtonBlockElement("", "v", slack.NewTextBlockObject(slack.PlainTextType, "Go", false, false))
	_, ts, err := bc.PostMessage(testChannel, slack.MsgOptionBlocks(slack.NewActionBlock("", button)))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := emu.Message(testChannel, ts)
	var blocks slack.Blocks
	if err := blocks.UnmarshalJSON(m.Blocks); err != nil {
		t.Fatal(err)
	}
	actions := blocks.BlockSet[0].(*slack.ActionBlock)
	generated := actions.Elements.ElementSet[0].(*slack.ButtonBlockElement).ActionID
	if actions.BlockID == "" || generated == "" {
		t.Fatalf("stored block_id %q action_id %q, want generated ids", actions.BlockID, generated)
	}
	cb := clickAndReceive(t, emu, bc, Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: generated})
	if a := cb.ActionCallback.BlockActions; len(a) != 1 || a[0].BlockID != actions.BlockID {
		t.Errorf("actions = %+v, want block_id %q", a, actions.BlockID)
	}
}
