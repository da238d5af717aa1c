// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/repairthread"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// click is one press of the bot's Approve or Reject button.
type click struct {
	Team, Channel, User, UserName string
	// MessageTS is the diagnosis message's ts (the thread to report in).
	MessageTS string
	Approve   bool
	// Token is the button's value: a signed approval.
	Token       string
	ResponseURL string
	// Blocks are the message's blocks as Slack stored them.
	Blocks []slack.Block
}

// clickFrom extracts the bot's button press from a block_actions payload;
// ok is false for anything else.
func clickFrom(cb slack.InteractionCallback) (c click, ok bool) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return click{}, false
	}
	for _, a := range cb.ActionCallback.BlockActions {
		if a == nil || (a.ActionID != slackview.ActionApprove && a.ActionID != slackview.ActionReject) {
			continue
		}
		channel := cb.Channel.ID
		if channel == "" {
			channel = cb.Container.ChannelID
		}
		ts := cb.Container.MessageTs
		if ts == "" {
			ts = cb.Message.Timestamp
		}
		team := cb.Team.ID
		if team == "" {
			team = cb.User.TeamID
		}
		return click{
			Team: team, Channel: channel, User: cb.User.ID, UserName: cb.User.Name,
			MessageTS: ts, Approve: a.ActionID == slackview.ActionApprove, Token: a.Value,
			ResponseURL: cb.ResponseURL, Blocks: cb.Message.Blocks.BlockSet,
		}, true
	}
	return click{}, false
}

func (b *Bot) onInteraction(ctx context.Context, req socketmode.Request, cb slack.InteractionCallback) {
	b.ack(ctx, req, nil) // block_actions acks carry no payload
	if !b.firstDelivery(req) {
		return
	}
	if sc, ok := silenceClickFrom(cb); ok {
		b.onSilenceClick(ctx, sc)
		return
	}
	if ec, ok := escalationClickFrom(cb); ok {
		b.startClick(ctx, "escalation click", ec.User, ec.Channel, ec.ResponseURL, func(ctx context.Context) { b.handleEscalationClick(ctx, ec) })
		return
	}
	c, ok := clickFrom(cb)
	if !ok {
		return
	}
	b.startClick(ctx, "click", c.User, c.Channel, c.ResponseURL, func(ctx context.Context) { b.handleClick(ctx, c) })
}

// startClick runs job for a click of user on the worker pool; when the pool
// is saturated it tells the user to try again instead. That reply is a Web
// API call, so it runs beside the pool and the event loop never waits;
// nothing was decided, so the buttons stay.
func (b *Bot) startClick(ctx context.Context, what, user, channel, responseURL string, job func(ctx context.Context)) {
	if !b.reserve() {
		b.log.Warn("worker pool saturated; refusing a "+what, "user", user, "workers", b.opts.Workers)
		b.wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, commandTimeout)
			defer cancel()
			b.tell(ctx, channel, user, responseURL, slackview.Busy)
		})
		return
	}
	b.start(ctx, job)
}

// refusal is a click that changes nothing: the clicker is told why, and an
// audit line records it.
type refusal struct {
	reason string // for the audit log (stable, machine-friendly)
	tell   string // for the clicker
}

