// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// clusterSilence is a silence in force with the Kubernetes cluster whose
// sweep holds it as its End button names it (grantCluster).
type clusterSilence struct {
	alert.Silence
	kc string
}

// Silencer creates and lists silences (*sweep.Sweeper satisfies it). It
// must work on every replica, leader or not.
type Silencer interface {
	Silence(ctx context.Context, key string, until time.Time, by string) (alert.Silence, error)
	// Silences returns the silences in force, newest first.
	Silences(ctx context.Context) ([]alert.Silence, error)
	// EndSilence ends silence id now; an error wrapping
	// alert.ErrNoSuchSilence says no silence in force has that id.
	EndSilence(ctx context.Context, id, by string) (alert.Silence, error)
}

// SweepTrigger runs a full health sweep now (*sweep.Sweeper satisfies it).
// It returns an error wrapping alert.ErrNotLeader on a replica that does
// not lead the sweep.
type SweepTrigger interface {
	SweepNow(ctx context.Context) error
}

// silenceClick is one press of a Silence button, or one choice of a
// Silence menu (Choice set).
type silenceClick struct {
	Team, Channel, User string
	MessageTS           string
	Token               string
	// Choice is the menu option chosen ("1h"...); empty for a button.
	Choice      string
	ResponseURL string
	// End marks a click of End silence (Token is then an unsilence grant).
	End bool
	// ThreadTS is the thread of the clicked message ("" outside a thread).
	ThreadTS string
}

// silenceClickFrom extracts a Silence button press from a block_actions
// payload; ok is false for anything else.
func silenceClickFrom(cb slack.InteractionCallback) (silenceClick, bool) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return silenceClick{}, false
	}
	for _, a := range cb.ActionCallback.BlockActions {
		if a == nil {
			continue
		}
		if a.ActionID == actionUnsilence {
			return silenceClick{
				Team: cmp.Or(cb.Team.ID, cb.User.TeamID), Channel: cmp.Or(cb.Channel.ID, cb.Container.ChannelID),
				User: cb.User.ID, MessageTS: cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp),
				Token: a.Value, ResponseURL: cb.ResponseURL, End: true,
				ThreadTS: cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp),
			}, true
		}
		if token, ok := strings.CutPrefix(a.ActionID, slackview.ActionSilenceMenu); ok {
			return silenceClick{
				Team: cmp.Or(cb.Team.ID, cb.User.TeamID), Channel: cmp.Or(cb.Channel.ID, cb.Container.ChannelID),
				User: cb.User.ID, MessageTS: cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp),
				Token: token, Choice: cmp.Or(a.SelectedOption.Value, "-"), ResponseURL: cb.ResponseURL,
			}, true
		}
		if !strings.HasPrefix(a.ActionID, slackview.ActionSilence) {
			continue
		}
		return silenceClick{
			Team: cmp.Or(cb.Team.ID, cb.User.TeamID), Channel: cmp.Or(cb.Channel.ID, cb.Container.ChannelID),
			User: cb.User.ID, MessageTS: cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp),
			Token: a.Value, ResponseURL: cb.ResponseURL,
		}, true
	}
	return silenceClick{}, false
}

// onSilenceClick runs a Silence click on the worker pool (the envelope is
// already acked).
func (b *Bot) onSilenceClick(ctx context.Context, c silenceClick) {
	b.startClick(ctx, "silence click", c.User, c.Channel, c.ResponseURL, func(ctx context.Context) { b.handleSilenceClick(ctx, c) })
}

