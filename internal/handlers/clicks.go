package handlers

import (
	"context"
	"errors"
	"fmt"
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
		if a == nil || (a.ActionID != actionApprove && a.ActionID != actionReject) {
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
			MessageTS: ts, Approve: a.ActionID == actionApprove, Token: a.Value,
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
	a, r := b.authorize(c)
	if r != nil {
		b.audit("approval.refused", c, a, "reason", r.reason)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, "🚫 "+r.tell)
		return
	}
	now := b.clock()
	rec, first := b.decided.addIfAbsent(a.ID, decisionRecord{User: c.User, Approve: c.Approve, At: now})
	if !first {
		b.audit("approval.refused", c, a, "reason", "already-decided", "decided_by", rec.User)
		b.tell(ctx, c.Channel, c.User, c.ResponseURL, "🚫 "+alreadyDecided(rec))
		return
	}
	parent := b.trackMessage(c.Channel, c.MessageTS, c.Blocks)
	rep := newThreadReporter(b.poster, parent, a.Pod, b.log, b.clock)
	stamp := slackview.Date(now, slackview.DateTime)
	if !c.Approve {
		b.audit("approval.rejected", c, a)
		parent.decide(fmt.Sprintf("❌ Rejected by %s at %s", mention(c.User), stamp), "Rejected — nothing was changed")
		rep.enqueueParentUpdate(true)
		rep.Say(fmt.Sprintf("❌ %s rejected the repair of %s. Nothing was changed.", mention(c.User), inlineCode(a.Pod, 200)))
		rep.Wait(ctx)
		return
	}
	b.audit("approval.approved", c, a)
	parent.decide(fmt.Sprintf("✅ Approved by %s at %s", mention(c.User), stamp), "⏳ Repair approved, starting…")
	rep.enqueueParentUpdate(true)
	if b.opts.Repairer == nil {
		rep.Say(fmt.Sprintf("✅ %s approved: %s\n\n"+
			"⚠️ Automated execution is not available in this build of the bot, so *nothing was changed*. "+
			"Follow the steps in the message above by hand, or run a build with the repair executor.",
			mention(c.User), planText(a)))
		rep.SetStatus("🛑 Approved, but automated execution is not available in this build — nothing was changed")
		rep.Wait(ctx)
		return
	}
	req := recovery.Request{
		ApprovalID: a.ID, Namespace: a.Namespace, Pod: a.Pod, PodUID: a.PodUID,
		Rule: a.Rule, Action: a.Action, Target: a.Target,
		Requester: a.Requester, Approver: c.User,
		Channel: c.Channel, ThreadTS: c.MessageTS, DryRun: b.opts.DryRun,
	}
	rep.Begin(fmt.Sprintf("✅ %s approved. Starting: %s", mention(c.User), planText(a)), c.User, a.Requester)
	// The repair outlives this click's worker slot and deadline: it runs
	// for as long as the Repairer's own timeouts allow, until the bot stops.
	b.wg.Go(func() {
		fin := &finishOnce{Reporter: rep}
		sum := b.opts.Repairer.Repair(b.poster.base, req, fin)
		fin.Finish(b.poster.base, sum)
		metrics.Repairs.WithLabelValues(string(sum.Outcome)).Inc()
		b.log.Info("repair finished", "audit", true, "approval_id", a.ID, "namespace", a.Namespace, "pod", a.Pod,
			"approver", c.User, "outcome", string(sum.Outcome))
	})
}

// authorize verifies the token and checks that this user may make this
// decision from this channel.
func (b *Bot) authorize(c click) (approval.Approval, *refusal) {
	a, err := approval.Verify(b.opts.ApprovalSecret, c.Token, b.clock())
	switch {
	case errors.Is(err, approval.ErrExpired):
		return a, &refusal{"expired", "This approval has expired. Nothing was changed. Run the diagnosis again to get fresh buttons."}
	case errors.Is(err, approval.ErrNotYetValid):
		return a, &refusal{"not-yet-valid", "This approval is not valid yet (clock skew?). Nothing was changed."}
	case err != nil:
		return approval.Approval{}, &refusal{"invalid-token:" + tokenErrorName(err),
			"This button is not valid (it was not issued by this bot, or was altered). Nothing was changed."}
	}
	if err := a.CheckOrigin(c.Team, c.Channel); err != nil {
		return a, &refusal{"wrong-origin:" + tokenErrorName(err),
			"This approval belongs to another channel. Nothing was changed."}
	}
	if !hasButtons(c.Blocks) {
		return a, &refusal{"already-decided", "This repair was already decided. Nothing was changed."}
	}
	if c.Approve {
		if !b.isApprover(c.User) {
			return a, &refusal{"not-an-approver",
				"You are not allowed to approve repairs. Approvers: " + b.approverList() + ". Nothing was changed."}
		}
		if b.opts.ForbidSelfApproval && c.User == a.Requester {
			return a, &refusal{"self-approval",
				"You asked for this diagnosis, so someone else has to approve its repair. Nothing was changed."}
		}
		return a, nil
	}
	if !b.isApprover(c.User) && c.User != a.Requester {
		return a, &refusal{"not-allowed-to-reject",
			"Only approvers or the person who asked for the diagnosis can reject it. Nothing was changed."}
	}
	return a, nil
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

func alreadyDecided(r decisionRecord) string {
	verb := "rejected"
	if r.Approve {
		verb = "approved"
	}
	return fmt.Sprintf("This repair was already %s by %s at %s. Nothing more was done.",
		verb, mention(r.User), r.At.UTC().Format("15:04:05 MST"))
}

// planText describes an approval's plan in mrkdwn words (not a command).
func planText(a approval.Approval) string {
	target := a.Target
	if target == "" {
		target = "-"
	}
	return fmt.Sprintf("%s of %s on pod %s (UID %s), for finding %s.",
		inlineCode(a.Action, 80), inlineCode(target, 200), inlineCode(a.Namespace+"/"+a.Pod, 200),
		inlineCode(orDash(a.PodUID), 80), inlineCode(a.Rule, 120))
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
		attrs = append(attrs, "approval_id", a.ID, "namespace", a.Namespace, "pod", a.Pod, "pod_uid", a.PodUID,
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
