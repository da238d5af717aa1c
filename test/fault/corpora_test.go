// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package fault holds cross-package checks of the fault-tolerance and
// hostile-input suite (issue 9). The fault tests themselves live beside
// the code they break: internal/handlers/*_fault_test.go (Slack side,
// hostile commands, secrets), internal/recovery/*_fault_test.go
// (Kubernetes side, bot killed at every step), and the fuzz targets'
// corpora under each package's testdata/fuzz.
package fault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzCorporaCheckedIn makes sure every hostile-input fuzz target keeps
// a checked-in corpus that `go test` replays: each directory exists, holds
// at least the given number of entries, and every entry is in the Go fuzz
// corpus format (a file Go cannot parse fails the package's tests, and an
// emptied directory would silently stop replaying the hostile cases).
func TestFuzzCorporaCheckedIn(t *testing.T) {
	tests := []struct {
		dir string
		min int
	}{
		{"internal/command/testdata/fuzz/FuzzParse", 15},
		{"internal/handlers/testdata/fuzz/FuzzInteractionPayload", 10},
		{"internal/approval/testdata/fuzz/FuzzVerify", 10},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			dir := filepath.Join("..", "..", tc.dir)
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatalf("corpus missing: %v", err)
			}
			if len(entries) < tc.min {
				t.Errorf("%d corpus entries, want at least %d", len(entries), tc.min)
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(b), "go test fuzz v1\n") {
					t.Errorf("%s is not a Go fuzz corpus file", e.Name())
				}
			}
			t.Logf("%s: %d entries", tc.dir, len(entries))
		})
	}
}
