// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"log/slog"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// Back-off of resuming interrupted repairs after a failure (the API server
// did not answer the Lease list, say).
const (
	DefaultResumeRetryBase = time.Second
	DefaultResumeRetryMax  = 2 * time.Minute
)

// retryingResumer resumes a cluster's interrupted repairs until it
// succeeds: a failure is logged with when it is tried again, and retried
// with back-off (base doubling up to max) until it succeeds or ctx ends,
// so a repair interrupted by a restart is never left behind because the
// API server was briefly unreachable when the bot came back.
type retryingResumer struct {
	inner     handlers.Resumer
	cluster   string
	log       *slog.Logger
	base, max time.Duration
}

// Resume calls inner.Resume until it returns nil or ctx ends (then nil).
func (r retryingResumer) Resume(ctx context.Context, newReporter func(channel, threadTS string) recovery.Reporter) error {
	delay := r.base
	for attempt := 1; ; attempt++ {
		err := r.inner.Resume(ctx, newReporter)
		if err == nil {
			if attempt > 1 {
				r.log.Info("resuming interrupted repairs succeeded after retrying", "cluster", r.cluster, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		r.log.Error("resuming interrupted repairs failed; retrying with back-off until it succeeds",
			"cluster", r.cluster, "attempt", attempt, "retry_in", delay.String(), "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, r.max)
	}
}
