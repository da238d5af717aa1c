// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package recovery holds repair plans and their executor: safety gates,
// steps, the debug-pod script, per-broker locks and progress reporting.
// It talks to Kubernetes only through internal/kube.
package recovery

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// StepStatus is the state of one step of a repair.
type StepStatus string

// Step states reported while a plan runs.
const (
	StepStarted   StepStatus = "started"
	StepDone      StepStatus = "done"
	StepSkipped   StepStatus = "skipped" // already done (idempotent re-run)
	StepFailed    StepStatus = "failed"
	StepCleanedUp StepStatus = "cleaned-up"
)

// Progress is one report from a running repair.
type Progress struct {
	// Step is the step's one-line description.
	Step   string
	Status StepStatus
	// Detail is extra text for people: what was seen, what moved where.
	Detail string
}

// Outcome is how a repair ended.
type Outcome string

// Repair outcomes.
const (
	OutcomeRepaired   Outcome = "repaired"
	OutcomeGateFailed Outcome = "gate-failed"
	OutcomeFailed     Outcome = "failed"
	OutcomeDryRun     Outcome = "dry-run"
	OutcomeCrashAgain Outcome = "crashed-again"
)

// Summary is the final report of a repair.
type Summary struct {
	Outcome Outcome
	// Text is a human summary: backup location and size, step durations,
	// the new pod's state, or why it stopped.
	Text string
}

// Reporter receives a repair's progress. Slack posts each report in the
// message's thread; the CLI prints it; tests record it.
type Reporter interface {
	Report(ctx context.Context, p Progress)
	Finish(ctx context.Context, s Summary)
}

// PlanReporter is a Reporter that is told a plan's steps, in order, before
// the first one runs: the Slack checklist shows the steps not started yet.
type PlanReporter interface {
	Planned(ctx context.Context, steps []string)
}

// Request is an approved repair: what to repair and who decided. It is
// built from a verified approval token (Slack) or from `bot repair --yes`.
type Request struct {
	// ApprovalID identifies the approval; the same ID never runs twice.
	ApprovalID string
	Namespace  string
	Pod        string
	// PodUID is the UID seen at diagnosis time; a recreated pod fails the gate.
	PodUID string
	// Rule is the finding's rule id and Action/Target its remedy.
	Rule   string
	Action string
	Target string
	// Requester asked for the diagnosis; Approver approved the repair.
	Requester string
	Approver  string
	// Channel and ThreadTS locate the Slack thread to report in ("" from the CLI).
	Channel  string
	ThreadTS string
	// DryRun stops before the first write and reports what would run.
	DryRun bool
	// ExpiresAt is when the approval expired (its token's expiry; the
	// moment of the typed "yes" for the CLI). A restarted bot resumes the
	// repair only until ExpiresAt plus the repair timeout.
	ExpiresAt time.Time
}

// TextReporter prints a repair's progress for a terminal: one line per
// report with the time, the status and the step; a detail follows on its
// own indented lines. It is safe for concurrent use.
type TextReporter struct {
	w     io.Writer
	now   func() time.Time
	mu    sync.Mutex
	final *Summary
}

// NewTextReporter returns a TextReporter writing to w; now gives the time
// printed on each line (time.Now when nil).
func NewTextReporter(w io.Writer, now func() time.Time) *TextReporter {
	if now == nil {
		now = time.Now
	}
	return &TextReporter{w: w, now: now}
}

// Report prints one progress line.
func (t *TextReporter) Report(_ context.Context, p Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "%s %-11s %s\n", t.now().Format("15:04:05"), p.Status, p.Step)
	t.writeDetail(p.Detail)
}

// Finish prints the summary.
func (t *TextReporter) Finish(_ context.Context, s Summary) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.final = &s
	fmt.Fprintf(t.w, "%s %-11s repair finished\n", t.now().Format("15:04:05"), s.Outcome)
	t.writeDetail(s.Text)
}

// Summary returns the summary Finish received, or nil before that.
func (t *TextReporter) Summary() *Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.final
}

func (t *TextReporter) writeDetail(detail string) {
	detail = strings.TrimRight(detail, "\n")
	if detail == "" {
		return
	}
	for line := range strings.Lines(detail) {
		fmt.Fprintf(t.w, "         %s", line)
		if !strings.HasSuffix(line, "\n") {
			fmt.Fprintln(t.w)
		}
	}
}
