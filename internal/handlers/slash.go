// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// ephemeralResponse is an ack payload shown only to the user who typed the command.
func ephemeralResponse(text string) map[string]any {
	return map[string]any{"response_type": "ephemeral", "text": text}
}

const busyText = "⏳ I am busy with other requests right now. Please try again in a minute."

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
	parsed, err := ParseCommand(s.Text)
	if err != nil {
		b.log.Info("unusable /kafka command", "audit", true, "user", s.User, "channel", s.Channel, "problem", err.Error())
		b.ack(ctx, req, ephemeralResponse("⚠️ "+err.Error()+"\n\n"+usageText(s.Command)))
		metrics.Commands.WithLabelValues("unknown", "usage").Inc()
		return
	}
	switch parsed.Verb {
	case VerbHelp:
		b.ack(ctx, req, ephemeralResponse(usageText(s.Command)))
		metrics.Commands.WithLabelValues(string(VerbHelp), "answered").Inc()
	case VerbSilences, VerbSweep:
		b.onAlertCommand(ctx, req, s, parsed.Verb)
	case VerbStatus, VerbDiagnose:
		retry, ok := b.queue.admit()
		if !ok {
			running, waiting := b.queue.depth()
			b.log.Warn("command queue full; refusing a command", "user", s.User, "workers", running, "waiting", waiting)
			b.ack(ctx, req, ephemeralResponse(queueFullText(waiting, retry)))
			metrics.Commands.WithLabelValues(string(parsed.Verb), "busy").Inc()
			return
		}
		metrics.Commands.WithLabelValues(string(parsed.Verb), "accepted").Inc()
		if parsed.Verb == VerbStatus {
			b.ack(ctx, req, ephemeralResponse("🔎 Reading the Kafka pods' status…"))
			b.enqueue(ctx, s.User, func(ctx context.Context) { b.runStatus(ctx, s) })
			return
		}
		target := strings.Join(slices.DeleteFunc([]string{parsed.Cluster, parsed.Scope, parsed.Namespace, parsed.Pod},
			func(s string) bool { return s == "" }), "/")
		b.ack(ctx, req, ephemeralResponse("🔎 Diagnosing `"+target+"`… the result will be posted in this channel."))
		b.enqueue(ctx, s.User, func(ctx context.Context) { b.runDiagnose(ctx, s, parsed) })
	}
}

// blockRepairNotice is the block ID of /kafka status's repair notice.
const blockRepairNotice = "repair-notice"

// queueFullText is the refusal of a command when the queue is full: it
// says why and when to try again (at least 5 s, in whole seconds).
func queueFullText(waiting int, retry time.Duration) string {
	secs := max(int((retry+time.Second-1)/time.Second), 5)
	return fmt.Sprintf("⏳ %d requests are already waiting, as many as I queue (QUEUE_SIZE). Please try again in about %d seconds.", waiting, secs)
}

// runStatus answers /kafka status: one cluster's pods as before, or, on a
// bot serving several clusters, a section per cluster, each cluster asked
// at once within LookupTimeout (an unreachable one is shown as such).
func (b *Bot) runStatus(ctx context.Context, s slashRequest) {
	if b.multi() {
		b.runFleetStatus(ctx, s)
		return
	}
	m := b.members[0]
	pods, err := m.Reader.KafkaPods(ctx)
	if err != nil {
		b.log.Error("listing kafka pods failed", "error", err)
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, "⚠️ I could not list the Kafka pods: "+escapeTruncate(err.Error(), 500))
		return
	}
	msg := slackview.Pods(pods, b.clock())
	blocks, fallback := msg.Blocks, msg.Fallback
	if m.RepairNotice != nil {
		if notice := m.RepairNotice(); notice != "" && len(blocks) > 0 {
			// Right under the header: whether repairs can run at all.
			blocks = append(blocks[:1:1], append([]slack.Block{slackview.Section(blockRepairNotice, notice)}, blocks[1:]...)...)
			fallback = notice + "\n" + fallback
		}
	}
	b.postStatus(ctx, s, blocks, fallback)
}

