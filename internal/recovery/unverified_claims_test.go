// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/config"
)

// unverifiedClaim is README's bound on how long a running Lease whose
// record does not verify blocks its broker and cluster.
var unverifiedClaim = regexp.MustCompile("`(\\d+) × REPAIR_TIMEOUT \\+ REPAIR_SETTLE \\+ (\\d+)m` \\((\\d+) minutes by default")

// TestUnverifiedLeaseBoundIsTheREADMEs keeps README's "at most
// `8 × REPAIR_TIMEOUT + REPAIR_SETTLE + 2m` (84 minutes by default)" true:
// the formula gives unverifiedBound for several settings, and the number of
// minutes is what it gives for config's defaults. TestContainment5_*
// show the Lease blocks until that bound and is taken over after it.
func TestUnverifiedLeaseBoundIsTheREADMEs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := unverifiedClaim.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md no longer states the bound as %q", unverifiedClaim)
	}
	atoi := func(b []byte) int {
		n, err := strconv.Atoi(string(b))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	timeouts, slack, byDefault := atoi(m[1]), time.Duration(atoi(m[2]))*time.Minute, time.Duration(atoi(m[3]))*time.Minute
	readmeBound := func(timeout, settle time.Duration) time.Duration {
		return time.Duration(timeouts)*timeout + settle + slack
	}

	for _, k := range []string{"REPAIR_TIMEOUT", "REPAIR_SETTLE"} {
		t.Setenv(k, "")
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
	defaults, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name            string
		timeout, settle time.Duration
	}{
		{"config's defaults", defaults.RepairTimeout, defaults.RepairSettle},
		{"short timeout, no settle", time.Minute, 0},
		{"long timeout and settle", 30 * time.Minute, 10 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := (&repairLock{timeout: c.timeout, settle: c.settle}).unverifiedBound()
			if want := readmeBound(c.timeout, c.settle); got != want {
				t.Errorf("unverifiedBound(timeout %v, settle %v) = %v; README's formula gives %v", c.timeout, c.settle, got, want)
			}
		})
	}
	if got := (&repairLock{timeout: defaults.RepairTimeout, settle: defaults.RepairSettle}).unverifiedBound(); got != byDefault {
		t.Errorf("with config's defaults the bound is %v; README says %v", got, byDefault)
	}
}
