// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package alertnotify posts the health sweep's and Alertmanager's alerts
// to Slack (sweep.Notifier): an alert, a grouped alert and its new
// members, resolutions and the sweep's summary, through the running bot's
// poster and its live copies of messages. What it needs of the bot is the
// small Bot interface below (*handlers.Bot provides it), so it knows
// nothing of commands and clicks, and the bot knows nothing of alerts
// beyond their Silence buttons.
package alertnotify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Requester is who asks for the repair an alert offers: the sweep.
const Requester = "sweep"

// groupCacheSize bounds the grouped messages whose members are kept.
const groupCacheSize = 256

// ErrBotStopped is returned by the notifier once the bot's Run returned.
var ErrBotStopped = errors.New("the Slack bot has stopped")

// Bot is what the notifier uses of the Slack bot it posts through.
type Bot interface {
	// Cluster returns the name of the served Kubernetes cluster that name
	// means ("" is a bot's only cluster), and false when it serves none.
	Cluster(name string) (string, bool)
	// InCluster prefixes path ("namespace" or "namespace/pod") with the
	// cluster on a bot serving several, so a message names it.
	InCluster(cluster, path string) string
	// KafkaView reads Kafka's own view of snap's Kafka cluster for a card
	// that offers Approve (the zero view when the cluster has no Kafka
	// access configured: the card then says so).
	KafkaView(ctx context.Context, cluster string, snap diagnose.Snapshot) slackview.KafkaView
	// Offer signs the Approve / Reject buttons of a repairable diagnosis
	// for requester in channel; it returns "" (no buttons) when signing
	// fails, and when the buttons expire.
	Offer(cluster string, snap diagnose.Snapshot, f diagnose.Finding, requester, channel, team string, now time.Time) (token string, expires time.Time)
	// SignSilence signs the grant of a Silence control that silences key
	// for d, clicked in channel (internal/grant).
	SignSilence(cluster, key string, d time.Duration, channel string, now time.Time) (string, error)
	// PostDetails posts a message's details as the first reply in its
	// thread and waits for it.
	PostDetails(ctx context.Context, channel, ts string, details slackview.Message)
	// Messages are the live copies of the bot's messages, shared with the
	// repairs started from their buttons.
	Messages() *slacktransport.Messages
	// Logger receives the audit log lines; Now is the bot's clock.
	Logger() *slog.Logger
	Now() time.Time
}

// Notifier posts the health sweep's alerts to one Slack channel through
// the bot's poster: the same Block Kit diagnosis as /kafka diagnose (with
// Approve / Reject when the finding is repairable, and Silence buttons),
// grouped alerts, resolutions and summaries. Posts about one message go
// through that message's ordered queue, shared with the repair reporter,
// so they never overtake each other.
//
// Create it with New and give it to the bot (handlers.Options.Alerts),
// which binds it and starts it when its Run starts; its methods wait until
// then (or ctx ends) and fail once Run has returned. Methods may be called
// from one goroutine at a time.
//
// Each cluster's sweep posts through its own view, ForCluster(name): on a
// bot serving several, its alerts name that cluster in their header and
// carry it in their Approve and Silence tokens.
type Notifier struct {
	*core
	// cluster is the Kubernetes cluster this view's alerts come from (its
	// handlers.ClusterOptions.Name; "" for an unnamed only cluster).
	cluster string
}

// core is what the views of one Notifier share.
type core struct {
	channel string
	ready   chan struct{} // closed once the bot's poster exists
	groups  *slacktransport.LRU[string, *groupMembers]

	mu      sync.RWMutex // guards bot, poster and stopped
	bot     Bot
	poster  *slacktransport.Poster
	stopped bool
}

// New returns a notifier posting to channel (a channel ID,
// ALERT_CHANNEL). It posts nothing until the bot it is given to runs.
func New(channel string) *Notifier {
	return &Notifier{core: &core{channel: channel, ready: make(chan struct{}), groups: slacktransport.NewLRU[string, *groupMembers](groupCacheSize)}}
}

// ForCluster returns the view of n that posts the alerts of the Kubernetes
// cluster name (handlers.Options.Clusters' Name). Give n itself to the bot.
func (n *Notifier) ForCluster(name string) *Notifier {
	return &Notifier{core: n.core, cluster: name}
}

