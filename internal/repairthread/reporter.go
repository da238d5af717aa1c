// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package repairthread reports a repair in Slack: the checklist and the
// outcome in the thread of the message it was approved from, and that
// message's status line (recovery.Reporter).
package repairthread

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Reporter is the Slack recovery.Reporter. A repair makes at most
// two posts in the diagnosis message's thread: one checklist reply, edited
// in place as the steps advance (slackview.Progress), and one outcome
// reply (slackview.Outcome), which is also sent to the channel when the
// repair failed or a gate refused it. The message's status line follows
// each step. Everything goes through the thread's ordered queue, so a
// rate-limited call is retried before the next one and the thread never
// reads out of order; edits overtaken by a newer one are skipped (chat.update
// is rate limited more tightly than posts). Report does not wait for Slack.
type Reporter struct {
	poster *slacktransport.Poster
	// channel and ts are the message whose thread the repair reports in.
	channel, ts string
	parent      Message
	pod         string
	log         *slog.Logger
	clock       func() time.Time
	// threadOnly leaves the parent message alone (a resumed repair: the
	// restarted bot no longer holds the message's blocks).
	threadOnly bool

	mu sync.Mutex
	// last is closed when the most recently enqueued job has run.
	last <-chan struct{}
	// The checklist: its head line, steps, when each running step
	// started, and a version bumped on every change.
	head      string
	people    []string
	begun     time.Time
	steps     []slackview.Step
	startedAt map[int]time.Time
	version   int
	done      bool
	notes     []slackview.Note
	// progressTS is the checklist reply's ts once posted; only queue jobs
	// (which run one at a time per thread) touch it.
	progressTS string
}

var (
	_ recovery.Reporter     = (*Reporter)(nil)
	_ recovery.PlanReporter = (*Reporter)(nil)
)

// Message is the live copy of the message a repair reports under (the
// diagnosis or alert it was approved from): the reporter rewrites its
// status line and sends the result with chat.update.
type Message interface {
	// SetStatus replaces the message's status line.
	SetStatus(status string)
	// Snapshot returns the message's current blocks and their version,
	// which every change bumps.
	Snapshot() (blocks []slack.Block, version int)
}

// New returns the Reporter of the repair of pod approved from parent, the
// message at (channel, ts): it reports in that message's thread through p.
// clock nil is time.Now.
func New(p *slacktransport.Poster, channel, ts string, parent Message, pod string, log *slog.Logger, clock func() time.Time) *Reporter {
	if clock == nil {
		clock = time.Now
	}
	return &Reporter{poster: p, channel: channel, ts: ts, parent: parent, pod: pod, log: log, clock: clock, startedAt: map[int]time.Time{}}
}

// NewResumed returns the Reporter of a repair that a restarted bot resumes
// (recovery.Repairer.Resume) in the thread of (channel, ts): it does not
// rewrite the parent message, whose blocks this process never saw, and its
// checklist starts with head.
func NewResumed(p *slacktransport.Poster, channel, ts, head string, log *slog.Logger, clock func() time.Time) *Reporter {
	r := New(p, channel, ts, nil, "resumed repair", log, clock)
	r.threadOnly = true
	r.head = head
	return r
}

func (r *Reporter) key() string { return r.channel + "/" + r.ts }

// Thread returns the message (channel, ts) whose thread the repair reports in.
func (r *Reporter) Thread() (channel, ts string) { return r.channel, r.ts }

// Enqueue runs job in the thread's ordered queue after every report so
// far; Wait waits for it too.
func (r *Reporter) Enqueue(job func(ctx context.Context)) {
	r.setLast(r.poster.Enqueue(r.key(), job))
}

// Say posts text in the thread (in order with the other reports).
func (r *Reporter) Say(text string) { r.say(text) }

