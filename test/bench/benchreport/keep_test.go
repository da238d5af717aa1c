// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKeptSectionSurvivesARewrite: the hand-written real-node section of
// docs/BENCHMARKS.md is carried over when the report is regenerated.
func TestKeptSectionSurvivesARewrite(t *testing.T) {
	for _, tc := range []struct{ name, old, want string }{
		{"no file", "", ""},
		{"no section", "# Benchmarks\n\n## 6. Bot memory\n\ntext\n", ""},
		{"section", "# Benchmarks\n\n## 6. Bot memory\n\ntext\n\n## Real node\n\nnumbers\n", "\n## Real node\n\nnumbers\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := keptSection(path); got != tc.want {
				t.Errorf("keptSection = %q, want %q", got, tc.want)
			}
		})
	}
}
