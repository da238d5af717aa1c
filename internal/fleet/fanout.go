// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Asking is how a call goes to clusters through their breakers.
type Asking struct {
	// Timeout bounds each cluster's answer (0: only ctx does).
	Timeout time.Duration
	// Answered reports whether an error still means the cluster answered
	// (no such pod, several): the call then counts as a success. Nil: no
	// error does.
	Answered func(error) bool
	// Reason says a failure shortly, for "cannot be reached (…)" and the
	// breaker (default: the error's first line).
	Reason func(error) string
}

// Outcome is one cluster's answer to a call.
type Outcome[T any] struct {
	Val T
	Err error
	// Unreachable is set when the cluster was not asked (its breaker is
	// open), did not answer within the timeout, failed in a way that does
	// not count as an answer, or the caller gave up; it says why, shortly.
	Unreachable string
}

// reason is a failure said shortly.
func (a Asking) reason(err error) string {
	if a.Reason != nil {
		return a.Reason(err)
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	return first
}

// Call asks one cluster, whose breaker is b: fn runs with ctx bounded by
// the timeout, and Call returns when fn does or the timeout ends, whichever
// comes first. The verdict goes to b: an answer closes it, a failure or a
// timeout opens it, and a call whose caller gave up (ctx ended) leaves it
// as it was. Call does not ask b.Allow: a command that names its cluster
// asks it even while its breaker is open (Each skips it).
func Call[T any](ctx context.Context, a Asking, b *Breaker, fn func(ctx context.Context) (T, error)) Outcome[T] {
	cctx, cancel := context.WithCancel(ctx)
	if a.Timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, a.Timeout)
	}
	defer cancel()
	res := make(chan Outcome[T], 1)
	go func() {
		v, err := fn(cctx)
		res <- Outcome[T]{Val: v, Err: err}
	}()
	var r Outcome[T]
	got := false
	select {
	case r = <-res:
		got = true
	case <-cctx.Done():
	}
	switch {
	case got && (r.Err == nil || a.Answered != nil && a.Answered(r.Err)):
		b.Success()
	case ctx.Err() != nil: // the caller gave up: not the cluster's fault
		b.Abandon()
		if !got {
			r = Outcome[T]{Err: ctx.Err(), Unreachable: "the request was cancelled"}
		}
	case cctx.Err() != nil: // the timeout ended first (fn may have seen it end)
		reason := fmt.Sprintf("no answer within %s", a.Timeout)
		b.Failure(reason)
		r = Outcome[T]{Err: errors.New(reason), Unreachable: reason}
	default:
		r.Unreachable = a.reason(r.Err)
		b.Failure(r.Unreachable)
	}
	return r
}

// Each asks every cluster at once, cluster i through breakers[i] and
// fn(ctx, i), each as Call does, skipping those whose breaker is open, and
// returns the outcomes in cluster order. It returns after at most the
// timeout (plus scheduling), whatever the clusters do.
func Each[T any](ctx context.Context, a Asking, breakers []*Breaker, fn func(ctx context.Context, i int) (T, error)) []Outcome[T] {
	out := make([]Outcome[T], len(breakers))
	var wg sync.WaitGroup
	for i, b := range breakers {
		if ok, reason := b.Allow(); !ok {
			out[i].Unreachable = reason
			continue
		}
		wg.Go(func() {
			out[i] = Call(ctx, a, b, func(ctx context.Context) (T, error) { return fn(ctx, i) })
		})
	}
	wg.Wait()
	return out
}
