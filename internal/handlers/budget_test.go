// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// scriptedRepairer reports steps (started, then done) and ends with outcome;
// failAt, when set, makes that step fail instead.
type scriptedRepairer struct {
	steps   []string
	failAt  int // 1-based; 0: none fails
	outcome recovery.Outcome
	summary string
}

func (r scriptedRepairer) Repair(ctx context.Context, _ recovery.Request, rep recovery.Reporter) recovery.Summary {
	for i, s := range r.steps {
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepStarted})
		if i+1 == r.failAt {
			rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepFailed, Detail: "the debug pod failed (after 3s)"})
			break
		}
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepDone, Detail: "took 1s"})
	}
	sum := recovery.Summary{Outcome: r.outcome, Text: r.summary}
	rep.Finish(ctx, sum)
	return sum
}

// elevenSteps are as many steps as the real move-metadata-log plan runs.
func elevenSteps() []string {
	var s []string
	for i := range 11 {
		s = append(s, fmt.Sprintf("Step %02d of the repair", i+1))
	}
	return s
}

// TestRepairThreadBudget counts, on the emulator's message store, what a
// repair does to its thread: a successful repair of eleven steps posts at
// most three replies in all (the details, posted with the diagnosis; one
// checklist, edited in place; one outcome) and broadcasts nothing; a
// failed or refused repair posts the same three and broadcasts its
// outcome to the channel. The diagnosis message stays within its line
// budget as Slack stored it.
func TestRepairThreadBudget(t *testing.T) {
	tests := []struct {
		name       string
		r          scriptedRepairer
		broadcasts int
		want       string
	}{
		{"success", scriptedRepairer{steps: elevenSteps(), outcome: recovery.OutcomeRepaired,
			summary: "Repaired kafka/foobar-kafka-broker-0, approved by " + approver + ", requested by " + requester + "."}, 0, "Repair succeeded"},
		{"step fails", scriptedRepairer{steps: elevenSteps(), failAt: 6, outcome: recovery.OutcomeFailed,
			summary: "Repair of kafka/foobar-kafka-broker-0 stopped at \"Step 06\"."}, 1, "Repair failed"},
		{"gate refuses", scriptedRepairer{steps: elevenSteps()[:1], failAt: 1, outcome: recovery.OutcomeGateFailed,
			summary: "Not repaired: another broker is under repair. Nothing was changed."}, 1, "stopped by a safety check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startBot(t, func(o *Options) { o.Clusters[0].Repairer = tt.r })
			m := h.diagnose()
			l, err := slackemu.LayoutOf(m.Blocks, 1280)
			if err != nil {
				t.Fatal(err)
			}
			if l.AboveActions > 8 || l.Total > 14 {
				t.Errorf("the stored diagnosis takes %d lines above the buttons (budget 8), %d in all (budget 14): %v", l.AboveActions, l.Total, l.Lines)
			}
			h.click(m, slackview.ActionApprove, approver)
			h.waitFor("the outcome and the final status", func() bool {
				th := h.emu.Thread(channel, m.TS)
				return len(th) > 0 && strings.Contains(th[len(th)-1].Text, tt.want) &&
					strings.Contains(blockTexts(h.t, h.message(m).Blocks), "see the thread")
			})
			st := h.emu.ThreadStats(channel, m.TS)
			if st.Posts > 3 {
				t.Errorf("%d thread posts, budget 3 (details, checklist, outcome): %q", st.Posts, threadTexts(h.emu.Thread(channel, m.TS)))
			}
			if st.Broadcasts != tt.broadcasts {
				t.Errorf("%d replies broadcast to the channel, want %d", st.Broadcasts, tt.broadcasts)
			}
			if st.ReplyEdits == 0 {
				t.Error("the checklist was never edited")
			}
			thread := h.emu.Thread(channel, m.TS)
			checklist := blockTexts(t, thread[1].Blocks)
			if tt.r.failAt > 0 && !strings.Contains(checklist, "❌ "+tt.r.steps[tt.r.failAt-1]) {
				t.Errorf("the checklist does not show the failed step:\n%s", checklist)
			}
			outcome := blockTexts(t, thread[2].Blocks)
			if strings.Contains(outcome, "by "+approver) || strings.Contains(outcome, "by "+requester) {
				t.Errorf("the outcome shows raw user IDs:\n%s", outcome)
			}
			if n := len(h.emu.Messages(channel)); n != 1+tt.broadcasts {
				t.Errorf("the channel shows %d messages, want the diagnosis and %d broadcast", n, tt.broadcasts)
			}
		})
	}
}

// plannedRepairer tells its plan, runs the first step, then waits for
// resume before running the rest.
type plannedRepairer struct {
	steps          []string
	paused, resume chan struct{}
}

func (r plannedRepairer) Repair(ctx context.Context, _ recovery.Request, rep recovery.Reporter) recovery.Summary {
	pr, ok := rep.(recovery.PlanReporter)
	if !ok {
		panic("the bot's Reporter does not take a plan")
	}
	pr.Planned(ctx, r.steps)
	for i, s := range r.steps {
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepStarted})
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepDone, Detail: "took 1s"})
		if i == 0 {
			close(r.paused)
			<-r.resume
		}
	}
	sum := recovery.Summary{Outcome: recovery.OutcomeRepaired, Text: "broker Ready"}
	rep.Finish(ctx, sum)
	return sum
}

// TestChecklistShowsStepsNotStarted: with the plan known, the checklist
// lists every step from the start, ⏸ until it runs, in one reply.
func TestChecklistShowsStepsNotStarted(t *testing.T) {
	r := plannedRepairer{steps: elevenSteps()[:4], paused: make(chan struct{}), resume: make(chan struct{})}
	h := startBot(t, func(o *Options) { o.Clusters[0].Repairer = r })
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	<-r.paused
	var checklist string
	h.waitFor("the checklist with one step done", func() bool {
		th := h.emu.Thread(channel, m.TS)
		if len(th) < 2 {
			return false
		}
		checklist = blockTexts(h.t, th[1].Blocks)
		return strings.Contains(checklist, "✅ "+r.steps[0])
	})
	for _, s := range r.steps[1:] {
		if !strings.Contains(checklist, "⏸ "+s) {
			t.Errorf("step %q is not shown as not started:\n%s", s, checklist)
		}
	}
	close(r.resume)
	h.waitRepairDone(m)
	thread := h.emu.Thread(channel, m.TS)
	final := blockTexts(t, thread[1].Blocks)
	if len(thread) != 3 || strings.Contains(final, "⏸") || strings.Count(final, r.steps[1]) != 1 {
		t.Errorf("final thread (%d replies), checklist:\n%s", len(thread), final)
	}
	if !strings.Contains(blockTexts(t, h.message(m).Blocks), "Repair succeeded") {
		t.Error("the parent's status does not show the outcome")
	}
}