// handleSilenceClick checks the button and the clicker, silences, and says
// so in the alert's thread. Silencing hides alerts from everyone, so it
// takes the same authority as approving a repair: only APPROVERS may.
func (b *Bot) handleSilenceClick(ctx context.Context, c silenceClick) {
	if c.End {
		b.handleEndSilenceClick(ctx, c)
		return
	}
	now := b.clock()
	g, err := grant.VerifySilence(b.opts.ApprovalSecret, c.Token, now)
	refuse := func(reason, text string) {
		b.log.Info("silence decision", "audit", true, "event", "silence.refused", "reason", reason,
			"user", c.User, "channel", c.Channel, "message_ts", c.MessageTS, "key", g.Key)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(text))
	}
	switch {
	case errors.Is(err, grant.ErrExpired):
		refuse("expired", slackview.RefuseSilenceExpired)
		return
	case err != nil:
		g = grant.Silence{}
		refuse("invalid-token", slackview.RefuseSilenceInvalidToken)
		return
	case c.Choice != "" && !g.Choose(c.Choice):
		refuse("invalid-choice", slackview.RefuseSilenceChoice)
		return
	case g.Channel != c.Channel:
		refuse("wrong-origin", slackview.RefuseSilenceWrongOrigin)
		return
	case !b.isApprover(c.User):
		refuse("not-an-approver", slackview.RefuseSilenceNotApprover(b.approverList()))
		return
	}
	m, ok := b.clusters.Named(g.KubeCluster)
	switch {
	case !ok:
		refuse("unknown-cluster", slackview.RefuseSilenceUnknownCluster)
		return
	case m.Silencer == nil:
		refuse("no-silencer", slackview.RefuseSilenceNoSilencer)
		return
	}
	until := now.Add(g.Duration())
	sil, err := m.Silencer.Silence(ctx, g.Key, until, c.User)
	if err != nil {
		b.log.Error("silencing failed", "key", g.Key, "user", c.User, "error", err)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.SilenceFailed(err.Error()))
		return
	}
	b.log.Info("silence decision", "audit", true, "event", "silence.created", "user", c.User, "channel", c.Channel,
		"message_ts", c.MessageTS, "key", sil.Key, "until", sil.Until, "silence_id", sil.ID)
	text := slackview.Silenced(c.User, b.qualified(m, sil.Key), humanDuration(g.Duration()), sil.Until, sil.ID)
	blocks := b.silenceConfirmation(text, clusterSilence{Silence: sil, kc: b.grantCluster(m)}, c.Channel)
	done := b.poster.Enqueue(slacktransport.MessageKey(c.Channel, c.MessageTS), func(qctx context.Context) {
		if _, err := b.poster.Post(qctx, c.Channel, c.MessageTS, blocks, text); err != nil {
			b.log.Error("posting the silence in the alert's thread failed", "key", sil.Key, "error", err)
		}
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// humanDuration writes 1h, 24h, 7d.
func humanDuration(d time.Duration) string {
	if d >= 48*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// alerting reports whether any cluster has a sweep (Silencer), and for
// command.VerbSweep one that can sweep on demand.
func (b *Bot) alerting(verb command.Verb) bool {
	for _, m := range b.clusters.All() {
		if m.Silencer != nil && (verb != command.VerbSweep || m.Sweeper != nil) {
			return true
		}
	}
	return false
}

// onAlertCommand answers /kafka silences and /kafka sweep.
func (b *Bot) onAlertCommand(ctx context.Context, req socketmode.Request, s slashRequest, verb command.Verb) {
	if !b.alerting(verb) {
		b.ack(ctx, req, ephemeralResponse(slackview.AlertsDisabled))
		metrics.Commands.WithLabelValues(string(verb), "answered").Inc()
		return
	}
	if !b.reserve() {
		b.ack(ctx, req, ephemeralResponse(slackview.Busy))
		metrics.Commands.WithLabelValues(string(verb), "busy").Inc()
		return
	}
	metrics.Commands.WithLabelValues(string(verb), "accepted").Inc()
	if verb == command.VerbSweep {
		b.ack(ctx, req, ephemeralResponse(slackview.Sweeping))
		b.start(ctx, func(ctx context.Context) { b.runSweep(ctx, s) })
		return
	}
	b.ack(ctx, req, ephemeralResponse(slackview.ReadingSilences))
	b.start(ctx, func(ctx context.Context) { b.runSilences(ctx, s) })
}

// runSilences lists the silences in force, to the asker only: every
// cluster's, each cluster asked at once within LookupTimeout on a bot
// serving several (one that cannot be read is named).
func (b *Bot) runSilences(ctx context.Context, s slashRequest) {
	results := fleet.AskEach(ctx, b.clusters, func(ctx context.Context, m *member) ([]alert.Silence, error) {
		if m.Silencer == nil {
			return nil, nil
		}
		return m.Silencer.Silences(ctx)
	}, func(error) bool { return false })
	if r := results[0]; !b.multi() && r.Err != nil {
		b.log.Error("listing silences failed", "error", r.Err)
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.SilencesUnreadable(r.Err.Error()))
		return
	}
	var list []clusterSilence
	var problems []string
	for _, r := range results {
		switch {
		case r.Unreachable != "":
			problems = append(problems, slackview.ClusterUnreachable(r.Member.Name, r.Unreachable))
		case r.Err != nil:
			problems = append(problems, slackview.ClusterFailed(r.Member.Name, r.Err.Error()))
		}
		for _, sil := range r.Val {
			if b.multi() { // each silence names its cluster
				sil.Key = r.Member.Name + ": " + sil.Key
			}
			list = append(list, clusterSilence{Silence: sil, kc: b.grantCluster(r.Member)})
		}
	}
	now := b.clock()
	items := make([]slackview.SilenceItem, len(list))
	for i, sil := range list {
		items[i] = slackview.SilenceItem{Key: sil.Key, By: sil.By, ID: sil.ID, Until: sil.Until, End: b.endSilenceButton(sil, s.Channel)}
	}
	blocks, text := slackview.SilencesList(items, now, slacktransport.MaxPlainText-40)
	if len(problems) > 0 {
		note := slackview.SilencesUnreadableOf(problems)
		text = note + "\n" + text
		if len(blocks) > 0 {
			blocks = append([]slack.Block{slackview.Section("kafkabot.silences.unread", note)}, blocks...)
		}
	}
	if err := b.poster.Ephemeral(ctx, s.Channel, s.User, s.ResponseURL, text, blocks...); err != nil {
		b.log.Error("could not reach the user", "user", s.User, "channel", s.Channel, "error", err)
	}
}

// runSweep runs /kafka sweep: every cluster's sweep, at once. Only the
// leader sweeps; Slack delivers a command to any replica, so a follower
// says so instead.
func (b *Bot) runSweep(ctx context.Context, s slashRequest) {
	type outcome struct {
		m   *member
		err error
	}
	var sweepers []*member
	for _, m := range b.clusters.All() {
		if m.Sweeper != nil {
			sweepers = append(sweepers, m)
		}
	}
	out := make([]outcome, len(sweepers))
	var wg sync.WaitGroup
	for i, m := range sweepers {
		wg.Go(func() { out[i] = outcome{m, m.Sweeper.SweepNow(ctx)} })
	}
	wg.Wait()
	var notLeader, failed, swept []string
	for _, o := range out {
		switch {
		case errors.Is(o.err, alert.ErrNotLeader):
			notLeader = append(notLeader, "`"+o.m.Name+"`")
		case o.err != nil:
			b.log.Error("sweep on request failed", "user", s.User, "cluster", o.m.Name, "error", o.err)
			failed = append(failed, b.qualified(o.m, slackview.EscapeTruncate(o.err.Error(), 300)))
		default:
			swept = append(swept, "`"+o.m.Name+"`")
		}
	}
	where := slackview.AlertChannel("")
	if b.opts.Alerts != nil {
		where = slackview.AlertChannel(b.opts.Alerts.Channel())
	}
	if !b.multi() {
		switch {
		case len(notLeader) > 0:
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.SweepNotLeader)
		case len(failed) > 0:
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.SweepFailed(failed[0]))
		default:
			b.log.Info("sweep on request", "audit", true, "user", s.User, "channel", s.Channel)
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.SweptAll(where))
		}
		return
	}
	b.log.Info("sweep on request", "audit", true, "user", s.User, "channel", s.Channel, "swept", len(swept), "not_leader", len(notLeader), "failed", len(failed))
	var lines []string
	if len(swept) > 0 {
		lines = append(lines, slackview.Swept(swept, where))
	}
	if len(notLeader) > 0 {
		lines = append(lines, slackview.SweepNotLeaderOf(notLeader))
	}
	for _, f := range failed {
		lines = append(lines, slackview.SweepFailed(f))
	}
	b.tell(ctx, s.Channel, s.User, s.ResponseURL, strings.Join(lines, "\n"))
}
