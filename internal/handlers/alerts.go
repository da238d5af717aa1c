// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Block and action IDs of alert messages.
const (
	blockAlert     = "kafkabot.alert"
	blockSilence   = "kafkabot.silence"
	blockSilenced  = "kafkabot.silenced"
	blockResolved  = "kafkabot.resolved"
	actionSilence  = "kafkabot.silence."
	sweepRequester = "sweep"
	groupCacheSize = 256
	alertMessages  = 1024
)

// errBotStopped is returned by the notifier once the bot's Run returned.
var errBotStopped = errors.New("the Slack bot has stopped")

// AlertNotifier posts the health sweep's alerts to one Slack channel
// through the bot's poster: the same Block Kit diagnosis as /kafka
// diagnose (with Approve / Reject when the finding is repairable, and
// Silence buttons), grouped alerts, resolutions and summaries. Posts about
// one message go through that message's ordered queue, shared with the
// repair reporter, so they never overtake each other.
//
// Create it with NewAlertNotifier and pass it in Options.Alerts; its
// methods wait until the bot's Run has started (or ctx ends) and fail once
// Run has returned. Methods may be called from one goroutine at a time.
//
// Each cluster's sweep posts through its own view, ForCluster(name): on a
// bot serving several, its alerts name that cluster in their header and
// carry it in their Approve and Silence tokens.
type AlertNotifier struct {
	*notifierCore
	// cluster is the Kubernetes cluster this view's alerts come from (its
	// ClusterOptions.Name; "" for an unnamed only cluster).
	cluster string
}

// notifierCore is what the views of one AlertNotifier share.
type notifierCore struct {
	channel string
	ready   chan struct{} // closed once the bot's poster exists
	groups  *slacktransport.LRU[string, *groupMembers]

	mu      sync.RWMutex // guards bot, poster and stopped
	bot     *Bot
	poster  *slacktransport.Poster
	stopped bool
}

// NewAlertNotifier returns a notifier posting to channel (a channel ID,
// ALERT_CHANNEL). It posts nothing until the bot it is given to runs.
func NewAlertNotifier(channel string) *AlertNotifier {
	return &AlertNotifier{notifierCore: &notifierCore{channel: channel, ready: make(chan struct{}), groups: slacktransport.NewLRU[string, *groupMembers](groupCacheSize)}}
}

// ForCluster returns the view of n that posts the alerts of the Kubernetes
// cluster name (Options.Clusters' Name). Give n itself to Options.Alerts.
func (n *AlertNotifier) ForCluster(name string) *AlertNotifier {
	return &AlertNotifier{notifierCore: n.notifierCore, cluster: name}
}

// member returns the cluster of this view's alerts.
func (n *AlertNotifier) member(b *Bot) (*member, error) {
	m, ok := b.memberNamed(n.cluster)
	if !ok {
		return nil, fmt.Errorf("handlers: alerts of cluster %q, which the bot does not serve", n.cluster)
	}
	return m, nil
}

// Channel is the channel the notifier posts to.
func (n *AlertNotifier) Channel() string { return n.channel }

// bind gives the notifier to its bot (from New).
func (n *AlertNotifier) bind(b *Bot) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.bot != nil {
		return errors.New("handlers: the AlertNotifier already belongs to another Bot")
	}
	if n.channel == "" {
		return errors.New("handlers: the AlertNotifier has no channel")
	}
	n.bot = b
	return nil
}

// start connects the notifier to the running bot's poster (from Run).
func (n *AlertNotifier) start(p *slacktransport.Poster) {
	n.mu.Lock()
	n.poster = p
	n.mu.Unlock()
	close(n.ready)
}

// stop refuses further posts; queued ones finish with the bot (from Run,
// before it waits for its goroutines).
func (n *AlertNotifier) stop() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
}

