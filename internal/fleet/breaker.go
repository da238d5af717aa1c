// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"sync"
	"time"
)

// DefaultBreakerPeriod is how long a cluster that failed or timed out is
// skipped by short-name lookups and /kafka status before it is tried again.
const DefaultBreakerPeriod = 30 * time.Second

// Breaker is one cluster's circuit breaker. A call that failed or timed
// out opens it for a period; while open, Allow says no (with the reason of
// the failure), so a hanging cluster costs at most one timeout per period
// instead of one per command. When the period is over, exactly one call
// (the probe) is let through; the others keep being refused until it
// reports. Success closes the breaker.
//
// The zero Breaker is closed and uses DefaultBreakerPeriod and time.Now.
// The nil *Breaker never opens and records nothing: a bot serving one
// cluster has no other cluster to answer instead, so it does not skip it.
type Breaker struct {
	// Period is how long the breaker stays open (default DefaultBreakerPeriod).
	Period time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu        sync.Mutex
	openUntil time.Time // zero: closed
	probing   bool      // a probe was let through and has not reported
	reason    string    // why it opened (the last failure), for people
}

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Allow reports whether a call may go to the cluster now; when it may not,
// reason says why the cluster is considered unreachable. A caller that is
// allowed must report with Success, Failure or Abandon.
func (b *Breaker) Allow() (ok bool, reason string) {
	if b == nil {
		return true, ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true, ""
	}
	if b.probing || b.now().Before(b.openUntil) {
		return false, b.reason
	}
	b.probing = true
	return true, ""
}

// Success closes the breaker.
func (b *Breaker) Success() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.openUntil, b.probing, b.reason = time.Time{}, false, ""
}

// Failure opens the breaker for a period, remembering reason.
func (b *Breaker) Failure(reason string) {
	if b == nil {
		return
	}
	period := b.Period
	if period <= 0 {
		period = DefaultBreakerPeriod
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.openUntil, b.probing, b.reason = b.now().Add(period), false, reason
}

// Abandon ends a call that gave no verdict (its caller gave up first):
// the breaker stays as it was, and a probe that was let through may be
// tried again by the next call.
func (b *Breaker) Abandon() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
}

// State reports whether the breaker is open and why.
func (b *Breaker) State() (open bool, reason string) {
	if b == nil {
		return false, ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openUntil.IsZero(), b.reason
}
