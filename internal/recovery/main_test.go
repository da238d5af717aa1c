// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"os"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestMain lets the Lease tests start a real API server (testenv), which
// is stopped after the package's tests.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m))
}