// Channel is the channel the notifier posts to.
func (n *Notifier) Channel() string { return n.channel }

// Bind gives the notifier to its bot (the bot's constructor calls it).
func (n *Notifier) Bind(b Bot) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.bot != nil {
		return errors.New("alertnotify: the Notifier already belongs to another Bot")
	}
	if n.channel == "" {
		return errors.New("alertnotify: the Notifier has no channel")
	}
	n.bot = b
	return nil
}

// Start connects the notifier to the running bot's poster (the bot's Run
// calls it).
func (n *Notifier) Start(p *slacktransport.Poster) {
	n.mu.Lock()
	n.poster = p
	n.mu.Unlock()
	close(n.ready)
}

// Stop refuses further posts; queued ones finish with the bot (the bot's
// Run calls it before it waits for its goroutines).
func (n *Notifier) Stop() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
}

// running waits for the bot to run and returns it and its poster.
func (n *Notifier) running(ctx context.Context) (Bot, *slacktransport.Poster, error) {
	select {
	case <-n.ready:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("waiting for the Slack bot to start: %w", ctx.Err())
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.stopped {
		return nil, nil, ErrBotStopped
	}
	return n.bot, n.poster, nil
}

// clusterOf returns the cluster of this view's alerts.
func (n *Notifier) clusterOf(b Bot) (string, error) {
	name, ok := b.Cluster(n.cluster)
	if !ok {
		return "", fmt.Errorf("alertnotify: alerts of cluster %q, which the bot does not serve", n.cluster)
	}
	return name, nil
}

// inOrder runs job in the ordered queue of message ref and waits for its
// result (or ctx). The job runs with the bot's lifetime context, so a
// queued update is not lost when the caller stops waiting.
func (n *Notifier) inOrder(ctx context.Context, ref alert.MessageRef, job func(ctx context.Context) error) error {
	n.mu.RLock()
	if n.stopped {
		n.mu.RUnlock()
		return ErrBotStopped
	}
	result := make(chan error, 1)
	n.poster.Enqueue(slacktransport.MessageKey(ref.Channel, ref.TS), func(ctx context.Context) { result <- job(ctx) })
	n.mu.RUnlock()
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify posts one alert and returns where it was posted.
func (n *Notifier) Notify(ctx context.Context, a alert.Alert) (alert.MessageRef, error) {
	b, p, err := n.running(ctx)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about %s: %w", a.Key, err)
	}
	cluster, err := n.clusterOf(b)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about %s: %w", a.Key, err)
	}
	channel := cmp.Or(a.Channel, n.channel)
	msg, details := RenderAlert(ctx, b, cluster, a, channel, b.Now())
	blocks := msg.Blocks
	ts, err := p.Post(ctx, channel, "", blocks, msg.Fallback)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about %s: %w", a.Key, err)
	}
	b.PostDetails(ctx, channel, ts, details)
	b.Messages().Get(channel, ts, blocks)
	b.Logger().Info("alert posted", "audit", true, "channel", channel, "ts", ts, "cluster", cluster, "alert", a.Key,
		"reason", a.Reason, "repeat", a.Repeat, "changed", a.Changed, "approval_offered", slackview.HasButtons(blocks))
	return alert.MessageRef{Channel: channel, TS: ts}, nil
}