func (b *Bot) handleClick(ctx context.Context, c click) {
	a, m, r := b.authorize(c)
	if r != nil {
		b.audit("approval.refused", c, a, "reason", r.reason)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(r.tell))
		return
	}
	now := b.clock()
	// The decision is recorded durably, and shared with every replica,
	// before anything is done: a Reject on one replica stops an Approve
	// that reaches another right after.
	// Only votes of people who may approve this cluster's repairs now,
	// and not the requester's when self-approval is forbidden, count
	// toward the approval, however they got into the record.
	counts := func(user string) bool { return m.isApprover(user) && (b.opts.AllowSelfApproval || user != a.Requester) }
	out, err := m.decisions.Decide(ctx, approval.Click{Approval: a, User: c.User, Approve: c.Approve, Required: b.opts.RequiredApprovals, At: now, Counts: counts})
	if errors.Is(err, approval.ErrUnsignedRecord) {
		b.refuseUnsignedRecord(ctx, c, a, err)
		return
	}
	if err != nil {
		b.audit("approval.refused", c, a, "reason", "decision-not-recorded", "error", err.Error())
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(slackview.RefuseNotRecorded))
		return
	}
	if !out.Applied {
		b.audit("approval.refused", c, a, "reason", out.Reason, "approvers", strings.Join(out.Record.Approvers(), ","))
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, slackview.Refused(alreadyDecided(out)))
		return
	}
	parent := b.messages.Track(c.Channel, c.MessageTS, c.Blocks)
	rep := repairthread.New(b.poster, parent.Channel, parent.TS, parent, a.Pod, b.log, b.clock)
	if len(out.Dropped) > 0 {
		dropped := make([]string, len(out.Dropped))
		for i, v := range out.Dropped {
			dropped[i] = v.User
		}
		b.audit("approval.votes-dropped", c, a, "dropped", strings.Join(dropped, ","))
		rep.Say(slackview.VotesDropped(dropped, b.ofCluster(m), b.opts.AllowSelfApproval))
	}
	// Everything below acts on the cluster the signed token names, and on
	// no other (m is that cluster).
	if !c.Approve {
		b.audit("approval.rejected", c, a)
		decide(parent, slackview.RejectedLine(c.User, now), slackview.RejectedStatus)
		rep.UpdateParent()
		rep.Say(slackview.RejectedReply(c.User, a.Pod))
		rep.Wait(ctx)
		return
	}
	rec := out.Record
	if !out.Completed {
		n, of := len(rec.Approvals), rec.Required
		b.audit("approval.counted", c, a, "approvals", n, "required", of)
		rep.SetStatus(slackview.CountedStatus(n, of, rec.Approvers()))
		rep.Say(slackview.CountedReply(c.User, n, of))
		rep.Wait(ctx)
		return
	}
	b.audit("approval.approved", c, a, "approvers", strings.Join(rec.Approvers(), ","))
	decide(parent, slackview.ApprovedLine(rec.Approvers(), now), slackview.ApprovedStatus)
	rep.UpdateParent()
	plan := slackview.Plan(a.Action, a.Target, b.podLabel(m, a.Namespace, a.Pod), a.PodUID, a.Rule)
	if m.Repairer == nil {
		rep.Say(slackview.NoExecutorReply(c.User, plan))
		rep.SetStatus(slackview.NoExecutorStatus)
		rep.Wait(ctx)
		return
	}
	req := recovery.Request{
		ApprovalID: a.ID, Namespace: a.Namespace, Pod: a.Pod, PodUID: a.PodUID,
		Rule: a.Rule, Action: a.Action, Target: a.Target,
		Requester: a.Requester, Approver: strings.Join(rec.Approvers(), ","),
		Channel: c.Channel, ThreadTS: c.MessageTS, DryRun: b.opts.DryRun,
		ExpiresAt: a.ExpiresAt,
	}
	rep.Begin(slackview.StartingHead(rec.Approvers(), plan), append(rec.Approvers(), a.Requester)...)
	// The repair outlives this click's worker slot and deadline: it runs
	// for as long as the Repairer's own timeouts allow, until the bot stops.
	b.wg.Go(func() {
		fin := &recovery.FinishOnce{Reporter: rep}
		sum := m.Repairer.Repair(b.runCtx, req, fin)
		fin.Finish(b.runCtx, sum)
		if sum.Outcome == recovery.OutcomeCrashAgain {
			b.offerEscalationClear(b.runCtx, rep, m, a)
		}
		metrics.Repairs.WithLabelValues(string(sum.Outcome)).Inc()
		b.log.Info("repair finished", "audit", true, "approval_id", a.ID, "cluster", m.Name, "namespace", a.Namespace, "pod", a.Pod,
			"approver", req.Approver, "outcome", string(sum.Outcome))
	})
}

