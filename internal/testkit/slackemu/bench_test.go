// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"context"
	"net/url"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// BenchmarkSlashCommandRoundTrip measures envelope out, slack-go decode, ack back, ack recorded.
func BenchmarkSlashCommandRoundTrip(b *testing.B) {
	emu, err := New(Options{AppToken: testAppToken, BotToken: testBotToken})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	api := slack.New(testBotToken, slack.OptionAPIURL(emu.APIURL()), slack.OptionAppLevelToken(testAppToken))
	client := socketmode.New(api)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- client.RunContext(ctx) }()
	defer func() { cancel(); <-runDone }()
	go func() {
		for {
			select {
			case evt := <-client.Events:
				if evt.Type == socketmode.EventTypeSlashCommand {
					_ = client.Ack(*evt.Request)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	cmd := SlashCommand{ChannelID: testChannel, UserID: testUser, Text: "status"}
	for b.Loop() {
		id, err := emu.SendSlashCommand(ctx, cmd)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := emu.WaitAck(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostMessageWithBlocks measures a chat.postMessage with the bot's approval blocks via slack-go.
func BenchmarkPostMessageWithBlocks(b *testing.B) {
	emu, err := New(Options{AppToken: testAppToken, BotToken: testBotToken})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	api := apiClient(emu)
	blocks := slack.MsgOptionBlocks(approvalBlocks("Restart *broker-0*?")...)
	for b.Loop() {
		if _, _, err := api.PostMessage(testChannel, slack.MsgOptionText("x", false), blocks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseBlocks measures Block Kit validation of a 50-block message.
func BenchmarkParseBlocks(b *testing.B) {
	form := url.Values{}
	raw := "[" + repeatJSON(`{"type":"section","text":`+text(mrkdwn, 500)+`,"accessory":`+button(`,"value":"v"`)+`}`, 50) + "]"
	form.Set("blocks", raw)
	for b.Loop() {
		if _, violations, err := parseBlocks(form.Get("blocks")); err != nil || violations != nil {
			b.Fatal(err, violations)
		}
	}
}
