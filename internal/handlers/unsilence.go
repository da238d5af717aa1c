// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"strings"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Ending a silence early: an "End silence" button on the silence's
// confirmation in the alert's thread and on each line of /kafka silences.
// The button's value is a signed grant naming the silence, the channel it
// may be clicked in and its expiry (the silence's own end).

// actionUnsilence is the End silence button's action_id.
const actionUnsilence = "kafkabot.unsilence"

// endSilenceButton returns the End silence button for sil, clickable in
// channel until the silence ends, or nil when signing fails.
func (b *Bot) endSilenceButton(sil clusterSilence, channel string) *slack.ButtonBlockElement {
	token, err := grant.SignUnsilence(b.opts.ApprovalSecret,
		grant.Unsilence{KubeCluster: sil.kc, ID: sil.ID, Key: sil.Key, Channel: channel, ExpiresAt: sil.Until.Unix()})
	if err != nil {
		b.log.Error("signing an End silence button failed; posting without it", "silence_id", sil.ID, "error", err)
		return nil
	}
	return slack.NewButtonBlockElement(actionUnsilence, token, slackview.Plain(slackview.EndSilenceButton)).WithConfirm(slackview.EndSilenceConfirm(sil.Key))
}

// silenceConfirmation is the thread reply saying a silence was set, with
// its End silence button.
func (b *Bot) silenceConfirmation(text string, sil clusterSilence, channel string) []slack.Block {
	blocks := []slack.Block{slackview.Section("kafkabot.silenced", text)}
	if btn := b.endSilenceButton(sil, channel); btn != nil {
		blocks = append(blocks, slack.NewActionBlock("kafkabot.silenced.actions", btn))
	}
	return blocks
}

// handleEndSilenceClick checks the button and the clicker, ends the
// silence, and says so in the alert's thread (or to the clicker, from
// /kafka silences). Ending a silence takes the authority of setting one.
func (b *Bot) handleEndSilenceClick(ctx context.Context, c silenceClick) {
	now := b.clock()
	g, err := grant.VerifyUnsilence(b.opts.ApprovalSecret, c.Token, now)
	refuse := func(reason, text string) {
		b.log.Info("silence decision", "audit", true, "event", "silence.end-refused", "reason", reason,
			"user", c.User, "channel", c.Channel, "message_ts", c.MessageTS, "silence_id", g.ID)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(text))
	}
	switch {
	case errors.Is(err, grant.ErrExpired):
		refuse("expired", slackview.RefuseEndExpired)
		return
	case err != nil:
		g = grant.Unsilence{}
		refuse("invalid-token", slackview.RefuseInvalidToken)
		return
	case g.Channel != c.Channel:
		refuse("wrong-origin", slackview.RefuseEndWrongOrigin)
		return
	case !b.isApprover(c.User):
		refuse("not-an-approver", slackview.RefuseEndNotApprover(b.approverList()))
		return
	}
	m, ok := b.clusters.Named(g.KubeCluster)
	switch {
	case !ok:
		refuse("unknown-cluster", slackview.RefuseEndUnknownCluster)
		return
	case m.Silencer == nil:
		refuse("no-silencer", slackview.RefuseEndNoSilencer)
		return
	}
	sil, err := m.Silencer.EndSilence(ctx, g.ID, c.User)
	switch {
	case errors.Is(err, alert.ErrNoSuchSilence):
		refuse("not-in-force", slackview.RefuseEndNotInForce)
		return
	case err != nil:
		b.log.Error("ending a silence failed", "silence_id", g.ID, "user", c.User, "error", err)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.EndSilenceFailed(err.Error()))
		return
	}
	b.log.Info("silence decision", "audit", true, "event", "silence.ended", "user", c.User, "channel", c.Channel,
		"message_ts", c.MessageTS, "key", sil.Key, "silence_id", sil.ID)
	text := slackview.SilenceEnded(c.User, b.qualified(m, cmpOr(sil.Key, g.Key)), g.ID, now)
	if c.ThreadTS == "" {
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, text)
		return
	}
	done := b.poster.Enqueue(slacktransport.MessageKey(c.Channel, c.ThreadTS), func(qctx context.Context) {
		if _, err := b.poster.Post(qctx, c.Channel, c.ThreadTS, nil, text); err != nil {
			b.log.Error("posting the end of a silence in the alert's thread failed", "silence_id", g.ID, "error", err)
		}
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
