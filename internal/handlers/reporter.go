package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/slack-go/slack"
)

// ThreadReporter is the Slack recovery.Reporter: it posts each step of a
// repair in the diagnosis message's thread and keeps the message's status
// line current. Posts go through the thread's ordered queue, so a
// rate-limited post is retried before the next one and the thread never
// reads out of order; Report does not wait for Slack.
type ThreadReporter struct {
	poster *poster
	parent *parentMessage
	pod    string
	log    *slog.Logger
	// threadOnly leaves the parent message alone (a resumed repair: the
	// restarted bot no longer holds the message's blocks).
	threadOnly bool
	mu         sync.Mutex
	// last is closed when the most recently enqueued post has run.
	last <-chan struct{}
}

var _ recovery.Reporter = (*ThreadReporter)(nil)

func newThreadReporter(p *poster, parent *parentMessage, pod string, log *slog.Logger) *ThreadReporter {
	return &ThreadReporter{poster: p, parent: parent, pod: pod, log: log}
}

func (r *ThreadReporter) key() string { return r.parent.Channel + "/" + r.parent.TS }

// Say posts text in the thread (in order with the other reports).
func (r *ThreadReporter) Say(text string) { r.say(text) }

// say posts text in the thread with extra message options.
func (r *ThreadReporter) say(text string, extra ...slack.MsgOption) {
	r.setLast(r.poster.enqueue(r.key(), func(ctx context.Context) {
		if _, err := r.poster.post(ctx, r.parent.Channel, r.parent.TS, nil, text, extra...); err != nil {
			r.log.Error("posting repair progress in the thread failed", "pod", r.pod, "error", err)
		}
	}))
}

func (r *ThreadReporter) setLast(done <-chan struct{}) {
	r.mu.Lock()
	r.last = done
	r.mu.Unlock()
}

// resumeReporter is the Reporter for a repair that a restarted bot resumes
// (recovery.Repairer.Resume): it posts in the repair's original thread but
// does not rewrite the parent message, whose blocks this process never saw.
// A repair started from the terminal (no channel) is reported in the log.
func (b *Bot) resumeReporter(channel, threadTS string) recovery.Reporter {
	if channel == "" || threadTS == "" {
		return logReporter{log: b.log}
	}
	r := newThreadReporter(b.poster, newParentMessage(channel, threadTS, nil), "resumed repair", b.log)
	r.threadOnly = true
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
// updates coalesce (chat.update is rate limited more tightly than posts):
// one that has been overtaken by a newer status is skipped, unless it must
// be shown (a decision).
func (r *ThreadReporter) enqueueParentUpdate(mustShow bool) {
	_, version := r.parent.snapshot()
	r.setLast(r.poster.enqueue(r.key(), func(ctx context.Context) {
		blocks, current := r.parent.snapshot()
		if current != version && !mustShow {
			return // a newer status is queued behind this one
		}
		if err := r.poster.update(ctx, r.parent.Channel, r.parent.TS, blocks, "Kafka repair of "+r.pod); err != nil {
			r.log.Error("updating the diagnosis message's status failed", "pod", r.pod, "error", err)
		}
	}))
}

// Report posts one step in the thread and shows it as the current status.
func (r *ThreadReporter) Report(_ context.Context, p recovery.Progress) {
	text := fmt.Sprintf("%s %s", stepIcon(p.Status), escapeTruncate(oneLine(p.Step), 500))
	if p.Status != "" {
		text += " — _" + escapeMrkdwn(string(p.Status)) + "_"
	}
	if p.Detail != "" {
		text += "\n" + escapeTruncate(p.Detail, 3000)
	}
	r.Say(text)
	r.SetStatus(fmt.Sprintf("%s repair in progress: %s (%s)", stepIcon(p.Status),
		escapeTruncate(oneLine(p.Step), 300), escapeMrkdwn(string(p.Status))))
}

// Finish posts the summary in the thread, marks the message repaired or
// failed, and waits until both reached Slack (or ctx ends).
func (r *ThreadReporter) Finish(ctx context.Context, s recovery.Summary) {
	icon, word := outcomeWords(s.Outcome)
	text := fmt.Sprintf("%s *Repair %s.*", icon, word)
	if s.Text != "" {
		text += "\n" + escapeTruncate(s.Text, 3500)
	}
	if r.threadOnly {
		// A resumed repair cannot rewrite the parent message (this process
		// never saw its blocks), so the outcome is also sent to the channel.
		r.say(text, slack.MsgOptionBroadcast())
	} else {
		r.Say(text)
	}
	r.SetStatus(fmt.Sprintf("%s Repair %s — see the thread", icon, word))
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

func stepIcon(s recovery.StepStatus) string {
	switch s {
	case recovery.StepStarted:
		return "⏳"
	case recovery.StepDone:
		return "✅"
	case recovery.StepSkipped:
		return "⏭️"
	case recovery.StepFailed:
		return "❌"
	case recovery.StepCleanedUp:
		return "🧹"
	}
	return "•"
}

func outcomeWords(o recovery.Outcome) (icon, word string) {
	switch o {
	case recovery.OutcomeRepaired:
		return "✅", "succeeded: the broker is back"
	case recovery.OutcomeDryRun:
		return "📝", "dry run finished: nothing was changed"
	case recovery.OutcomeGateFailed:
		return "🛑", "stopped by a safety check: nothing was changed"
	case recovery.OutcomeCrashAgain:
		return "❌", "ran, but the broker crashed again"
	case recovery.OutcomeFailed:
		return "❌", "failed"
	}
	return "❔", "ended (" + escapeMrkdwn(string(o)) + ")"
}
