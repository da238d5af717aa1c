// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"log/slog"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// messageCacheSize bounds the live copies of messages.
const messageCacheSize = 1024

// alertSide is what the alert notifier uses of the bot
// (alertnotify.Bot): the clusters' names, the signed buttons, the thread
// details and the live copies of messages.
type alertSide struct{ b *Bot }

var _ alertnotify.Bot = alertSide{}

// Cluster returns the name of the served cluster name means.
func (s alertSide) Cluster(name string) (string, bool) {
	m, ok := s.b.clusters.Named(name)
	if !ok {
		return "", false
	}
	return m.Name, true
}

// InCluster prefixes path with cluster on a bot serving several.
func (s alertSide) InCluster(cluster, path string) string {
	m, _ := s.b.clusters.Named(cluster)
	return s.b.inCluster(m, path)
}

// KafkaView reads Kafka's own view for the alert's card.
func (s alertSide) KafkaView(ctx context.Context, cluster string, snap diagnose.Snapshot) slackview.KafkaView {
	m, _ := s.b.clusters.Named(cluster)
	return kafkaView(ctx, m, snap)
}

// Offer signs the Approve / Reject buttons of the alert's finding.
func (s alertSide) Offer(cluster string, snap diagnose.Snapshot, f diagnose.Finding, requester, channel, team string, now time.Time) (string, time.Time) {
	return s.b.offer(cluster, snap, f, requester, channel, team, now)
}

// SignSilence signs a Silence control's grant of key for d.
func (s alertSide) SignSilence(cluster, key string, d time.Duration, channel string, now time.Time) (string, error) {
	m, _ := s.b.clusters.Named(cluster)
	return grant.SignSilence(s.b.opts.ApprovalSecret, grant.Silence{
		KubeCluster: s.b.grantCluster(m), Key: key, For: int64(d / time.Second), Channel: channel,
		IssuedAt: now.Unix(), ExpiresAt: now.Add(grant.SilenceButtonTTL).Unix(),
	})
}

// PostDetails posts the details as the first reply in the thread.
func (s alertSide) PostDetails(ctx context.Context, channel, ts string, details slackview.Message) {
	s.b.postDetails(ctx, channel, ts, details)
}

// Messages are the bot's live copies of messages.
func (s alertSide) Messages() *slacktransport.Messages { return s.b.messages }

// Logger is the bot's logger.
func (s alertSide) Logger() *slog.Logger { return s.b.log }

// Now is the bot's clock.
func (s alertSide) Now() time.Time { return s.b.clock() }

// kafkaView reads Kafka's own view of snap's cluster for a card of m that
// offers Approve; the zero view when m has no KafkaView.
func kafkaView(ctx context.Context, m *member, snap diagnose.Snapshot) slackview.KafkaView {
	if m == nil || m.KafkaView == nil {
		return slackview.KafkaView{}
	}
	return m.KafkaView(ctx, snap)
}

// offer signs the Approve / Reject buttons of finding f of snap, asked by
// requester in channel, and returns the token and when it expires; on a
// signing failure it returns "" (the diagnosis is still worth showing;
// only the buttons are lost).
func (b *Bot) offer(cluster string, snap diagnose.Snapshot, f diagnose.Finding, requester, channel, team string, now time.Time) (string, time.Time) {
	expires := now.Add(b.opts.ApprovalTTL)
	token, err := approval.Sign(b.opts.ApprovalSecret, approval.Approval{
		ID: approval.NewID(), KubeCluster: cluster, Namespace: snap.Namespace, Pod: snap.Pod, PodUID: snap.UID,
		Rule: f.Rule, Action: f.Remedy.Action, Target: f.Remedy.Target,
		Requester: requester, Channel: channel, Team: team, IssuedAt: now, ExpiresAt: expires,
	})
	if err != nil {
		b.log.Error("signing an approval failed; posting without repair buttons", "pod", snap.Pod, "error", err)
		return "", expires
	}
	return token, expires
}
