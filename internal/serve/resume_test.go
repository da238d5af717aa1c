// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// flakyResumer fails its first failures calls, then succeeds.
type flakyResumer struct {
	failures int32
	calls    atomic.Int32
}

func (f *flakyResumer) Resume(context.Context, func(string, string) recovery.Reporter) error {
	if n := f.calls.Add(1); n <= f.failures {
		return errors.New("listing repair leases: dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	return nil
}

// TestResumeIsRetriedUntilItSucceeds: resuming interrupted repairs that
// fails (the API server did not answer the Lease list) is retried with
// back-off until it succeeds, and the log says so each time; before issue
// 25 it was logged once ("resuming interrupted repairs failed") and never
// tried again, leaving the repair's Lease running for good.
func TestResumeIsRetriedUntilItSucceeds(t *testing.T) {
	inner := &flakyResumer{failures: 3}
	logs := &logging.Buffer{}
	r := retryingResumer{inner: inner, cluster: "prod", log: logging.New(logs, "text", 0, logging.NewRedactor()),
		base: time.Millisecond, max: 4 * time.Millisecond}
	if err := r.Resume(t.Context(), nil); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if got := inner.calls.Load(); got != 4 {
		t.Errorf("%d attempts, want 4 (three failures, then success)", got)
	}
	out := logs.String()
	if n := strings.Count(out, "resuming interrupted repairs failed; retrying with back-off until it succeeds"); n != 3 {
		t.Errorf("%d failure lines, want 3 saying it is retried:\n%s", n, out)
	}
	if !strings.Contains(out, "resuming interrupted repairs succeeded after retrying") || !strings.Contains(out, "attempts=4") {
		t.Errorf("log does not say the retry succeeded:\n%s", out)
	}
}

// TestResumeRetryStopsWithTheBot: a bot that stops stops retrying.
func TestResumeRetryStopsWithTheBot(t *testing.T) {
	inner := &flakyResumer{failures: 1 << 30}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	r := retryingResumer{inner: inner, cluster: "prod", log: logging.New(&logging.Buffer{}, "text", 0, logging.NewRedactor()),
		base: time.Millisecond, max: time.Millisecond}
	if err := r.Resume(ctx, nil); err != nil {
		t.Fatalf("Resume after the bot stopped: %v, want nil", err)
	}
	if inner.calls.Load() < 2 {
		t.Errorf("%d attempts in 50ms, want it retried", inner.calls.Load())
	}
}