// running waits for the bot to run and returns it and its poster.
func (n *AlertNotifier) running(ctx context.Context) (*Bot, *slacktransport.Poster, error) {
	select {
	case <-n.ready:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("waiting for the Slack bot to start: %w", ctx.Err())
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.stopped {
		return nil, nil, errBotStopped
	}
	return n.bot, n.poster, nil
}

// inOrder runs job in the ordered queue of message ref and waits for its
// result (or ctx). The job runs with the bot's lifetime context, so a
// queued update is not lost when the caller stops waiting.
func (n *AlertNotifier) inOrder(ctx context.Context, ref alert.MessageRef, job func(ctx context.Context) error) error {
	n.mu.RLock()
	if n.stopped {
		n.mu.RUnlock()
		return errBotStopped
	}
	result := make(chan error, 1)
	n.poster.Enqueue(messageKey(ref.Channel, ref.TS), func(ctx context.Context) { result <- job(ctx) })
	n.mu.RUnlock()
	select {
	case err := <-result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func messageKey(channel, ts string) string { return channel + "/" + ts }

// Notify posts one alert and returns where it was posted.
func (n *AlertNotifier) Notify(ctx context.Context, a alert.Alert) (alert.MessageRef, error) {
	b, p, err := n.running(ctx)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about %s: %w", a.Key, err)
	}
	m, err := n.member(b)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about %s: %w", a.Key, err)
	}
	channel := cmp.Or(a.Channel, n.channel)
	msg, details := b.renderAlert(ctx, m, a, channel, b.clock())
	blocks := msg.Blocks
	ts, err := p.Post(ctx, channel, "", blocks, msg.Fallback)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about %s: %w", a.Key, err)
	}
	b.postDetails(ctx, channel, ts, details)
	b.messages.AddIfAbsent(messageKey(channel, ts), newParentMessage(channel, ts, blocks))
	b.log.Info("alert posted", "audit", true, "channel", channel, "ts", ts, "cluster", m.Name, "alert", a.Key,
		"reason", a.Reason, "repeat", a.Repeat, "changed", a.Changed, "approval_offered", slackview.HasButtons(blocks))
	return alert.MessageRef{Channel: channel, TS: ts}, nil
}

// NotifyGroup posts one alert for several pods of a cluster, or, when g.Ref
// is set, lists the new members in its thread and updates it.
func (n *AlertNotifier) NotifyGroup(ctx context.Context, g alert.Group) (alert.MessageRef, error) {
	b, p, err := n.running(ctx)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about group %s: %w", g.Key, err)
	}
	m, err := n.member(b)
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("alerting about group %s: %w", g.Key, err)
	}
	now := b.clock()
	if g.Ref.IsZero() {
		members := newGroupMembers()
		members.add(g.Alerts)
		blocks, fallback := b.renderGroup(m, g, members, n.channel, now)
		ts, err := p.Post(ctx, n.channel, "", blocks, fallback)
		if err != nil {
			return alert.MessageRef{}, fmt.Errorf("alerting about group %s: %w", g.Key, err)
		}
		n.groups.AddIfAbsent(messageKey(n.channel, ts), members)
		b.messages.AddIfAbsent(messageKey(n.channel, ts), newParentMessage(n.channel, ts, blocks))
		b.log.Info("group alert posted", "audit", true, "channel", n.channel, "ts", ts, "group", g.Key, "pods", len(g.Alerts))
		return alert.MessageRef{Channel: n.channel, TS: ts}, nil
	}
	members, _ := n.groups.AddIfAbsent(messageKey(g.Ref.Channel, g.Ref.TS), newGroupMembers())
	members.add(g.Alerts)
	blocks, fallback := b.renderGroup(m, g, members, g.Ref.Channel, now)
	err = n.inOrder(ctx, g.Ref, func(qctx context.Context) error {
		if _, err := p.Post(qctx, g.Ref.Channel, g.Ref.TS, nil, slackview.GroupThreadText(factsOf(g.Alerts), g.Firing)); err != nil {
			return err
		}
		return p.Update(qctx, g.Ref.Channel, g.Ref.TS, blocks, fallback)
	})
	if err != nil {
		return alert.MessageRef{}, fmt.Errorf("adding to group alert %s: %w", g.Key, err)
	}
	parent, _ := b.messages.AddIfAbsent(messageKey(g.Ref.Channel, g.Ref.TS), newParentMessage(g.Ref.Channel, g.Ref.TS, nil))
	parent.replace(blocks)
	return g.Ref, nil
}

