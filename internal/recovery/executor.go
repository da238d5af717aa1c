// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"k8s.io/utils/clock"
)

// StepRecord is what happened to one step of a plan.
type StepRecord struct {
	Step     string
	Status   StepStatus
	Duration time.Duration
	Err      error
}

// Result is what happened when a plan ran.
type Result struct {
	// Steps and Cleanup record each step that ran, in order.
	Steps   []StepRecord
	Cleanup []StepRecord
	// Err is the first step failure (nil when every step succeeded);
	// FailedStep names that step.
	Err        error
	FailedStep string
}

// Executor runs plans, reporting every step.
type Executor struct {
	// Clock times the steps.
	Clock clock.PassiveClock
	// Reporter receives a started report and a done, skipped or failed
	// report for every step.
	Reporter Reporter
}

// Run runs the plan's steps in order and stops at the first failure; then it
// always runs every cleanup step (a failing cleanup step does not stop the
// others). Cleanup runs with a context that outlives ctx's cancellation,
// so a stopping bot still cleans up.
func (e Executor) Run(ctx context.Context, p Plan) Result {
	var res Result
	if pr, ok := e.Reporter.(PlanReporter); ok {
		names := make([]string, len(p.Steps))
		for i, s := range p.Steps {
			names[i] = s.Describe()
		}
		pr.Planned(ctx, names)
	}
	for _, s := range p.Steps {
		rec := e.runStep(ctx, s)
		res.Steps = append(res.Steps, rec)
		if rec.Err != nil {
			res.Err, res.FailedStep = rec.Err, rec.Step
			break
		}
	}
	cleanupCtx := context.WithoutCancel(ctx)
	for _, s := range p.Cleanup {
		res.Cleanup = append(res.Cleanup, e.runCleanup(cleanupCtx, s))
	}
	return res
}

func (e Executor) runStep(ctx context.Context, s Step) StepRecord {
	rec := StepRecord{Step: s.Describe()}
	e.Reporter.Report(ctx, Progress{Step: rec.Step, Status: StepStarted})
	start := e.Clock.Now()
	done, err := s.Done(ctx)
	if err == nil && done {
		rec.Status, rec.Duration = StepSkipped, e.Clock.Since(start)
		e.Reporter.Report(ctx, Progress{Step: rec.Step, Status: StepSkipped, Detail: "already done"})
		return rec
	}
	if err == nil {
		err = s.Do(ctx)
	}
	rec.Duration = e.Clock.Since(start)
	if err != nil {
		rec.Status, rec.Err = StepFailed, err
		e.Reporter.Report(ctx, Progress{Step: rec.Step, Status: StepFailed, Detail: fmt.Sprintf("%v (after %s)", err, roundDuration(rec.Duration))})
		return rec
	}
	rec.Status = StepDone
	metrics.RepairStepDuration.WithLabelValues(stepKind(s)).Observe(rec.Duration.Seconds())
	detail := "took " + roundDuration(rec.Duration)
	if d, ok := s.(Detailer); ok && d.Detail() != "" {
		detail += "\n" + d.Detail()
	}
	e.Reporter.Report(ctx, Progress{Step: rec.Step, Status: StepDone, Detail: detail})
	return rec
}

// runCleanup runs one cleanup step; it reports only when there was
// something to clean up, or when cleaning up failed.
func (e Executor) runCleanup(ctx context.Context, s Step) StepRecord {
	rec := StepRecord{Step: s.Describe()}
	start := e.Clock.Now()
	done, err := s.Done(ctx)
	if err == nil && done {
		rec.Status = StepSkipped
		return rec
	}
	if err == nil {
		err = s.Do(ctx)
	}
	rec.Duration = e.Clock.Since(start)
	if err != nil {
		rec.Status, rec.Err = StepFailed, err
		e.Reporter.Report(ctx, Progress{Step: rec.Step, Status: StepFailed, Detail: err.Error()})
		return rec
	}
	rec.Status = StepCleanedUp
	e.Reporter.Report(ctx, Progress{Step: rec.Step, Status: StepCleanedUp, Detail: "took " + roundDuration(rec.Duration)})
	return rec
}

// stepKind labels a step for metrics with a small, fixed set of values:
// the first word of its description (a verb chosen in code: "create",
// "wait", "restart"...), never the pod names that follow it.
func stepKind(s Step) string {
	verb, _, _ := strings.Cut(s.Describe(), " ")
	return strings.ToLower(verb)
}

// roundDuration prints a duration at a precision people read.
func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}
