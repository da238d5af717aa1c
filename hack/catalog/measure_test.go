// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

// TestCatalogueAloneOnCrashLogs measures how many of the crash logs of
// internal/diagnose/testdata/crashlogs the catalogue alone (templates and
// the origin mapping, no hand-written pattern) gives the expected class, and
// fails if that falls below the floor measured when it was written.
func TestCatalogueAloneOnCrashLogs(t *testing.T) {
	c, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	res, err := measure(c, "../../internal/diagnose/testdata/crashlogs")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		t.Log(r)
	}
	t.Logf("%d logs: %d with an error or exception line matched by a template; %d with a class from the catalogue's templates alone, %d with the right class; %d right with ClassFor on unmatched exceptions too",
		res.Logs, res.AnyTemplate, res.Matched, res.Right, res.RightWithClassFor)
	if res.Logs < 80 {
		t.Fatalf("only %d logs read", res.Logs)
	}
	const floor = 0.75 // 66/82 (80%) when written
	if got := float64(res.Right) / float64(res.Logs); got < floor {
		t.Errorf("catalogue alone right on %.0f%% of the logs, below the floor %.0f%%", 100*got, 100*floor)
	}
}
