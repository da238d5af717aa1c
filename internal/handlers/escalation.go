// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"cmp"
	"context"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/approval"
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

// Escalation button: action id and token domain (an escalation token is
// never an approval or silence token, and the other way round).
const (
	actionClearEscalation = "kafkabot.escalation.clear"
	blockEscalation       = "kafkabot.escalation"
	escalationDomain      = "kafkabot/escalation-clear/v1\x00"
	// escalationButtonTTL is how long the Clear button works; afterwards
	// `bot escalation clear` does.
	escalationButtonTTL = 7 * 24 * time.Hour
)

// escalationGrant is what a Clear escalation button may do: clear the
// record UID of KafkaCluster in the Kubernetes cluster Cluster, clicked in
// Channel, reporting in Thread.
type escalationGrant struct {
	V int `json:"v"`
	// Cluster is the Kubernetes cluster holding the record ("" from a bot
	// without cluster names: only a bot serving one cluster honours it).
	Cluster      string `json:"kc,omitempty"`
	KafkaCluster string `json:"cluster"`
	UID          string `json:"uid"`
	Channel      string `json:"ch"`
	Thread       string `json:"th"`
	IssuedAt     int64  `json:"iat"`
	ExpiresAt    int64  `json:"exp"`
}

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
	token, err := approval.SignPayload(b.opts.ApprovalSecret, escalationDomain, escalationGrant{
		V: 1, Cluster: b.grantCluster(m), KafkaCluster: ref.KafkaCluster, UID: ref.UID, Channel: channel, Thread: thread,
		IssuedAt: now.Unix(), ExpiresAt: now.Add(escalationButtonTTL).Unix(),
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
	var g escalationGrant
	err := approval.OpenPayload(b.opts.ApprovalSecret, escalationDomain, c.Token, &g)
	refuse := func(reason, text string) {
		b.log.Info("escalation decision", "audit", true, "event", "escalation.refused", "reason", reason,
			"user", c.User, "channel", c.Channel, "kube_cluster", g.Cluster, "cluster", g.KafkaCluster)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(text+slackview.RefuseEscalationNothing))
	}
	switch {
	case err != nil || g.V != 1 || g.KafkaCluster == "" || g.UID == "":
		g = escalationGrant{}
		refuse("invalid-token", slackview.RefuseEscalationInvalidToken)
		return
	case !b.clock().Before(time.Unix(g.ExpiresAt, 0)):
		refuse("expired", slackview.RefuseEscalationExpired(g.KafkaCluster))
		return
	case g.Channel != c.Channel:
		refuse("wrong-origin", slackview.RefuseEscalationWrongOrigin)
		return
	}
	m, ok := b.memberNamed(g.Cluster)
	switch {
	case !ok:
		refuse("unknown-cluster", slackview.RefuseEscalationUnknownCluster(g.Cluster))
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
