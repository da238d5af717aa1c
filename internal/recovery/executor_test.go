// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	testclock "k8s.io/utils/clock/testing"
)

// fakeStep records its calls and advances the clock while it runs.
type fakeStep struct {
	name  string
	done  bool
	err   error
	clock *testclock.FakeClock
	took  time.Duration
	calls *[]string
}

func (s fakeStep) Describe() string { return s.name }

func (s fakeStep) Done(context.Context) (bool, error) { return s.done, nil }

func (s fakeStep) Do(context.Context) error {
	*s.calls = append(*s.calls, s.name)
	s.clock.Step(s.took)
	return s.err
}

func TestExecutor(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name        string
		steps       []fakeStep
		wantCalls   string
		wantReports string
		wantErr     error
	}{
		{
			name:        "all steps run, cleanup too",
			steps:       []fakeStep{{name: "a", took: 2 * time.Second}, {name: "b", took: 1500 * time.Millisecond}},
			wantCalls:   "a b clean",
			wantReports: "started a|done a took 2s|started b|done b took 1.5s|cleaned-up clean took 0s",
		},
		{
			name:        "a done step is skipped",
			steps:       []fakeStep{{name: "a", done: true}, {name: "b"}},
			wantCalls:   "b clean",
			wantReports: "started a|skipped a already done|started b|done b took 0s|cleaned-up clean took 0s",
		},
		{
			name:        "the first failure stops the plan, cleanup still runs",
			steps:       []fakeStep{{name: "a", err: boom, took: time.Minute}, {name: "b"}},
			wantCalls:   "a clean",
			wantReports: "started a|failed a boom (after 1m0s)|cleaned-up clean took 0s",
			wantErr:     boom,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testclock.NewFakeClock(testStart)
			var calls []string
			var p Plan
			for _, s := range tc.steps {
				s.clock, s.calls = clk, &calls
				p.Steps = append(p.Steps, s)
			}
			p.Cleanup = []Step{fakeStep{name: "clean", clock: clk, calls: &calls}}
			rep := &recorder{}
			res := Executor{Clock: clk, Reporter: rep}.Run(context.Background(), p)
			if got := strings.Join(calls, " "); got != tc.wantCalls {
				t.Errorf("calls %q, want %q", got, tc.wantCalls)
			}
			var reports []string
			for _, pr := range rep.progress {
				reports = append(reports, strings.TrimSpace(fmt.Sprintf("%s %s %s", pr.Status, pr.Step, pr.Detail)))
			}
			if got := strings.Join(reports, "|"); got != tc.wantReports {
				t.Errorf("reports\n%s\nwant\n%s", got, tc.wantReports)
			}
			if !errors.Is(res.Err, tc.wantErr) {
				t.Errorf("err %v, want %v", res.Err, tc.wantErr)
			}
		})
	}
}

func TestExecutorCleanupOutlivesCancellation(t *testing.T) {
	clk := testclock.NewFakeClock(testStart)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var cleanupCtxErr error
	p := Plan{Cleanup: []Step{funcStep{describe: "clean", do: func(ctx context.Context) error {
		cleanupCtxErr = ctx.Err()
		return nil
	}}}}
	Executor{Clock: clk, Reporter: &recorder{}}.Run(ctx, p)
	if cleanupCtxErr != nil {
		t.Errorf("cleanup ran with a cancelled context: %v", cleanupCtxErr)
	}
}

func TestTextReporter(t *testing.T) {
	var b strings.Builder
	at := testStart
	tr := NewTextReporter(&b, func() time.Time { return at })
	tr.Report(context.Background(), Progress{Step: "Restart broker-0", Status: StepDone, Detail: "took 1s\nline two"})
	tr.Finish(context.Background(), Summary{Outcome: OutcomeRepaired, Text: "Repaired."})
	want := "12:00:00 done        Restart broker-0\n         took 1s\n         line two\n12:00:00 repaired    repair finished\n         Repaired.\n"
	if b.String() != want {
		t.Errorf("output\n%q\nwant\n%q", b.String(), want)
	}
	if s := tr.Summary(); s == nil || s.Outcome != OutcomeRepaired {
		t.Errorf("Summary() = %+v", s)
	}
}