// NotifyGroup posts one alert for several pods of a cluster, or, when g.Ref
// is set, lists the new members in its thread and updates it.
func (n *Notifier) NotifyGroup(ctx context.Context, g alert.Group) (alert.MessageRef, error) {
	b, p, err := n.running(ctx)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about group %s: %w", g.Key, err)
	}
	cluster, err := n.clusterOf(b)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about group %s: %w", g.Key, err)
	}
	now := b.Now()
	if g.Ref.IsZero() {
		members := newGroupMembers()
		members.add(g.Alerts)
		blocks, fallback := renderGroup(b, cluster, g, members, n.channel, now)
		ts, err := p.Post(ctx, n.channel, "", blocks, fallback)
		if err != nil {
			return alert.MessageRef{}, fmt.Errorf("alerting about group %s: %w", g.Key, err)
		}
		n.groups.AddIfAbsent(slacktransport.MessageKey(n.channel, ts), members)
		b.Messages().Get(n.channel, ts, blocks)
		b.Logger().Info("group alert posted", "audit", true, "channel", n.channel, "ts", ts, "group", g.Key, "pods", len(g.Alerts))
		return alert.MessageRef{Channel: n.channel, TS: ts}, nil
	}
	members, _ := n.groups.AddIfAbsent(slacktransport.MessageKey(g.Ref.Channel, g.Ref.TS), newGroupMembers())
	members.add(g.Alerts)
	blocks, fallback := renderGroup(b, cluster, g, members, g.Ref.Channel, now)
	err = n.inOrder(ctx, g.Ref, func(qctx context.Context) error {
		if _, err := p.Post(qctx, g.Ref.Channel, g.Ref.TS, nil, slackview.GroupThreadText(factsOf(g.Alerts), g.Firing)); err != nil {
			return err
		}
		return p.Update(qctx, g.Ref.Channel, g.Ref.TS, blocks, fallback)
	})
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("adding to group alert %s: %w", g.Key, err)
	}
	b.Messages().Get(g.Ref.Channel, g.Ref.TS, nil).Replace(blocks)
	return g.Ref, nil
}

// Resolve marks the alert posted at ref as resolved: the message loses its
// buttons and says so, and a line is posted in its thread. For a member of
// a group (a.Group set) ref is the group's message and only the thread
// line is posted.
func (n *Notifier) Resolve(ctx context.Context, ref alert.MessageRef, a alert.Alert) error {
	b, p, err := n.running(ctx)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", a.Key, err)
	}
	line := slackview.ResolutionLine(facts(a))
	if a.Group != "" {
		err := n.inOrder(ctx, ref, func(qctx context.Context) error {
			_, err := p.Post(qctx, ref.Channel, ref.TS, nil, line)
			return err
		})
		if err != nil {
			return fmt.Errorf("resolving group member %s: %w", a.Key, err)
		}
		return nil
	}
	cluster, _ := n.clusterOf(b)
	ns := b.InCluster(cluster, a.Namespace) // the resolved header names the cluster too
	parent := b.Messages().Get(ref.Channel, ref.TS, nil)
	parent.Rewrite(func(blocks []slack.Block) []slack.Block {
		return resolved(blocks, slackview.ResolvedHeader(slackview.PodLabel(ns, a.Pod), a.Title), slackview.ResolvedBanner(facts(a)), slackview.ResolvedAlert(facts(a)))
	})
	err = n.inOrder(ctx, ref, func(qctx context.Context) error {
		blocks, _ := parent.Snapshot()
		if err := p.Update(qctx, ref.Channel, ref.TS, blocks, "Resolved: "+slackview.PodLabel(a.Namespace, a.Pod)); err != nil {
			return err
		}
		_, err := p.Post(qctx, ref.Channel, ref.TS, nil, line)
		return err
	})
	if err != nil {
		return fmt.Errorf("resolving %s: %w", a.Key, err)
	}
	b.Logger().Info("alert resolved", "audit", true, "channel", ref.Channel, "ts", ref.TS, "alert", a.Key, "resolution", a.Resolution)
	return nil
}

// ResolveGroup marks the group message at ref as resolved.
func (n *Notifier) ResolveGroup(ctx context.Context, ref alert.MessageRef, g alert.Group) error {
	b, p, err := n.running(ctx)
	if err != nil {
		return fmt.Errorf("resolving group %s: %w", g.Key, err)
	}
	members, _ := n.groups.AddIfAbsent(slacktransport.MessageKey(ref.Channel, ref.TS), newGroupMembers())
	members.add(g.Alerts)
	cluster, _ := n.clusterOf(b)
	rg := slackview.ResolvedGroup(b.InCluster(cluster, g.Namespace), g.KafkaCluster, members.sorted(), b.Now())
	blocks, fallback := rg.Blocks, rg.Fallback
	err = n.inOrder(ctx, ref, func(qctx context.Context) error {
		if err := p.Update(qctx, ref.Channel, ref.TS, blocks, fallback); err != nil {
			return err
		}
		_, err := p.Post(qctx, ref.Channel, ref.TS, nil, slackview.GroupResolvedLine)
		return err
	})
	if err != nil {
		return fmt.Errorf("resolving group %s: %w", g.Key, err)
	}
	b.Messages().Get(ref.Channel, ref.TS, nil).Replace(blocks)
	b.Logger().Info("group alert resolved", "audit", true, "channel", ref.Channel, "ts", ref.TS, "group", g.Key)
	return nil
}