// Resolve marks the alert posted at ref as resolved: the message loses its
// buttons and says so, and a line is posted in its thread. For a member of
// a group (a.Group set) ref is the group's message and only the thread
// line is posted.
func (n *AlertNotifier) Resolve(ctx context.Context, ref alert.MessageRef, a alert.Alert) error {
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
	m, _ := n.member(b)
	ns := b.inCluster(m, a.Namespace) // the resolved header names the cluster too
	parent, _ := b.messages.AddIfAbsent(messageKey(ref.Channel, ref.TS), newParentMessage(ref.Channel, ref.TS, nil))
	parent.resolve(slackview.ResolvedHeader(slackview.PodLabel(ns, a.Pod), a.Title), slackview.ResolvedBanner(facts(a)), slackview.ResolvedAlert(facts(a)))
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
	b.log.Info("alert resolved", "audit", true, "channel", ref.Channel, "ts", ref.TS, "alert", a.Key, "resolution", a.Resolution)
	return nil
}

// ResolveGroup marks the group message at ref as resolved.
func (n *AlertNotifier) ResolveGroup(ctx context.Context, ref alert.MessageRef, g alert.Group) error {
	b, p, err := n.running(ctx)
	if err != nil {
		return fmt.Errorf("resolving group %s: %w", g.Key, err)
	}
	members, _ := n.groups.AddIfAbsent(messageKey(ref.Channel, ref.TS), newGroupMembers())
	members.add(g.Alerts)
	m, _ := n.member(b)
	rg := slackview.ResolvedGroup(b.inCluster(m, g.Namespace), g.KafkaCluster, members.sorted(), b.clock())
	blocks, fallback := rg.Blocks, rg.Fallback
	err = n.inOrder(ctx, ref, func(qctx context.Context) error {
		if err := p.Update(qctx, ref.Channel, ref.TS, blocks, fallback); err != nil {
			return err
		}
		_, err := p.Post(qctx, ref.Channel, ref.TS, nil, "✅ Every pod of this group is healthy again (or gone): the group alert is resolved.")
		return err
	})
	if err != nil {
		return fmt.Errorf("resolving group %s: %w", g.Key, err)
	}
	parent, _ := b.messages.AddIfAbsent(messageKey(ref.Channel, ref.TS), newParentMessage(ref.Channel, ref.TS, nil))
	parent.replace(blocks)
	b.log.Info("group alert resolved", "audit", true, "channel", ref.Channel, "ts", ref.TS, "group", g.Key)
	return nil
}

// Summary posts the periodic summary of a scheduled sweep.
func (n *AlertNotifier) Summary(ctx context.Context, s alert.Summary) error {
	_, p, err := n.running(ctx)
	if err != nil {
		return fmt.Errorf("posting the sweep summary: %w", err)
	}
	sm := slackview.SweepSummary{At: s.At, KafkaPods: s.KafkaPods, Firing: factsOf(s.Firing), Silenced: s.Silenced}.Message()
	blocks, fallback := sm.Blocks, sm.Fallback
	if _, err := p.Post(ctx, n.channel, "", blocks, fallback); err != nil {
		return fmt.Errorf("posting the sweep summary: %w", err)
	}
	return nil
}

// trackMessage returns the bot's live copy of message (channel, ts), set to
// blocks (what Slack stored, which the click carried). Alert resolutions
// and repair progress then rewrite the same copy, so neither undoes the
// other.
func (b *Bot) trackMessage(channel, ts string, blocks []slack.Block) *parentMessage {
	m, added := b.messages.AddIfAbsent(messageKey(channel, ts), newParentMessage(channel, ts, blocks))
	if !added {
		m.replace(blocks)
	}
	return m
}

// replace sets the message's blocks.
func (m *parentMessage) replace(blocks []slack.Block) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocks = slices.Clone(blocks)
	m.version++
}

