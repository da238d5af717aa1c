// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"cmp"
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/repairthread"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Escalations reads and clears the per-Kafka-cluster "escalated: no
// automated repairs" records a repair leaves when its broker crashes again
// (internal/escalation adapts *kube.Client). Kafka clusters are named
// "namespace/cluster" ("namespace/*" for a namespace's pods without a
// cluster label).
type Escalations interface {
	// EscalationFor returns the escalation record that holds the Kafka
	// cluster of the approval's repair (of pod in namespace), if there is one.
	EscalationFor(ctx context.Context, namespace, pod, approvalID string) (EscalationRef, bool, error)
	// ClearEscalation removes the Kafka cluster's record if it is still
	// the record uid names; it fails (changing nothing) otherwise.
	ClearEscalation(ctx context.Context, kafkaCluster, uid string) (EscalationRef, error)
}

// EscalationRef names one escalation record.
type EscalationRef struct {
	// KafkaCluster is the escalated Kafka cluster ("namespace/cluster").
	KafkaCluster string
	UID          string
	Pod          string
}

// Escalation button: action and block ids.
const (
	actionClearEscalation = "kafkabot.escalation.clear"
	blockEscalation       = "kafkabot.escalation"
)

// offerEscalationClear posts, in the thread of a repair whose broker
// crashed again, the escalation and a button approvers use to clear it.
func (b *Bot) offerEscalationClear(ctx context.Context, rep *repairthread.Reporter, m *member, a approval.Approval) {
	if m.Escalations == nil {
		return
	}
	ref, found, err := m.Escalations.EscalationFor(ctx, a.Namespace, a.Pod, a.ID)
	if err != nil || !found {
		if err != nil {
			b.log.Error("reading the escalation record failed", "namespace", a.Namespace, "pod", a.Pod, "error", err)
		}
		return
	}
	now := b.clock()
	channel, thread := rep.Thread()
	token, err := grant.SignEscalation(b.opts.ApprovalSecret, grant.Escalation{
		KubeCluster: b.grantCluster(m), KafkaCluster: ref.KafkaCluster, UID: ref.UID, Channel: channel, Thread: thread,
		IssuedAt: now.Unix(), ExpiresAt: now.Add(grant.EscalationButtonTTL).Unix(),
	})
	if err != nil {
		b.log.Error("signing the clear-escalation button failed", "cluster", ref.KafkaCluster, "error", err)
		return
	}
	text := slackview.Escalated(b.qualified(m, ref.KafkaCluster), ref.KafkaCluster)
	button := slack.NewButtonBlockElement(actionClearEscalation, token, slackview.Plain(slackview.ClearEscalationButton))
	button.Style = slack.StyleDanger
	button.Confirm = slackview.ClearEscalationConfirm(ref.KafkaCluster)
	blocks := []slack.Block{
		slack.NewSectionBlock(slackview.Mrkdwn(text), nil, nil),
		slack.NewActionBlock(blockEscalation, button),
	}
	rep.Enqueue(func(qctx context.Context) {
		if _, err := b.poster.Post(qctx, channel, thread, blocks, text); err != nil {
			b.log.Error("posting the escalation in the thread failed", "cluster", ref.KafkaCluster, "error", err)
		}
	})
	rep.Wait(ctx)
}

// escalationClick is one press of the Clear escalation button.
type escalationClick struct {
	Channel, User, MessageTS, Token, ResponseURL string
}

func escalationClickFrom(cb slack.InteractionCallback) (escalationClick, bool) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return escalationClick{}, false
	}
	for _, a := range cb.ActionCallback.BlockActions {
		if a == nil || a.ActionID != actionClearEscalation {
			continue
		}
		return escalationClick{
			Channel: cmp.Or(cb.Channel.ID, cb.Container.ChannelID), User: cb.User.ID,
			MessageTS: cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp), Token: a.Value, ResponseURL: cb.ResponseURL,
		}, true
	}
	return escalationClick{}, false
}

// handleEscalationClick checks the button and the clicker, clears the
// record it names, and says so in the repair's thread. Clearing lets the
// bot touch the cluster again, so it takes an approver.
func (b *Bot) handleEscalationClick(ctx context.Context, c escalationClick) {
	g, err := grant.VerifyEscalation(b.opts.ApprovalSecret, c.Token, b.clock())
	refuse := func(reason, text string) {
		b.log.Info("escalation decision", "audit", true, "event", "escalation.refused", "reason", reason,
			"user", c.User, "channel", c.Channel, "kube_cluster", g.KubeCluster, "cluster", g.KafkaCluster)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(text+slackview.RefuseEscalationNothing))
	}
	switch {
	case errors.Is(err, grant.ErrExpired):
		refuse("expired", slackview.RefuseEscalationExpired(g.KafkaCluster))
		return
	case err != nil:
		refuse("invalid-token", slackview.RefuseEscalationInvalidToken)
		return
	case g.Channel != c.Channel:
		refuse("wrong-origin", slackview.RefuseEscalationWrongOrigin)
		return
	}
	m, ok := b.clusters.Named(g.KubeCluster)
	switch {
	case !ok:
		refuse("unknown-cluster", slackview.RefuseEscalationUnknownCluster(g.KubeCluster))
		return
	case !m.isApprover(c.User):
		refuse("not-an-approver", slackview.RefuseEscalationNotApprover(b.ofCluster(m), m.approverList()))
		return
	case m.Escalations == nil:
		refuse("no-store", slackview.RefuseEscalationNoStore)
		return
	}
	ref, err := m.Escalations.ClearEscalation(ctx, g.KafkaCluster, g.UID)
	if err != nil {
		b.log.Warn("clearing an escalation failed", "cluster", g.KafkaCluster, "user", c.User, "error", err)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.ClearEscalationFailed(g.KafkaCluster, err.Error()))
		return
	}
	b.log.Info("escalation decision", "audit", true, "event", "escalation.cleared", "user", c.User, "channel", c.Channel,
		"kube_cluster", m.Name, "cluster", ref.KafkaCluster, "escalated_pod", ref.Pod)
	text := slackview.EscalationCleared(c.User, b.qualified(m, ref.KafkaCluster))
	done := b.poster.Enqueue(slacktransport.MessageKey(c.Channel, g.Thread), func(qctx context.Context) {
		if _, err := b.poster.Post(qctx, c.Channel, g.Thread, nil, text); err != nil {
			b.log.Error("posting the cleared escalation failed", "cluster", ref.KafkaCluster, "error", err)
		}
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// qualified prefixes name with m's cluster on a multi-cluster bot
// ("prod-eu: kafka/foobar"), so a message never leaves the cluster unsaid.
func (b *Bot) qualified(m *member, name string) string {
	if !b.multi() {
		return name
	}
	return m.Name + ": " + name
}
