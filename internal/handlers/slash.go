// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"slices"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// ephemeralResponse is an ack payload shown only to the user who typed the command.
func ephemeralResponse(text string) map[string]any {
	return map[string]any{"response_type": "ephemeral", "text": text}
}

// slashRequest is what the bot reads from a slash command.
type slashRequest struct {
	Team, Channel, User, Command, Text, ResponseURL string
}

func slashFrom(cmd slack.SlashCommand) slashRequest {
	return slashRequest{Team: cmd.TeamID, Channel: cmd.ChannelID, User: cmd.UserID,
		Command: cmd.Command, Text: cmd.Text, ResponseURL: cmd.ResponseURL}
}

func (b *Bot) onSlashCommand(ctx context.Context, req socketmode.Request, cmd slack.SlashCommand) {
	if !b.firstDelivery(req) {
		b.ack(ctx, req, nil)
		metrics.Commands.WithLabelValues("any", "duplicate").Inc()
		return
	}
	s := slashFrom(cmd)
	parsed, err := command.Parse(s.Text)
	if err != nil {
		b.log.Info("unusable /kafka command", "audit", true, "user", s.User, "channel", s.Channel, "problem", err.Error())
		b.ack(ctx, req, ephemeralResponse(slackview.UsageProblem(err.Error(), s.Command)))
		metrics.Commands.WithLabelValues("unknown", "usage").Inc()
		return
	}
	switch parsed.Verb {
	case command.VerbHelp:
		b.ack(ctx, req, ephemeralResponse(slackview.Usage(s.Command)))
		metrics.Commands.WithLabelValues(string(command.VerbHelp), "answered").Inc()
	case command.VerbSilences, command.VerbSweep:
		b.onAlertCommand(ctx, req, s, parsed.Verb)
	case command.VerbStatus, command.VerbDiagnose:
		retry, ok := b.queue.Admit()
		if !ok {
			running, waiting := b.queue.Depth()
			b.log.Warn("command queue full; refusing a command", "user", s.User, "workers", running, "waiting", waiting)
			b.ack(ctx, req, ephemeralResponse(slackview.QueueFull(waiting, retry)))
			metrics.Commands.WithLabelValues(string(parsed.Verb), "busy").Inc()
			return
		}
		metrics.Commands.WithLabelValues(string(parsed.Verb), "accepted").Inc()
		if parsed.Verb == command.VerbStatus {
			b.ack(ctx, req, ephemeralResponse(slackview.ReadingStatus))
			b.enqueue(ctx, s.User, func(ctx context.Context) { b.runStatus(ctx, s) })
			return
		}
		target := strings.Join(slices.DeleteFunc([]string{parsed.KubeCluster, parsed.Scope, parsed.Namespace, parsed.Pod},
			func(s string) bool { return s == "" }), "/")
		b.ack(ctx, req, ephemeralResponse(slackview.Diagnosing(target)))
		b.enqueue(ctx, s.User, func(ctx context.Context) { b.runDiagnose(ctx, s, parsed) })
	}
}

// runStatus answers /kafka status: one cluster's pods as before, or, on a
// bot serving several clusters, a section per cluster, each cluster asked
// at once within LookupTimeout (an unreachable one is shown as such).
func (b *Bot) runStatus(ctx context.Context, s slashRequest) {
	if b.multi() {
		b.runFleetStatus(ctx, s)
		return
	}
	m := b.clusters.All()[0]
	pods, err := m.Reader.KafkaPods(ctx)
	if err != nil {
		b.log.Error("listing kafka pods failed", "error", err)
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.CannotListPods(err.Error()))
		return
	}
	msg := slackview.Status(pods, b.clock(), repairNotice(m))
	b.postStatus(ctx, s, msg.Blocks, msg.Fallback)
}

// repairNotice is m's line on whether repairs can run at all, or "".
func repairNotice(m *member) string {
	if m.RepairNotice == nil {
		return ""
	}
	return m.RepairNotice()
}

// postStatus posts /kafka status's message, or shows it to the asker when
// the bot cannot post in the channel.
func (b *Bot) postStatus(ctx context.Context, s slashRequest, blocks []slack.Block, fallback string) {
	if _, err := b.poster.Post(ctx, s.Channel, "", blocks, fallback); err != nil && slacktransport.CannotPostHere(err) {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.NotInChannel(slacktransport.ErrorCode(err))+"\n"+fallback)
	}
}

// runFleetStatus is /kafka status on a bot serving several clusters.
func (b *Bot) runFleetStatus(ctx context.Context, s slashRequest) {
	results := fleet.AskEach(ctx, b.clusters, func(ctx context.Context, m *member) ([]diagnose.Snapshot, error) {
		return m.Reader.KafkaPods(ctx)
	}, func(error) bool { return false })
	clusters := make([]slackview.ClusterPods, len(results))
	for i, r := range results {
		clusters[i] = slackview.ClusterPods{Name: r.Member.Name, Unreachable: r.Unreachable, Err: r.Err, Pods: r.Val}
		if r.Unreachable == "" && r.Err == nil {
			clusters[i].Notice = repairNotice(r.Member)
		}
	}
	msg := slackview.FleetStatus(clusters, b.clock())
	b.postStatus(ctx, s, msg.Blocks, slackview.Truncate(msg.Fallback, slacktransport.MaxPlainText))
}

// postDetails posts a message's details as the first reply in its thread,
// through the thread's ordered queue (so nothing about a repair can
// overtake it), and waits for it (or ctx).
func (b *Bot) postDetails(ctx context.Context, channel, ts string, details slackview.Message) {
	done := b.poster.Enqueue(slacktransport.MessageKey(channel, ts), func(qctx context.Context) {
		if _, err := b.poster.Post(qctx, channel, ts, details.Blocks, details.Fallback); err != nil {
			b.log.Error("posting the diagnosis details in the thread failed", "channel", channel, "ts", ts, "error", err)
		}
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// tell shows text to one user only.
func (b *Bot) tell(ctx context.Context, channel, user, responseURL, text string) {
	if err := b.poster.Ephemeral(ctx, channel, user, responseURL, text); err != nil {
		b.log.Error("could not reach the user", "user", user, "channel", channel, "error", err)
	}
}
