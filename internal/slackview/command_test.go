// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"strings"
	"testing"
	"time"
)

func TestQueueFull(t *testing.T) {
	for _, tc := range []struct {
		retry time.Duration
		want  string
	}{
		{0, "about 5 seconds"},
		{4200 * time.Millisecond, "about 5 seconds"},
		{61 * time.Second, "about 61 seconds"},
	} {
		if got := QueueFull(256, tc.retry); !strings.Contains(got, tc.want) || !strings.Contains(got, "256 requests") {
			t.Errorf("QueueFull(256, %v) = %q, want %q", tc.retry, got, tc.want)
		}
	}
}