// say posts text in the thread with extra message options.
func (r *Reporter) say(text string, extra ...slack.MsgOption) {
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		if _, err := r.poster.Post(ctx, r.channel, r.ts, nil, text, extra...); err != nil {
			r.log.Error("posting repair progress in the thread failed", "pod", r.pod, "error", err)
		}
	}))
}

func (r *Reporter) setLast(done <-chan struct{}) {
	r.mu.Lock()
	r.last = done
	r.mu.Unlock()
}

// Begin posts the checklist reply with head (mrkdwn: who approved what) as
// its first line; the steps are added to it as they run. people are the
// Slack user IDs of the approvers and the requester: the outcome shows
// them as mentions wherever the repair's summary names them.
func (r *Reporter) Begin(head string, people ...string) {
	r.mu.Lock()
	r.head, r.people = head, people
	r.begun = r.clock()
	r.version++
	r.mu.Unlock()
	r.enqueueProgress(true)
}

// SetStatus changes the parent message's status line.
func (r *Reporter) SetStatus(status string) {
	if r.threadOnly {
		return
	}
	r.parent.SetStatus(status)
	r.enqueueParentUpdate(false)
}

// UpdateParent queues a chat.update of the parent message that is sent
// even when a newer status follows (a decision).
func (r *Reporter) UpdateParent() { r.enqueueParentUpdate(true) }

// enqueueParentUpdate queues a chat.update of the parent message. Status
// updates coalesce: one that has been overtaken by a newer status is
// skipped, unless it must be shown (a decision).
func (r *Reporter) enqueueParentUpdate(mustShow bool) {
	_, version := r.parent.Snapshot()
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		blocks, current := r.parent.Snapshot()
		if current != version && !mustShow {
			return // a newer status is queued behind this one
		}
		if err := r.poster.Update(ctx, r.channel, r.ts, blocks, slackview.RepairFallback(r.pod)); err != nil {
			r.log.Error("updating the diagnosis message's status failed", "pod", r.pod, "error", err)
		}
	}))
}

// progressView is the checklist as it stands, and its version.
func (r *Reporter) progressView() (slackview.Progress, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head := r.head
	if head == "" {
		head = slackview.RepairHead(r.pod)
	}
	steps := make([]slackview.Step, len(r.steps))
	copy(steps, r.steps)
	now := r.clock()
	for i, s := range steps {
		if s.State == slackview.StepRunning {
			steps[i].Took = now.Sub(r.startedAt[i])
		}
	}
	return slackview.Progress{Head: head, Steps: steps, Done: r.done}, r.version
}

// enqueueProgress queues posting (the first time) or editing the checklist
// reply. An edit overtaken by a newer one is skipped unless mustShow.
func (r *Reporter) enqueueProgress(mustShow bool) {
	_, version := r.progressView()
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		view, current := r.progressView()
		if current != version && !mustShow {
			return
		}
		msg := view.Message()
		if r.progressTS == "" {
			ts, err := r.poster.Post(ctx, r.channel, r.ts, msg.Blocks, msg.Fallback)
			if err != nil {
				r.log.Error("posting the repair checklist in the thread failed", "pod", r.pod, "error", err)
				return
			}
			r.progressTS = ts
			return
		}
		if err := r.poster.Update(ctx, r.channel, r.progressTS, msg.Blocks, msg.Fallback); err != nil {
			r.log.Error("updating the repair checklist failed", "pod", r.pod, "error", err)
		}
	}))
}

// Planned lists the plan's steps in the checklist as not started (⏸);
// each is marked running, then done or failed, as it is reported.
func (r *Reporter) Planned(_ context.Context, steps []string) {
	r.mu.Lock()
	for _, s := range steps {
		r.steps = append(r.steps, slackview.Step{Name: s, State: slackview.StepPending})
	}
	r.version++
	r.mu.Unlock()
	r.enqueueProgress(false)
}

