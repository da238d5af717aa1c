// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

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

// ThreadReporter is the Slack recovery.Reporter. A repair makes at most
// two posts in the diagnosis message's thread: one checklist reply, edited
// in place as the steps advance (slackview.Progress), and one outcome
// reply (slackview.Outcome), which is also sent to the channel when the
// repair failed or a gate refused it. The message's status line follows
// each step. Everything goes through the thread's ordered queue, so a
// rate-limited call is retried before the next one and the thread never
// reads out of order; edits overtaken by a newer one are skipped (chat.update
// is rate limited more tightly than posts). Report does not wait for Slack.
type ThreadReporter struct {
	poster *slacktransport.Poster
	parent *parentMessage
	pod    string
	log    *slog.Logger
	clock  func() time.Time
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
	_ recovery.Reporter     = (*ThreadReporter)(nil)
	_ recovery.PlanReporter = (*ThreadReporter)(nil)
	_ recovery.PlanReporter = (*finishOnce)(nil)
)

func newThreadReporter(p *slacktransport.Poster, parent *parentMessage, pod string, log *slog.Logger, clock func() time.Time) *ThreadReporter {
	if clock == nil {
		clock = time.Now
	}
	return &ThreadReporter{poster: p, parent: parent, pod: pod, log: log, clock: clock, startedAt: map[int]time.Time{}}
}

func (r *ThreadReporter) key() string { return r.parent.Channel + "/" + r.parent.TS }

// Say posts text in the thread (in order with the other reports).
func (r *ThreadReporter) Say(text string) { r.say(text) }

// say posts text in the thread with extra message options.
func (r *ThreadReporter) say(text string, extra ...slack.MsgOption) {
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		if _, err := r.poster.Post(ctx, r.parent.Channel, r.parent.TS, nil, text, extra...); err != nil {
			r.log.Error("posting repair progress in the thread failed", "pod", r.pod, "error", err)
		}
	}))
}

func (r *ThreadReporter) setLast(done <-chan struct{}) {
	r.mu.Lock()
	r.last = done
	r.mu.Unlock()
}

// Begin posts the checklist reply with head (mrkdwn: who approved what) as
// its first line; the steps are added to it as they run. people are the
// Slack user IDs of the approvers and the requester: the outcome shows
// them as mentions wherever the repair's summary names them.
func (r *ThreadReporter) Begin(head string, people ...string) {
	r.mu.Lock()
	r.head, r.people = head, people
	r.begun = r.clock()
	r.version++
	r.mu.Unlock()
	r.enqueueProgress(true)
}

// resumeReporter is the Reporter for a repair that a restarted bot resumes
// (recovery.Repairer.Resume): it posts in the repair's original thread but
// does not rewrite the parent message, whose blocks this process never saw.
// A repair started from the terminal (no channel) is reported in the log.
// On a multi-cluster bot the checklist's head names m's cluster, as the
// first run's plan line does (its outcome names namespace/pod).
func (b *Bot) resumeReporter(m *member, channel, threadTS string) recovery.Reporter {
	log := b.log
	if b.multi() && m != nil {
		log = log.With("cluster", m.Name)
	}
	if channel == "" || threadTS == "" {
		return logReporter{log: log}
	}
	r := newThreadReporter(b.poster, newParentMessage(channel, threadTS, nil), "resumed repair", log, b.clock)
	r.threadOnly = true
	cluster := ""
	if b.multi() && m != nil {
		cluster = m.Name
	}
	r.head = slackview.ResumedHead(cluster)
	return r
}

// logReporter reports a resumed terminal repair as log lines.
type logReporter struct{ log *slog.Logger }

func (l logReporter) Report(_ context.Context, p recovery.Progress) {
	l.log.Info("resumed repair step", "step", p.Step, "status", string(p.Status), "detail", p.Detail)
}

func (l logReporter) Finish(_ context.Context, s recovery.Summary) {
	l.log.Info("resumed repair finished", "outcome", string(s.Outcome), "summary", s.Text)
}

// SetStatus changes the parent message's status line.
func (r *ThreadReporter) SetStatus(status string) {
	if r.threadOnly {
		return
	}
	r.parent.setStatus(status)
	r.enqueueParentUpdate(false)
}

// enqueueParentUpdate queues a chat.update of the parent message. Status
// updates coalesce: one that has been overtaken by a newer status is
// skipped, unless it must be shown (a decision).
func (r *ThreadReporter) enqueueParentUpdate(mustShow bool) {
	_, version := r.parent.snapshot()
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		blocks, current := r.parent.snapshot()
		if current != version && !mustShow {
			return // a newer status is queued behind this one
		}
		if err := r.poster.Update(ctx, r.parent.Channel, r.parent.TS, blocks, slackview.RepairFallback(r.pod)); err != nil {
			r.log.Error("updating the diagnosis message's status failed", "pod", r.pod, "error", err)
		}
	}))
}

// progressView is the checklist as it stands, and its version.
func (r *ThreadReporter) progressView() (slackview.Progress, int) {
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
func (r *ThreadReporter) enqueueProgress(mustShow bool) {
	_, version := r.progressView()
	r.setLast(r.poster.Enqueue(r.key(), func(ctx context.Context) {
		view, current := r.progressView()
		if current != version && !mustShow {
			return
		}
		msg := view.Message()
		if r.progressTS == "" {
			ts, err := r.poster.Post(ctx, r.parent.Channel, r.parent.TS, msg.Blocks, msg.Fallback)
			if err != nil {
				r.log.Error("posting the repair checklist in the thread failed", "pod", r.pod, "error", err)
				return
			}
			r.progressTS = ts
			return
		}
		if err := r.poster.Update(ctx, r.parent.Channel, r.progressTS, msg.Blocks, msg.Fallback); err != nil {
			r.log.Error("updating the repair checklist failed", "pod", r.pod, "error", err)
		}
	}))
}

// Planned lists the plan's steps in the checklist as not started (⏸);
// each is marked running, then done or failed, as it is reported.
func (r *ThreadReporter) Planned(_ context.Context, steps []string) {
	r.mu.Lock()
	for _, s := range steps {
		r.steps = append(r.steps, slackview.Step{Name: s, State: slackview.StepPending})
	}
	r.version++
	r.mu.Unlock()
	r.enqueueProgress(false)
}

// Planned forwards the plan to the Reporter when it takes one.
func (f *finishOnce) Planned(ctx context.Context, steps []string) {
	if pr, ok := f.Reporter.(recovery.PlanReporter); ok {
		pr.Planned(ctx, steps)
	}
}

// Report updates the checklist (a started step is added as running; its
// done, skipped or failed report completes the same line) and shows the
// step as the message's status.
func (r *ThreadReporter) Report(_ context.Context, p recovery.Progress) {
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
func (r *ThreadReporter) Finish(ctx context.Context, s recovery.Summary) {
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
		if _, err := r.poster.Post(ctx, r.parent.Channel, r.parent.TS, msg.Blocks, msg.Fallback, extra...); err != nil {
			r.log.Error("posting the repair's outcome in the thread failed", "pod", r.pod, "error", err)
		}
	}))
	r.SetStatus(out.Status())
	r.Wait(ctx)
}

// Wait blocks until every report so far has been sent (or ctx ends).
func (r *ThreadReporter) Wait(ctx context.Context) {
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
