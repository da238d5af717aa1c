// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// waitLimit bounds every wait on Slack; it only stops a hung run.
const waitLimit = 2 * time.Minute

// slackBot is the bot wired as `bot serve` wires it (handlers.New with a
// *kube.Client, the default engine and, when given, a repairer), connected
// over a real WebSocket to the Slack emulator.
type slackBot struct {
	emu    *slackemu.Server
	bot    *handlers.Bot
	cancel context.CancelFunc
	done   chan error
}

// startSlackBot starts an emulator and a bot on cluster; mutate adjusts
// the options (repairer, workers) before the bot is built.
func startSlackBot(cluster *kube.Client, mutate func(*handlers.Options)) (*slackBot, error) {
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		return nil, err
	}
	opts := handlers.Options{
		AppToken: slackemu.DefaultAppToken, BotToken: slackemu.DefaultBotToken, APIURL: emu.APIURL(),
		ApprovalSecret: approvalSecret, ApprovalTTL: 30 * time.Minute, Approvers: []string{approver},
		Clusters: []handlers.ClusterOptions{{Reader: cluster}}, Diagnoser: diagnose.Default(), ApprovalChannels: []string{channel},
		Logger: slog.New(slog.DiscardHandler),
	}
	if mutate != nil {
		mutate(&opts)
	}
	bot, err := handlers.New(opts)
	if err != nil {
		emu.Close()
		return nil, fmt.Errorf("building the bot: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sb := &slackBot{emu: emu, bot: bot, cancel: cancel, done: make(chan error, 1)}
	go func() { sb.done <- bot.Run(ctx) }()
	deadline := time.Now().Add(waitLimit)
	for !bot.Connected() {
		if time.Now().After(deadline) {
			sb.stop()
			return nil, errors.New("the bot did not connect to the Slack emulator")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return sb, nil
}

// stop stops the bot as SIGTERM does and closes the emulator.
func (sb *slackBot) stop() error {
	sb.cancel()
	err := <-sb.done
	sb.emu.Close()
	return err
}

// waitCtx is a context for one wait.
func waitCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), waitLimit)
}

// command is one /kafka command's timings.
type command struct {
	ack     time.Duration // emulator: socket write to ack read
	summary time.Duration // send to the diagnosis posted in the channel
	message slackemu.Message
}

// errBusy is a command the bot refused because its worker pool was full.
var errBusy = errors.New("the bot answered busy")

// diagnose types `/kafka <text>` as user and waits for the ack and for the
// channel message that mentions user (the diagnosis names its requester).
// It returns errBusy when the bot refused the command as busy.
func (sb *slackBot) diagnose(user, text string) (command, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	start := time.Now()
	id, err := sb.emu.SendSlashCommand(ctx, slackemu.SlashCommand{ChannelID: channel, UserID: user, Command: "/kafka", Text: text})
	if err != nil {
		return command{}, err
	}
	ack, err := sb.emu.WaitAck(ctx, id)
	if err != nil {
		return command{}, fmt.Errorf("waiting for the ack of /kafka %s: %w", text, err)
	}
	if strings.Contains(string(ack.Payload), "busy") {
		return command{ack: ack.Latency}, errBusy
	}
	var c command
	c.ack = ack.Latency
	err = sb.emu.WaitFor(ctx, func() bool {
		for _, m := range sb.emu.Messages(channel) {
			if strings.Contains(string(m.Blocks), user) || strings.Contains(m.Text, user) {
				c.message = m
				return true
			}
		}
		return false
	})
	if err != nil {
		return command{}, fmt.Errorf("waiting for the diagnosis of /kafka %s by %s: %w; ack payload %s", text, user, err, ack.Payload)
	}
	c.summary = time.Since(start)
	return c, nil
}

// diagnoseRetry is diagnose, retried while the bot is busy: a worker frees
// its slot just after posting, so a command sent right after a diagnosis
// appears may find the pool still full. It returns the number of retries.
func (sb *slackBot) diagnoseRetry(user, text string) (command, int, error) {
	for retries := 0; ; retries++ {
		c, err := sb.diagnose(user, text)
		if !errors.Is(err, errBusy) {
			return c, retries, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
