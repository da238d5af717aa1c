// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	testclock "k8s.io/utils/clock/testing"
)

var t0Plan = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// planRecorder records what a PlanReporter is told, in order.
type planRecorder struct{ events []string }

func (p *planRecorder) Planned(_ context.Context, steps []string) {
	p.events = append(p.events, "planned "+stringsJoin(steps))
}
func (p *planRecorder) Report(_ context.Context, pr Progress) {
	p.events = append(p.events, string(pr.Status)+" "+pr.Step)
}
func (p *planRecorder) Finish(context.Context, Summary) {}

func stringsJoin(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// The executor tells a PlanReporter every step of the plan, in order,
// before the first runs (not the cleanup steps, which report only when
// they clean something), also through the audit reporter.
func TestExecutorTellsThePlan(t *testing.T) {
	clock := testclock.NewFakeClock(t0Plan)
	var calls []string
	plan := Plan{
		Steps:   []Step{fakeStep{name: "a", clock: clock, calls: &calls}, fakeStep{name: "b", clock: clock, calls: &calls}},
		Cleanup: []Step{fakeStep{name: "clean", clock: clock, calls: &calls}},
	}
	for name, wrap := range map[string]func(Reporter) Reporter{
		"direct": func(r Reporter) Reporter { return r },
		"via audit": func(r Reporter) Reporter {
			return &auditReporter{next: r, run: &repairRun{r: &Repairer{opts: RepairOptions{Logger: discardLogger()}}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &planRecorder{}
			Executor{Clock: clock, Reporter: wrap(rec)}.Run(context.Background(), plan)
			want := []string{"planned a,b", "started a", "done a", "started b", "done b", "cleaned-up clean"}
			if !slices.Equal(rec.events, want) {
				t.Errorf("events %q, want %q", rec.events, want)
			}
		})
	}
}
