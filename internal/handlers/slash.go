package handlers

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/approval"
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
		if !b.reserve() {
			b.log.Warn("worker pool saturated; refusing a command", "user", s.User, "workers", b.opts.Workers)
			b.ack(ctx, req, ephemeralResponse(busyText))
			metrics.Commands.WithLabelValues(string(parsed.Verb), "busy").Inc()
			return
		}
		metrics.Commands.WithLabelValues(string(parsed.Verb), "accepted").Inc()
		if parsed.Verb == VerbStatus {
			b.ack(ctx, req, ephemeralResponse("🔎 Reading the Kafka pods' status…"))
			b.start(ctx, func(ctx context.Context) { b.runStatus(ctx, s) })
			return
		}
		target := parsed.Pod
		if parsed.Namespace != "" {
			target = parsed.Namespace + "/" + parsed.Pod
		}
		b.ack(ctx, req, ephemeralResponse("🔎 Diagnosing `"+target+"`… the result will be posted in this channel."))
		b.start(ctx, func(ctx context.Context) { b.runDiagnose(ctx, s, parsed) })
	}
}

// runStatus answers /kafka status.
func (b *Bot) runStatus(ctx context.Context, s slashRequest) {
	pods, err := b.opts.Cluster.KafkaPods(ctx)
	if err != nil {
		b.log.Error("listing kafka pods failed", "error", err)
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, "⚠️ I could not list the Kafka pods: "+escapeTruncate(err.Error(), 500))
		return
	}
	msg := slackview.Pods(pods, b.clock())
	blocks, fallback := msg.Blocks, msg.Fallback
	if _, err := b.poster.post(ctx, s.Channel, "", blocks, fallback); err != nil && cannotPostHere(err) {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, notInChannelText(err)+"\n"+fallback)
	}
}

// runDiagnose answers /kafka diagnose.
func (b *Bot) runDiagnose(ctx context.Context, s slashRequest, cmd Command) {
	ns, pod, err := b.opts.Cluster.FindPod(ctx, cmd.Namespace, cmd.Pod)
	if err != nil {
		b.log.Info("pod lookup failed", "audit", true, "user", s.User, "channel", s.Channel, "namespace", cmd.Namespace, "pod", cmd.Pod, "error", err)
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, "⚠️ "+escapeTruncate(err.Error(), 1500))
		return
	}
	snap, err := b.opts.Cluster.Snapshot(ctx, ns, pod)
	if err != nil {
		b.log.Error("reading pod failed", "namespace", ns, "pod", pod, "error", err)
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, fmt.Sprintf("⚠️ I could not read %s: %s",
			inlineCode(ns+"/"+pod, 200), escapeTruncate(err.Error(), 1500)))
		return
	}
	if snap.Namespace == "" {
		snap.Namespace = ns
	}
	if snap.Pod == "" {
		snap.Pod = pod
	}
	findings := b.opts.Diagnoser.Diagnose(snap)
	rule := "none"
	if len(findings) > 0 {
		rule = findings[0].Rule
	}
	metrics.Diagnoses.WithLabelValues(rule).Inc()
	now := b.clock()
	view := slackview.Diagnosis{ClusterName: b.opts.ClusterName, Snapshot: snap, Findings: findings, Requester: s.User, Now: now}
	if len(findings) > 0 && repairable(snap, findings[0]) {
		view.ExpiresAt = now.Add(b.opts.ApprovalTTL)
		f := findings[0]
		token, err := approval.Sign(b.opts.ApprovalSecret, approval.Approval{
			ID: approval.NewID(), Namespace: snap.Namespace, Pod: snap.Pod, PodUID: snap.UID,
			Rule: f.Rule, Action: f.Remedy.Action, Target: f.Remedy.Target,
			Requester: s.User, Channel: s.Channel, Team: s.Team,
			IssuedAt: now, ExpiresAt: view.ExpiresAt,
		})
		if err != nil {
			// The diagnosis is still worth showing; only the buttons are lost.
			b.log.Error("signing an approval failed; posting without buttons", "pod", snap.Pod, "error", err)
		} else {
			view.Token = token
		}
	}
	msg := view.Message()
	fallback := msg.Fallback
	ts, err := b.poster.post(ctx, s.Channel, "", msg.Blocks, fallback)
	if err != nil {
		if cannotPostHere(err) {
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, notInChannelText(err)+"\n"+fallback)
		} else {
			// Slack kept failing: the user must not be left with "Diagnosing…".
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, fmt.Sprintf("⚠️ I could not post the diagnosis in this channel (%s). The short version:\n%s",
				escapeTruncate(err.Error(), 300), fallback))
		}
		return
	}
	b.postDetails(ctx, s.Channel, ts, view.Details())
	b.log.Info("diagnosis posted", "audit", true, "user", s.User, "channel", s.Channel, "ts", ts,
		"namespace", snap.Namespace, "pod", snap.Pod, "rule", rule, "findings", len(findings), "approval_offered", view.Token != "")
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
