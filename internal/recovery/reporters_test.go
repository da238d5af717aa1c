// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// finishCounter counts Finish calls (it takes no plan).
type finishCounter struct{ finished []Outcome }

func (f *finishCounter) Report(context.Context, Progress) {}
func (f *finishCounter) Finish(_ context.Context, s Summary) {
	f.finished = append(f.finished, s.Outcome)
}

// TestFinishOnce: the first summary reaches the reporter and later ones do
// not; a plan reaches a reporter that takes one and is dropped otherwise.
func TestFinishOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("summary once", func(t *testing.T) {
		c := &finishCounter{}
		f := &FinishOnce{Reporter: c}
		f.Planned(ctx, []string{"step"}) // finishCounter takes no plan
		f.Finish(ctx, Summary{Outcome: OutcomeFailed})
		f.Finish(ctx, Summary{Outcome: OutcomeRepaired})
		if len(c.finished) != 1 || c.finished[0] != OutcomeFailed {
			t.Errorf("finished %v, want [failed]", c.finished)
		}
	})
	t.Run("plan forwarded", func(t *testing.T) {
		p := &planRecorder{}
		(&FinishOnce{Reporter: p}).Planned(ctx, []string{"a", "b"})
		if len(p.events) != 1 || p.events[0] != "planned a,b" {
			t.Errorf("events %q, want the plan", p.events)
		}
	})
}

func TestLogReporter(t *testing.T) {
	var buf bytes.Buffer
	l := LogReporter{Log: slog.New(slog.NewTextHandler(&buf, nil))}
	l.Report(context.Background(), Progress{Step: "delete the pod", Status: StepDone})
	l.Finish(context.Background(), Summary{Outcome: OutcomeRepaired, Text: "ok"})
	for _, want := range []string{`step="delete the pod" status=done`, "outcome=repaired summary=ok"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}
