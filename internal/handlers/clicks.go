// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
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
			b.tell(ctx, channel, user, responseURL, busyText)
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
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, "🚫 "+r.tell)
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
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, "🚫 Your decision could not be recorded in the cluster, so nothing was done. "+
			"Nothing was changed. Try again in a moment.")
		return
	}
	if !out.Applied {
		b.audit("approval.refused", c, a, "reason", out.Reason, "approvers", strings.Join(out.Record.Approvers(), ","))
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, "🚫 "+alreadyDecided(out))
		return
	}
	parent := b.trackMessage(c.Channel, c.MessageTS, c.Blocks)
	rep := newThreadReporter(b.poster, parent, a.Pod, b.log, b.clock)
	if len(out.Dropped) > 0 {
		dropped := make([]string, len(out.Dropped))
		for i, v := range out.Dropped {
			dropped[i] = v.User
		}
		b.audit("approval.votes-dropped", c, a, "dropped", strings.Join(dropped, ","))
		rep.Say(fmt.Sprintf("⚠️ Earlier approval(s) by %s no longer count: %s not an approver %snow%s. They were removed from the decision record.",
			mentions(dropped), map[bool]string{true: "they are", false: "that person is"}[len(dropped) > 1], b.ofCluster(m),
			map[bool]string{true: "", false: ", or asked for this diagnosis and self-approval is forbidden"}[b.opts.AllowSelfApproval]))
	}
	// Everything below acts on the cluster the signed token names, and on
	// no other (m is that cluster).
	stamp := slackview.Date(now, slackview.DateTime)
	if !c.Approve {
		b.audit("approval.rejected", c, a)
		parent.decide(fmt.Sprintf("❌ Rejected by %s at %s", slackview.Mention(c.User), stamp), "Rejected — nothing was changed")
		rep.enqueueParentUpdate(true)
		rep.Say(fmt.Sprintf("❌ %s rejected the repair of %s. Nothing was changed.", slackview.Mention(c.User), slackview.InlineCode(a.Pod, 200)))
		rep.Wait(ctx)
		return
	}
	rec := out.Record
	if !out.Completed {
		n, of := len(rec.Approvals), rec.Required
		b.audit("approval.counted", c, a, "approvals", n, "required", of)
		status := fmt.Sprintf("⏳ %d of %d approvals: approved by %s; waiting for %s", n, of, mentions(rec.Approvers()), moreApprovers(of-n))
		rep.SetStatus(status)
		rep.Say(fmt.Sprintf("✅ %s approved (%d of %d). The repair starts when %s approve%s. Nothing was changed yet.",
			slackview.Mention(c.User), n, of, moreApprovers(of-n), map[bool]string{true: "s", false: ""}[of-n == 1]))
		rep.Wait(ctx)
		return
	}
	approvers := mentions(rec.Approvers())
	b.audit("approval.approved", c, a, "approvers", strings.Join(rec.Approvers(), ","))
	parent.decide(fmt.Sprintf("✅ Approved by %s at %s", approvers, stamp), "⏳ Repair approved, starting…")
	rep.enqueueParentUpdate(true)
	if m.Repairer == nil {
		rep.Say(fmt.Sprintf("✅ %s approved: %s\n\n"+
			"⚠️ Automated execution is not available in this build of the bot, so *nothing was changed*. "+
			"Follow the steps in the message above by hand, or run a build with the repair executor.",
			slackview.Mention(c.User), planText(a, b.podLabel(m, a.Namespace, a.Pod))))
		rep.SetStatus("🛑 Approved, but automated execution is not available in this build — nothing was changed")
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
	rep.Begin(fmt.Sprintf("✅ %s approved. Starting: %s", approvers, planText(a, b.podLabel(m, a.Namespace, a.Pod))), append(rec.Approvers(), a.Requester)...)
	// The repair outlives this click's worker slot and deadline: it runs
	// for as long as the Repairer's own timeouts allow, until the bot stops.
	b.wg.Go(func() {
		fin := &finishOnce{Reporter: rep}
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
		return a, nil, &refusal{"expired", "This approval has expired. Nothing was changed. Run the diagnosis again to get fresh buttons."}
	case errors.Is(err, approval.ErrNotYetValid):
		return a, nil, &refusal{"not-yet-valid", "This approval is not valid yet (clock skew?). Nothing was changed."}
	case err != nil:
		return approval.Approval{}, nil, &refusal{"invalid-token:" + tokenErrorName(err),
			"This button is not valid (it was not issued by this bot, or was altered). Nothing was changed."}
	}
	m, ok := b.memberNamed(a.ClusterName)
	if !ok {
		if a.ClusterName == "" {
			return a, nil, &refusal{"unknown-cluster",
				"This button does not say which Kubernetes cluster it is for (it predates multi-cluster support), and I serve several. Nothing was changed. Run the diagnosis again to get fresh buttons."}
		}
		return a, nil, &refusal{"unknown-cluster",
			"This button is for cluster " + slackview.InlineCode(a.ClusterName, 80) + ", which I do not serve. Nothing was changed."}
	}
	if err := a.CheckOrigin(c.Team, c.Channel); err != nil {
		return a, m, &refusal{"wrong-origin:" + tokenErrorName(err),
			"This approval belongs to another channel. Nothing was changed."}
	}
	if !slackview.HasButtons(c.Blocks) {
		return a, m, &refusal{"already-decided", "This repair was already decided. Nothing was changed."}
	}
	if c.Approve {
		if !m.approvalChannels[c.Channel] {
			return a, m, &refusal{"channel-not-allowed",
				"Repairs " + b.ofCluster(m) + "are approved only in " + approvalChannelList(m) + ", not here. Nothing was changed."}
		}
		if !m.isApprover(c.User) {
			return a, m, &refusal{"not-an-approver",
				"You are not allowed to approve repairs " + b.ofCluster(m) + "Approvers: " + m.approverList() + ". Nothing was changed."}
		}
		if !b.opts.AllowSelfApproval && c.User == a.Requester {
			return a, m, &refusal{"self-approval",
				"You asked for this diagnosis, so someone else has to approve its repair. Nothing was changed."}
		}
		return a, m, nil
	}
	if !m.isApprover(c.User) && c.User != a.Requester {
		return a, m, &refusal{"not-allowed-to-reject",
			"Only approvers or the person who asked for the diagnosis can reject it. Nothing was changed."}
	}
	return a, m, nil
}

// refuseUnsignedRecord refuses a click whose approval's decision record in
// the cluster does not carry this bot's MAC, loudly: in the thread, for
// everyone, and to the clicker. No vote is counted and nothing runs.
func (b *Bot) refuseUnsignedRecord(ctx context.Context, c click, a approval.Approval, err error) {
	b.audit("approval.refused", c, a, "reason", "decision-record-unsigned", "error", err.Error())
	b.log.Warn("a decision record does not verify: someone else wrote or changed it; nothing was decided",
		"approval_id", a.ID, "cluster", a.ClusterName, "namespace", a.Namespace, "error", err)
	text := fmt.Sprintf("🛑 The decision record of this approval (the kafkabot-decision Lease of approval %s) does not carry this bot's signature: "+
		"someone who can write Leases in namespace %s wrote or changed it (or it was written by a bot with another "+
		"APPROVAL_SECRET, or by a version that did not sign decision records). No vote was counted and *nothing was run*. "+
		"Check who wrote it (the API server's audit log), delete it, and run the diagnosis again for fresh buttons.",
		slackview.InlineCode(a.ID, 80), slackview.InlineCode(a.Namespace, 80))
	parent := b.trackMessage(c.Channel, c.MessageTS, c.Blocks)
	rep := newThreadReporter(b.poster, parent, a.Pod, b.log, b.clock)
	rep.Say(text)
	rep.Wait(ctx)
	b.tell(ctx, c.Channel, c.User, c.ResponseURL, text)
}

// ofCluster is "of cluster X " on a multi-cluster bot, else "".
func (b *Bot) ofCluster(m *member) string {
	if !b.multi() {
		return ""
	}
	return "of cluster " + slackview.InlineCode(m.Name, 80) + " "
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
		return fmt.Sprintf("This repair was already rejected by %s at %s. Nothing was changed.",
			slackview.Mention(r.Rejected.User), slackview.Date(r.Rejected.At, slackview.DateTime))
	case approval.ReasonDuplicate:
		return fmt.Sprintf("You already approved this repair (%d of %d approvals); %s must approve too. Nothing more was done.",
			len(r.Approvals), r.Required, moreApprovers(r.Required-len(r.Approvals)))
	}
	last := r.Approvals[len(r.Approvals)-1]
	return fmt.Sprintf("This repair was already approved by %s at %s. Nothing more was done.",
		mentions(r.Approvers()), slackview.Date(last.At, slackview.DateTime))
}

