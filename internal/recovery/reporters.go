// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// LogReporter reports a repair as log lines: a resumed repair that was
// started from the terminal has no thread to report in.
type LogReporter struct{ Log *slog.Logger }

// Report logs one step.
func (l LogReporter) Report(_ context.Context, p Progress) {
	l.Log.Info("resumed repair step", "step", p.Step, "status", string(p.Status), "detail", p.Detail)
}

// Finish logs the outcome.
func (l LogReporter) Finish(_ context.Context, s Summary) {
	l.Log.Info("resumed repair finished", "outcome", string(s.Outcome), "summary", s.Text)
}

var _ PlanReporter = (*FinishOnce)(nil)

// FinishOnce forwards to Reporter and makes sure its summary is posted
// exactly once, whether or not the repairer calls Finish itself: the
// caller calls Finish with the repairer's result after it returns.
type FinishOnce struct {
	Reporter
	done atomic.Bool
}

// Finish forwards the first call only.
func (f *FinishOnce) Finish(ctx context.Context, s Summary) {
	if f.done.Swap(true) {
		return
	}
	f.Reporter.Finish(ctx, s)
}

// Planned forwards the plan to the Reporter when it takes one.
func (f *FinishOnce) Planned(ctx context.Context, steps []string) {
	if pr, ok := f.Reporter.(PlanReporter); ok {
		pr.Planned(ctx, steps)
	}
}