// Summary posts the periodic summary of a scheduled sweep.
func (n *Notifier) Summary(ctx context.Context, s alert.Summary) error {
	_, p, err := n.running(ctx)
	if err != nil {
		return fmt.Errorf("posting the sweep summary: %w", err)
	}
	sm := slackview.SweepSummary{At: s.At, KafkaPods: s.KafkaPods, Firing: factsOf(s.Firing), Silenced: s.Silenced}.Message()
	if _, err := p.Post(ctx, n.channel, "", sm.Blocks, sm.Fallback); err != nil {
		return fmt.Errorf("posting the sweep summary: %w", err)
	}
	return nil
}

// resolved rewrites an alert message's blocks as resolved: a new header
// and banner, no buttons and no approval status. When this process never
// saw the message (a restart, no blocks), it is rebuilt from fallback.
func resolved(blocks []slack.Block, header, banner slack.Block, fallback []slack.Block) []slack.Block {
	if len(blocks) == 0 {
		return slices.Clone(fallback)
	}
	// The status line is dropped while it only says "awaiting approval";
	// after a decision it tells the repair's outcome and stays.
	awaiting := slackview.HasButtons(blocks)
	out := []slack.Block{header, banner}
	for _, b := range blocks {
		switch {
		case b.BlockType() == slack.MBTAction, b.ID() == slackview.BlockHeader, b.ID() == slackview.BlockAlert,
			b.ID() == slackview.BlockStatus && awaiting:
			continue
		}
		out = append(out, b)
	}
	return slackview.CapBlocks(out)
}

// RenderAlert builds the alert message Notify posts (slackview.Alert: the diagnosis
// with Approve / Reject when repairable, a banner line, and the Silence
// controls after the approval buttons) and the details for its thread.
func RenderAlert(ctx context.Context, b Bot, cluster string, a alert.Alert, channel string, now time.Time) (msg, details slackview.Message) {
	snap := a.Snapshot
	snap.Namespace = cmp.Or(snap.Namespace, a.Namespace)
	snap.Pod = cmp.Or(snap.Pod, a.Pod)
	snap.UID = cmp.Or(snap.UID, a.PodUID)
	snap.KafkaCluster = cmp.Or(snap.KafkaCluster, a.KafkaCluster)
	view := slackview.Diagnosis{ClusterName: cluster, Snapshot: snap, Findings: a.Findings, Requester: Requester, Now: now,
		Source: sourceOf(a)}
	if len(a.Findings) > 0 && slackview.Repairable(snap, a.Findings[0]) {
		view.Kafka = b.KafkaView(ctx, cluster, snap)
		view.Token, view.ExpiresAt = b.Offer(cluster, snap, a.Findings[0], Requester, channel, "", now)
	}
	av := slackview.Alert{
		Diagnosis: view, Reason: string(a.Reason), Detail: a.Detail, Rule: a.Rule, StartsAt: a.StartsAt,
		Repeat: a.Repeat, Changed: a.Changed, ReadError: a.ReadError,
	}
	av.Silence = silenceMenu(b, cluster, a.PodKey(), "pod", channel, now)
	msg = av.Message()
	if av.Silence == nil {
		if sil := silenceButtons(b, cluster, a.PodKey(), "pod", channel, now); sil != nil {
			msg.Blocks = slackview.CapBlocks(append(msg.Blocks, sil))
		}
	}
	return msg, av.Details()
}