// Report updates the checklist (a started step is added as running; its
// done, skipped or failed report completes the same line) and shows the
// step as the message's status.
func (r *Reporter) Report(_ context.Context, p recovery.Progress) {
	now := r.clock()
	r.mu.Lock()
	state := stepState(p.Status)
	i := -1
	if p.Status == recovery.StepStarted {
		// The first planned step of that name not started yet.
		for j := range r.steps {
			if r.steps[j].Name == p.Step && r.steps[j].State == slackview.StepPending {
				i = j
				r.startedAt[i] = now
				break
			}
		}
	} else {
		for j := len(r.steps) - 1; j >= 0; j-- {
			if r.steps[j].Name == p.Step && r.steps[j].State == slackview.StepRunning {
				i = j
				break
			}
		}
	}
	if i < 0 {
		r.steps = append(r.steps, slackview.Step{Name: p.Step})
		i = len(r.steps) - 1
		r.startedAt[i] = now
	}
	r.steps[i].State = state
	r.steps[i].Detail = p.Detail
	long := slackview.LongDetail(p.Detail)
	if long && state == slackview.StepSkipped {
		// A dry run's pod spec or script: kept whole in a reply of its
		// own, not cut down to a checklist line.
		r.steps[i].Detail = slackview.DetailInReply
	} else if long {
		// Such as the restarted broker's recovery log lines: kept whole
		// in the outcome reply.
		r.steps[i].Detail = slackview.DetailInOutcome
		r.notes = append(r.notes, slackview.Note{Title: p.Step, Text: slackview.DropTook(p.Detail)})
		long = false
	}
	if state != slackview.StepRunning {
		r.steps[i].Took = now.Sub(r.startedAt[i])
	}
	n, total := i+1, len(r.steps)
	r.version++
	r.mu.Unlock()
	r.enqueueProgress(false)
	if long {
		r.Say(slackview.StepReply(p.Step, p.Detail))
	}
	r.SetStatus(slackview.StepRunStatus(state, n, total, p.Step, string(p.Status)))
}

// Finish completes the checklist, posts the outcome (to the channel too
// when it needs people: a failure or a refused gate, or a resumed repair
// whose message this process cannot update), marks the message, and waits
// until all of it reached Slack (or ctx ends).
func (r *Reporter) Finish(ctx context.Context, s recovery.Summary) {
	r.mu.Lock()
	r.done = true
	r.version++
	var took time.Duration
	if !r.begun.IsZero() {
		took = r.clock().Sub(r.begun)
	}
	anySteps := len(r.steps) > 0 || r.head != ""
	out := slackview.Outcome{Kind: slackview.OutcomeKind(s.Outcome), Summary: s.Text,
		People: r.people, Took: took, StepsShown: len(r.steps) > 0, Notes: r.notes}
	r.mu.Unlock()
	if anySteps {
		r.enqueueProgress(true)
	}
	msg := out.Message()
	var extra []slack.MsgOption
	if out.Kind.Alarming() || r.threadOnly {
		extra = append(extra, slack.MsgOptionBroadcast())
	}
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		if _, err := r.poster.Post(ctx, r.channel, r.ts, msg.Blocks, msg.Fallback, extra...); err != nil {
			r.log.Error("posting the repair's outcome in the thread failed", "pod", r.pod, "error", err)
		}
	}))
	r.SetStatus(out.Status())
	r.Wait(ctx)
}

// Wait blocks until every report so far has been sent (or ctx ends).
func (r *Reporter) Wait(ctx context.Context) {
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	if last == nil {
		return
	}
	select {
	case <-last:
	case <-ctx.Done():
	}
}

func stepState(s recovery.StepStatus) slackview.StepState {
	switch s {
	case recovery.StepStarted:
		return slackview.StepRunning
	case recovery.StepDone:
		return slackview.StepDone
	case recovery.StepSkipped:
		return slackview.StepSkipped
	case recovery.StepFailed:
		return slackview.StepFailed
	case recovery.StepCleanedUp:
		return slackview.StepCleanedUp
	}
	return slackview.StepState(s)
}
