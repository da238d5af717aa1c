// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitTimeout bounds WaitFor. It is an upper bound for things that happen
// within milliseconds on a healthy machine, not a performance expectation.
const WaitTimeout = 30 * time.Second

// WaitFor polls cond until it reports true, failing the test with what
// when cond returns an error or WaitTimeout passes.
func WaitFor(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, err
	})
	if err != nil {
		if last != nil {
			t.Fatalf("waiting for %s: %v", what, last)
		}
		t.Fatalf("waiting for %s: gave up after %s", what, WaitTimeout)
	}
}
