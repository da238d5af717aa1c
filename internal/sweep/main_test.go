// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that every Sweeper stops all its goroutines (informers,
// worker, leader election, cron) when its context ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}