// authorize verifies the token, finds the cluster it names (the only
// cluster the click may act on) and checks that this user may make this
// decision from this channel.
func (b *Bot) authorize(c click) (approval.Approval, *member, *refusal) {
	a, err := approval.Verify(b.opts.ApprovalSecret, c.Token, b.clock())
	switch {
	case errors.Is(err, approval.ErrExpired):
		return a, nil, &refusal{"expired", slackview.RefuseExpired}
	case errors.Is(err, approval.ErrNotYetValid):
		return a, nil, &refusal{"not-yet-valid", slackview.RefuseNotYetValid}
	case err != nil:
		return approval.Approval{}, nil, &refusal{"invalid-token:" + tokenErrorName(err), slackview.RefuseInvalidToken}
	}
	m, ok := b.clusters.Named(a.KubeCluster)
	if !ok {
		if a.KubeCluster == "" {
			return a, nil, &refusal{"unknown-cluster", slackview.RefuseNoCluster}
		}
		return a, nil, &refusal{"unknown-cluster", slackview.RefuseUnknownCluster(a.KubeCluster)}
	}
	if err := a.CheckOrigin(c.Team, c.Channel); err != nil {
		return a, m, &refusal{"wrong-origin:" + tokenErrorName(err), slackview.RefuseWrongOrigin}
	}
	if !slackview.HasButtons(c.Blocks) {
		return a, m, &refusal{"already-decided", slackview.RefuseAlreadyDecided}
	}
	if c.Approve {
		if !m.approvalChannels[c.Channel] {
			return a, m, &refusal{"channel-not-allowed", slackview.RefuseChannel(b.ofCluster(m), m.approvalChannelList())}
		}
		if !m.isApprover(c.User) {
			return a, m, &refusal{"not-an-approver", slackview.RefuseNotApprover(b.ofCluster(m), m.approverList())}
		}
		if !b.opts.AllowSelfApproval && c.User == a.Requester {
			return a, m, &refusal{"self-approval", slackview.RefuseSelfApproval}
		}
		return a, m, nil
	}
	if !m.isApprover(c.User) && c.User != a.Requester {
		return a, m, &refusal{"not-allowed-to-reject", slackview.RefuseReject}
	}
	return a, m, nil
}

// refuseUnsignedRecord refuses a click whose approval's decision record in
// the cluster does not carry this bot's MAC, loudly: in the thread, for
// everyone, and to the clicker. No vote is counted and nothing runs.
func (b *Bot) refuseUnsignedRecord(ctx context.Context, c click, a approval.Approval, err error) {
	b.audit("approval.refused", c, a, "reason", "decision-record-unsigned", "error", err.Error())
	b.log.Warn("a decision record does not verify: someone else wrote or changed it; nothing was decided",
		"approval_id", a.ID, "cluster", a.KubeCluster, "namespace", a.Namespace, "error", err)
	text := slackview.UnsignedRecord(a.ID, a.Namespace)
	parent := b.messages.Track(c.Channel, c.MessageTS, c.Blocks)
	rep := repairthread.New(b.poster, parent.Channel, parent.TS, parent, a.Pod, b.log, b.clock)
	rep.Say(text)
	rep.Wait(ctx)
	b.tell(ctx, c.Channel, c.User, c.ResponseURL, text)
}

// ofCluster is slackview.OfCluster's phrase for m on a multi-cluster bot,
// else "".
func (b *Bot) ofCluster(m *member) string {
	if !b.multi() {
		return ""
	}
	return slackview.OfCluster(m.Name)
}

func tokenErrorName(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{
		{approval.ErrMalformed, "malformed"}, {approval.ErrBadSignature, "bad-signature"},
		{approval.ErrTooLong, "too-long"}, {approval.ErrUnsupportedVersion, "version"},
		{approval.ErrWrongChannel, "channel"}, {approval.ErrWrongTeam, "team"},
	} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return "other"
}

// alreadyDecided tells the clicker why a click on a decided approval
// changed nothing.
func alreadyDecided(out approval.Outcome) string {
	r := out.Record
	switch out.Reason {
	case approval.ReasonAlreadyRejected:
		return slackview.AlreadyRejected(r.Rejected.User, r.Rejected.At)
	case approval.ReasonDuplicate:
		return slackview.AlreadyApprovedByYou(len(r.Approvals), r.Required)
	}
	return slackview.AlreadyApproved(r.Approvers(), r.Approvals[len(r.Approvals)-1].At)
}

// audit writes a structured audit line. The token itself is never logged.
func (b *Bot) audit(event string, c click, a approval.Approval, extra ...any) {
	attrs := []any{"audit", true, "event", event, "user", c.User, "channel", c.Channel, "team", c.Team,
		"message_ts", c.MessageTS, "approve", c.Approve}
	if a.ID != "" {
		attrs = append(attrs, "approval_id", a.ID, "cluster", a.KubeCluster, "namespace", a.Namespace, "pod", a.Pod, "pod_uid", a.PodUID,
			"rule", a.Rule, "action", a.Action, "requester", a.Requester)
	}
	b.log.Info("approval decision", append(attrs, extra...)...)
}

// approvalChannelList is for messages: the channels where Approve counts
// for m's repairs.
func (m *member) approvalChannelList() string {
	return slackview.ApprovalChannels(slices.Collect(maps.Keys(m.approvalChannels)))
}

// decide removes the message's buttons and records who decided, with a
// status line (slackview.Decided).
func decide(m *slacktransport.Message, decision, status string) {
	m.Rewrite(func(blocks []slack.Block) []slack.Block { return slackview.Decided(blocks, decision, status) })
}
