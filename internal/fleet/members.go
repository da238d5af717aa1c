// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"context"
	"fmt"
	"time"
)

// Members are the Kubernetes clusters one bot serves, in order and by
// name (M is the bot's view of one): whether there are several, which one
// a command, token or record names, and asking them through their
// breakers. A bot serving one cluster has a list of one, whose name may be
// empty, no breaker (no other cluster can answer instead) and the caller's
// time; with several, names are valid and unique, each cluster has a
// breaker and each answer is bounded by the lookup timeout.
type Members[M any] struct {
	list     []M
	byName   map[string]int
	breakers []*Breaker
	timeout  time.Duration
	reason   func(error) string
}

// NewMembers lists list, named by name. With several, lookupTimeout bounds
// each cluster's answer to AskEach and AskOne, and a cluster that failed
// or timed out is skipped by AskEach for breakerPeriod (0: the default)
// by the clock now (nil: time.Now); reason says a failure shortly (nil:
// its first line).
func NewMembers[M any](list []M, name func(M) string, lookupTimeout, breakerPeriod time.Duration, now func() time.Time, reason func(error) string) (*Members[M], error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("no clusters")
	}
	f := &Members[M]{list: list, byName: map[string]int{}, breakers: make([]*Breaker, len(list)), reason: reason}
	for i, m := range list {
		n := name(m)
		if len(list) > 1 {
			if err := ValidName(n); err != nil {
				return nil, fmt.Errorf("cluster %d: name %q: %w", i, n, err)
			}
			f.breakers[i] = &Breaker{Period: breakerPeriod, Now: now}
			f.timeout = lookupTimeout
		}
		if _, dup := f.byName[n]; dup {
			return nil, fmt.Errorf("cluster %q is listed twice", n)
		}
		f.byName[n] = i
	}
	return f, nil
}

// All returns the clusters in order.
func (f *Members[M]) All() []M { return f.list }

// Several reports whether there is more than one cluster.
func (f *Members[M]) Several() bool { return len(f.list) > 1 }

// Exact returns the cluster called name.
func (f *Members[M]) Exact(name string) (M, bool) {
	i, ok := f.byName[name]
	if !ok {
		var zero M
		return zero, false
	}
	return f.list[i], true
}

// Named returns the cluster a token or record names. An empty name (one
// signed by a bot without cluster names) means the only cluster of a bot
// serving one, and is refused by a bot serving several: it cannot say
// which cluster it was meant for.
func (f *Members[M]) Named(name string) (M, bool) {
	if m, ok := f.Exact(name); ok {
		return m, true
	}
	if name == "" && len(f.list) == 1 {
		return f.list[0], true
	}
	var zero M
	return zero, false
}

// asking is how the members are asked; answered says whether an error
// still means the cluster answered.
func (f *Members[M]) asking(answered func(error) bool) Asking {
	return Asking{Timeout: f.timeout, Answered: answered, Reason: f.reason}
}

// Answer is one cluster's outcome of AskEach.
type Answer[M, T any] struct {
	Member M
	Outcome[T]
}

// AskEach asks every cluster at once (Each), skipping those whose breaker
// is open, and returns the answers in cluster order; answered says whether
// an error still means the cluster answered (it then counts as reachable).
func AskEach[M, T any](ctx context.Context, f *Members[M], fn func(ctx context.Context, m M) (T, error), answered func(error) bool) []Answer[M, T] {
	outcomes := Each(ctx, f.asking(answered), f.breakers, func(ctx context.Context, i int) (T, error) {
		return fn(ctx, f.list[i])
	})
	out := make([]Answer[M, T], len(outcomes))
	for i, o := range outcomes {
		out[i] = Answer[M, T]{Member: f.list[i], Outcome: o}
	}
	return out
}

// AskOne asks the cluster called name (Call), even while its breaker is
// open: a command that names its cluster asks it.
func AskOne[M, T any](ctx context.Context, f *Members[M], name string, fn func(ctx context.Context) (T, error), answered func(error) bool) Outcome[T] {
	var b *Breaker
	if i, ok := f.byName[name]; ok {
		b = f.breakers[i]
	}
	return Call(ctx, f.asking(answered), b, fn)
}