// postStatus posts /kafka status's message, or shows it to the asker when
// the bot cannot post in the channel.
func (b *Bot) postStatus(ctx context.Context, s slashRequest, blocks []slack.Block, fallback string) {
	if _, err := b.poster.post(ctx, s.Channel, "", blocks, fallback); err != nil && cannotPostHere(err) {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, notInChannelText(err)+"\n"+fallback)
	}
}

// runFleetStatus is /kafka status on a bot serving several clusters.
func (b *Bot) runFleetStatus(ctx context.Context, s slashRequest) {
	results := eachCluster(ctx, b, func(ctx context.Context, m *member) ([]diagnose.Snapshot, error) {
		return m.Reader.KafkaPods(ctx)
	}, func(error) bool { return false })
	now := b.clock()
	blocks := []slack.Block{slackview.Header("Kafka pods, by Kubernetes cluster")}
	// Each cluster gets an equal share of the message's blocks, so a long
	// list never pushes another cluster (an unreachable one) out.
	budget := max((slackview.MaxBlocks-1)/len(results), 2)
	var fallback []string
	for _, r := range results {
		var section []slack.Block
		var text string
		switch {
		case r.unreachable != "":
			text = fmt.Sprintf("⛔ *%s* cannot be reached (%s)", escapeMrkdwn(r.m.Name), escapeTruncate(r.unreachable, 200))
			section = []slack.Block{slackview.Section("cluster-"+r.m.Name, text)}
		case r.err != nil:
			text = fmt.Sprintf("⚠️ *%s*: I could not list the Kafka pods (%s)", escapeMrkdwn(r.m.Name), escapeTruncate(r.err.Error(), 200))
			section = []slack.Block{slackview.Section("cluster-"+r.m.Name, text)}
		default:
			msg := slackview.Pods(r.val, now)
			text = fmt.Sprintf("☸️ *%s*", escapeMrkdwn(r.m.Name))
			section = []slack.Block{slack.NewDividerBlock(), slackview.Section("cluster-"+r.m.Name, text)}
			if r.m.RepairNotice != nil {
				if notice := r.m.RepairNotice(); notice != "" {
					section = append(section, slackview.Section(blockRepairNotice+"-"+r.m.Name, notice))
					text += "\n" + notice
				}
			}
			if len(msg.Blocks) > 1 {
				section = append(section, msg.Blocks[1:]...) // without its header
			}
			text += "\n" + msg.Fallback
		}
		if len(section) > budget {
			section = append(section[:budget-1], slackview.Section("cluster-more-"+r.m.Name,
				fmt.Sprintf("_… %d more sections of %s left out (Slack's limit on one message's blocks)._", len(section)-budget+1, escapeMrkdwn(r.m.Name))))
		}
		blocks = append(blocks, section...)
		fallback = append(fallback, text)
	}
	b.postStatus(ctx, s, capBlocks(blocks), truncateRunes(strings.Join(fallback, "\n"), plainFallbackMaxText))
}

// postDetails posts a message's details as the first reply in its thread,
// through the thread's ordered queue (so nothing about a repair can
// overtake it), and waits for it (or ctx).
func (b *Bot) postDetails(ctx context.Context, channel, ts string, details slackview.Message) {
	done := b.poster.enqueue(messageKey(channel, ts), func(qctx context.Context) {
		if _, err := b.poster.post(qctx, channel, ts, details.Blocks, details.Fallback); err != nil {
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
	if err := b.poster.ephemeral(ctx, channel, user, responseURL, text); err != nil {
		b.log.Error("could not reach the user", "user", user, "channel", channel, "error", err)
	}
}

func notInChannelText(err error) string {
	return fmt.Sprintf("⚠️ I cannot post in this channel (`%s`). Invite me with `/invite @kafkabot` and try again. The short version:",
		slackErrorCode(err))
}