// resolve rewrites an alert message as resolved: a new header and banner,
// no buttons and no approval status. When this process never saw the
// message (a restart), it is rebuilt from fallback.
func (m *parentMessage) resolve(header slack.Block, banner slack.Block, fallback []slack.Block) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.blocks) == 0 {
		m.blocks = slices.Clone(fallback)
		m.version++
		return
	}
	// The status line is dropped while it only says "awaiting approval";
	// after a decision it tells the repair's outcome and stays.
	awaiting := slackview.HasButtons(m.blocks)
	out := []slack.Block{header, banner}
	for _, b := range m.blocks {
		switch {
		case b.BlockType() == slack.MBTAction, b.ID() == slackview.BlockHeader, b.ID() == blockAlert,
			b.ID() == slackview.BlockStatus && awaiting:
			continue
		}
		out = append(out, b)
	}
	m.blocks = slackview.CapBlocks(out)
	m.version++
}

// renderAlert builds the alert message (slackview.Alert: the diagnosis
// with Approve / Reject when repairable, a banner line, and the Silence
// buttons after the approval buttons) and the details for its thread.
func (b *Bot) renderAlert(ctx context.Context, m *member, a alert.Alert, channel string, now time.Time) (msg, details slackview.Message) {
	snap := a.Snapshot
	snap.Namespace = cmp.Or(snap.Namespace, a.Namespace)
	snap.Pod = cmp.Or(snap.Pod, a.Pod)
	snap.UID = cmp.Or(snap.UID, a.PodUID)
	snap.Cluster = cmp.Or(snap.Cluster, a.KafkaCluster)
	view := slackview.Diagnosis{ClusterName: m.label(), Snapshot: snap, Findings: a.Findings, Requester: sweepRequester, Now: now,
		Source: sourceOf(a)}
	if len(a.Findings) > 0 && slackview.Repairable(snap, a.Findings[0]) {
		if m.KafkaView != nil {
			view.Kafka = m.KafkaView(ctx, snap)
		}
		view.ExpiresAt = now.Add(b.opts.ApprovalTTL)
		f := a.Findings[0]
		token, err := approval.Sign(b.opts.ApprovalSecret, approval.Approval{
			ID: approval.NewID(), ClusterName: m.Name, Namespace: snap.Namespace, Pod: snap.Pod, PodUID: snap.UID,
			Rule: f.Rule, Action: f.Remedy.Action, Target: f.Remedy.Target,
			Requester: sweepRequester, Channel: channel, IssuedAt: now, ExpiresAt: view.ExpiresAt,
		})
		if err != nil {
			b.log.Error("signing an approval failed; posting the alert without repair buttons", "pod", snap.Pod, "error", err)
		} else {
			view.Token = token
		}
	}
	av := slackview.Alert{
		Diagnosis: view, Reason: string(a.Reason), Detail: a.Detail, Rule: a.Rule, StartsAt: a.StartsAt,
		Repeat: a.Repeat, Changed: a.Changed, ReadError: a.ReadError,
	}
	av.Silence = b.silenceControl(m, a.PodKey(), "pod", channel, now)
	msg = av.Message()
	if av.Silence == nil {
		if sil := b.silenceActions(m, a.PodKey(), "pod", channel, now); sil != nil {
			msg.Blocks = slackview.CapBlocks(append(msg.Blocks, sil))
		}
	}
	return msg, av.Details()
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

// renderGroup renders a grouped alert with the cluster's Silence menu (or
// buttons when the menu cannot be built).
func (b *Bot) renderGroup(m *member, g alert.Group, members *groupMembers, channel string, now time.Time) ([]slack.Block, string) {
	// The group names its Kubernetes cluster too.
	view := slackview.Group{Namespace: b.inCluster(m, g.Namespace), Cluster: g.KafkaCluster, Firing: max(g.Firing, len(g.Alerts)), Lines: members.sorted(), Now: now}
	if menu := b.silenceControl(m, g.Key, "cluster", channel, now); menu != nil {
		view.Silence = slack.NewActionBlock(blockSilence, menu)
	} else if sil := b.silenceActions(m, g.Key, "cluster", channel, now); sil != nil {
		view.Silence = sil
	}
	msg := view.Message()
	return msg.Blocks, msg.Fallback
}