// moreApprovers says how many more approvers are needed, in words.
func moreApprovers(n int) string {
	if n == 1 {
		return "one more approver"
	}
	return fmt.Sprintf("%d more approvers", n)
}

// mentions is a list of users as mentions.
func mentions(users []string) string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = slackview.Mention(u)
	}
	return strings.Join(out, ", ")
}

// planText describes an approval's plan in mrkdwn words (not a command).
// pod names the pod (namespace/pod, with its cluster on a multi-cluster bot).
func planText(a approval.Approval, pod string) string {
	target := a.Target
	if target == "" {
		target = "-"
	}
	return fmt.Sprintf("%s of %s on pod %s (UID %s), for finding %s.",
		slackview.InlineCode(a.Action, 80), slackview.InlineCode(target, 200), slackview.InlineCode(pod, 200),
		slackview.InlineCode(orDash(a.PodUID), 80), slackview.InlineCode(a.Rule, 120))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// audit writes a structured audit line. The token itself is never logged.
func (b *Bot) audit(event string, c click, a approval.Approval, extra ...any) {
	attrs := []any{"audit", true, "event", event, "user", c.User, "channel", c.Channel, "team", c.Team,
		"message_ts", c.MessageTS, "approve", c.Approve}
	if a.ID != "" {
		attrs = append(attrs, "approval_id", a.ID, "cluster", a.ClusterName, "namespace", a.Namespace, "pod", a.Pod, "pod_uid", a.PodUID,
			"rule", a.Rule, "action", a.Action, "requester", a.Requester)
	}
	b.log.Info("approval decision", append(attrs, extra...)...)
}

// finishOnce makes sure the summary is posted exactly once, whether or not
// the Repairer calls Finish itself.
type finishOnce struct {
	recovery.Reporter
	done atomic.Bool
}

// Finish forwards the first call only.
func (f *finishOnce) Finish(ctx context.Context, s recovery.Summary) {
	if f.done.Swap(true) {
		return
	}
	f.Reporter.Finish(ctx, s)
}

// approvalChannelList is for messages: the channels where Approve counts
// for m's repairs.
func approvalChannelList(m *member) string {
	var out []string
	for c := range m.approvalChannels {
		out = append(out, "<#"+c+">")
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "no channel (set APPROVAL_CHANNELS or ALERT_CHANNEL)"
	}
	return strings.Join(out, ", ")
}