// renderGroup renders a grouped alert with the cluster's Silence menu (or
// buttons when the menu cannot be built).
func renderGroup(b Bot, cluster string, g alert.Group, members *groupMembers, channel string, now time.Time) ([]slack.Block, string) {
	// The group names its Kubernetes cluster too.
	view := slackview.Group{Namespace: b.InCluster(cluster, g.Namespace), Cluster: g.KafkaCluster, Firing: max(g.Firing, len(g.Alerts)), Lines: members.sorted(), Now: now}
	if menu := silenceMenu(b, cluster, g.Key, "cluster", channel, now); menu != nil {
		view.Silence = slack.NewActionBlock(slackview.BlockSilence, menu)
	} else if sil := silenceButtons(b, cluster, g.Key, "cluster", channel, now); sil != nil {
		view.Silence = sil
	}
	msg := view.Message()
	return msg.Blocks, msg.Fallback
}

// maxActionID is Slack's limit on an action_id.
const maxActionID = 255

// silenceMenu returns the alert's Silence menu for key ("pod" or
// "cluster" says what it is), or nil when it cannot be built (signing
// failed, or the key is too long for an action_id: the caller then posts
// the Silence buttons).
func silenceMenu(b Bot, cluster, key, what, channel string, now time.Time) slack.BlockElement {
	longest := grant.SilenceChoices[len(grant.SilenceChoices)-1]
	token, err := b.SignSilence(cluster, key, longest.D, channel, now)
	if err != nil {
		b.Logger().Error("signing a silence menu failed; posting without it", "key", key, "error", err)
		return nil
	}
	if len(slackview.ActionSilenceMenu)+len(token) > maxActionID {
		return nil
	}
	var options []*slack.OptionBlockObject
	for _, c := range grant.SilenceChoices {
		options = append(options, slack.NewOptionBlockObject(c.Label, slackview.Plain(slackview.SilenceOption(what, c.Label)), nil))
	}
	return slack.NewOverflowBlockElement(slackview.ActionSilenceMenu+token, options...)
}

// silenceButtons returns the Silence buttons for key ("pod" or "cluster"
// says what it is, for the button text), or nil when signing fails.
func silenceButtons(b Bot, cluster, key, what, channel string, now time.Time) *slack.ActionBlock {
	var buttons []slack.BlockElement
	for _, c := range grant.SilenceChoices {
		token, err := b.SignSilence(cluster, key, c.D, channel, now)
		if err != nil {
			b.Logger().Error("signing a silence button failed; posting without it", "key", key, "error", err)
			return nil
		}
		buttons = append(buttons, slack.NewButtonBlockElement(slackview.ActionSilence+c.Label, token, slackview.Plain(slackview.SilenceButton(what, c.Label))))
	}
	return slack.NewActionBlock(slackview.BlockSilence, buttons...)
}

// groupMembers remembers the pods of a group message this process posted
// or updated, so that an update lists all of them, not only the new ones.
type groupMembers struct {
	mu    sync.Mutex
	lines map[string]string // pod key -> line
}

func newGroupMembers() *groupMembers { return &groupMembers{lines: map[string]string{}} }

func (g *groupMembers) add(alerts []alert.Alert) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range alerts {
		g.lines[a.PodKey()] = slackview.MemberLine(facts(a))
	}
}

// sorted returns the member lines in pod order.
func (g *groupMembers) sorted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	keys := make([]string, 0, len(g.lines))
	for k := range g.lines {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = g.lines[k]
	}
	return out
}

// facts is what slackview needs of an alert for lists and resolutions.
func facts(a alert.Alert) slackview.AlertFacts {
	return slackview.AlertFacts{
		Key: a.Key, Namespace: a.Namespace, Pod: a.Pod, Rule: a.Rule, Title: a.Title, Severity: a.Severity,
		Reason: string(a.Reason), Detail: a.Detail, StartsAt: a.StartsAt, ResolvedAt: a.ResolvedAt,
		Resolution: string(a.Resolution), Repeat: a.Repeat, Changed: a.Changed, Source: sourceOf(a),
	}
}

// sourceOf is who raised the alert, for its messages.
func sourceOf(a alert.Alert) slackview.Source {
	return slackview.Source{System: a.Source, Alert: a.SourceAlert}
}

func factsOf(alerts []alert.Alert) []slackview.AlertFacts {
	out := make([]slackview.AlertFacts, len(alerts))
	for i, a := range alerts {
		out[i] = facts(a)
	}
	return out
}
