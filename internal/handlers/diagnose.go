// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/diagshare"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// runDiagnose answers /kafka diagnose: it resolves the name (one shared pod
// list), then runs the pod's diagnosis or joins the one running or
// recently finished for the same pod instance and crash.
func (b *Bot) runDiagnose(ctx context.Context, s slashRequest, cmd command.Command) {
	t, ok := b.resolveTarget(ctx, s, cmd)
	if !ok {
		return
	}
	if len(t.unchecked) > 0 {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.OnlyMatch(t.m.Name+"/"+t.status.Namespace+"/"+t.status.Pod, t.unchecked))
	}
	status, read := t.status, t.read
	d, role := b.shared.Join(diagshare.KeyOf(t.m.Name, status), s)
	switch role {
	case diagshare.Wait:
		b.log.Debug("joined a running diagnosis", "user", s.User, "namespace", status.Namespace, "pod", status.Pod)
		return // its leader queues this request's answer
	case diagshare.Shared:
		metrics.Commands.WithLabelValues(string(command.VerbDiagnose), "shared").Inc()
		b.answer(ctx, d, s)
		return
	}
	snap, err := read(ctx)
	var findings []diagnose.Finding
	if err == nil {
		if snap.Namespace == "" {
			snap.Namespace = status.Namespace
		}
		if snap.Pod == "" {
			snap.Pod = status.Pod
		}
		findings = b.opts.Diagnoser.Diagnose(snap)
		rule := "none"
		if len(findings) > 0 {
			rule = findings[0].Rule
		}
		metrics.Diagnoses.WithLabelValues(rule).Inc()
	} else {
		b.log.Error("reading pod failed", "cluster", t.m.Name, "namespace", status.Namespace, "pod", status.Pod, "error", err)
	}
	for _, w := range b.shared.Finish(d, snap, findings, err) {
		metrics.Commands.WithLabelValues(string(command.VerbDiagnose), "shared").Inc()
		b.queue.RunOwed(w.User, func() {
			ctx, cancel := context.WithTimeout(b.runCtx, commandTimeout)
			defer cancel()
			b.answer(ctx, d, w)
		})
	}
	b.answer(ctx, d, s)
}

// answer gives s the finished diagnosis d: the error, a new message in a
// channel where d is not posted yet, or a link to d's message there.
func (b *Bot) answer(ctx context.Context, d *sharedDiagnosis, s slashRequest) {
	if d.Err != nil {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.CannotRead(b.sharedPod(d), d.Err.Error()))
		return
	}
	p, mine := b.shared.Claim(d, s.Channel)
	if !mine {
		select {
		case <-p.Ready():
		case <-ctx.Done():
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout*5)
			defer cancel()
			b.tell(tctx, s.Channel, s.User, s.ResponseURL, slackview.GaveUpWaiting)
			return
		}
		if p.OK {
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, b.sharedText(d, p))
			b.log.Info("diagnosis shared", "audit", true, "user", s.User, "channel", s.Channel, "ts", p.TS,
				"namespace", d.Key.Namespace, "pod", d.Key.Pod, "asked_by", p.Requester)
			return
		}
		// That post failed: try this requester's own.
		b.postDiagnosis(ctx, d, s)
		return
	}
	ts, ok := b.postDiagnosis(ctx, d, s)
	b.shared.Posted(p, ts, ok, s.User)
}

// sharedText is the link shown to a requester whose channel already has
// the diagnosis.
func (b *Bot) sharedText(d *sharedDiagnosis, p *diagshare.Post) string {
	age := b.clock().Sub(d.Finished).Round(time.Second)
	link := b.workspaceURL + "archives/" + p.Channel + "/p" + strings.Replace(p.TS, ".", "", 1)
	return slackview.SharedDiagnosis(b.sharedPod(d), age, p.Requester, d.Key.Restarts, link)
}

// postDiagnosis renders d for s (their Approve token when repairable) and
// posts it in s's channel; it tells s what happened when it cannot. It
// returns the message ts and whether it was posted.
func (b *Bot) postDiagnosis(ctx context.Context, d *sharedDiagnosis, s slashRequest) (string, bool) {
	snap, findings := d.Snapshot, d.Findings
	m, _ := b.clusters.Exact(d.Key.Cluster)
	rule := "none"
	if len(findings) > 0 {
		rule = findings[0].Rule
	}
	now := b.clock()
	view := slackview.Diagnosis{ClusterName: m.Name, Snapshot: snap, Findings: findings, Requester: s.User, Now: now}
	if len(findings) > 0 && slackview.Repairable(snap, findings[0]) {
		view.Kafka = kafkaView(ctx, m, snap)
		view.Token, view.ExpiresAt = b.offer(m.Name, snap, findings[0], s.User, s.Channel, s.Team, now)
	}
	msg := view.Message()
	fallback := msg.Fallback
	ts, err := b.poster.Post(ctx, s.Channel, "", msg.Blocks, fallback)
	if err != nil {
		if slacktransport.CannotPostHere(err) {
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.NotInChannel(slacktransport.ErrorCode(err))+"\n"+fallback)
		} else {
			// Slack kept failing: the user must not be left with "Diagnosing…".
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.CannotPostDiagnosis(err.Error(), fallback))
		}
		return "", false
	}
	b.postDetails(ctx, s.Channel, ts, view.Details())
	b.log.Info("diagnosis posted", "audit", true, "user", s.User, "channel", s.Channel, "ts", ts,
		"cluster", m.Name, "namespace", snap.Namespace, "pod", snap.Pod, "rule", rule, "findings", len(findings), "approval_offered", view.Token != "")
	return ts, true
}

// sharedDiagnosis is one diagnosis shared by the /kafka diagnose requests
// for the same pod instance and crash.
type sharedDiagnosis = diagshare.Diagnosis[slashRequest]

// sharedPod names d's pod for messages.
func (b *Bot) sharedPod(d *sharedDiagnosis) string {
	m, _ := b.clusters.Exact(d.Key.Cluster)
	return b.podLabel(m, d.Key.Namespace, d.Key.Pod)
}

// podLabel names a pod for messages: namespace/pod, prefixed by its
// cluster on a multi-cluster bot.
func (b *Bot) podLabel(m *member, namespace, pod string) string {
	return b.inCluster(m, namespace+"/"+pod)
}
