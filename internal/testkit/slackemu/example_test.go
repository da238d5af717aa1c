// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu_test

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// A slash command goes to the real slack-go client; the bot acks it at once and posts a message with a
// button; a click on the button reaches the bot with the message as stored.
func Example() {
	emu, err := slackemu.New(slackemu.Options{AppToken: "xapp-1-example", BotToken: "xoxb-example"})
	if err != nil {
		panic(err)
	}
	defer emu.Close()

	api := slack.New("xoxb-example", slack.OptionAPIURL(emu.APIURL()), slack.OptionAppLevelToken("xapp-1-example"))
	client := socketmode.New(api)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- client.RunContext(ctx) }()
	defer func() { cancel(); <-runDone }()

	// The envelope is queued until the client has connected.
	if _, err := emu.SendSlashCommand(ctx, slackemu.SlashCommand{ChannelID: "C0KAFKA", UserID: "U0ALICE", Text: "diagnose broker-0"}); err != nil {
		panic(err)
	}
	for evt := range client.Events {
		switch evt.Type {
		case socketmode.EventTypeSlashCommand:
			cmd := evt.Data.(slack.SlashCommand)
			_ = client.Ack(*evt.Request, map[string]any{"text": "Looking at broker-0…"})
			button := slack.NewButtonBlockElement("approve", "token-1", slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
			_, ts, err := client.PostMessage(cmd.ChannelID, slack.MsgOptionText("Repair broker-0?", false),
				slack.MsgOptionBlocks(slack.NewActionBlock("decision", button)))
			if err != nil {
				panic(err)
			}
			fmt.Println("command:", cmd.Command, cmd.Text)
			if _, err := emu.SendClick(ctx, slackemu.Click{ChannelID: "C0KAFKA", UserID: "U0ALICE", MessageTS: ts, ActionID: "approve"}); err != nil {
				panic(err)
			}
		case socketmode.EventTypeInteractive:
			cb := evt.Data.(slack.InteractionCallback)
			_ = client.Ack(*evt.Request)
			action := cb.ActionCallback.BlockActions[0]
			fmt.Println("click:", action.ActionID, action.BlockID, action.Value, "on", cb.Message.Text)
			// The slash command's ack payload is shown to the user as an ephemeral message.
			if err := emu.WaitFor(ctx, func() bool { return len(emu.Ephemerals("C0KAFKA", "U0ALICE")) == 1 }); err != nil {
				panic(err)
			}
			fmt.Println("ephemeral:", emu.Ephemerals("C0KAFKA", "U0ALICE")[0].Text)
			return
		}
	}
	// Output:
	// command: /kafka diagnose broker-0
	// click: approve decision token-1 on Repair broker-0?
	// ephemeral: Looking at broker-0…
}
