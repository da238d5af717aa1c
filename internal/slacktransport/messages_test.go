// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// TestMessages: Get starts a copy only when there is none, Track sets it
// to what a click carried, and every rewrite bumps the version, so alert
// resolutions and repair progress rewrite one copy.
func TestMessages(t *testing.T) {
	first := []slack.Block{slackview.Section("a", "first")}
	clicked := []slack.Block{slackview.Section("b", "clicked")}
	c := NewMessages(4)
	m := c.Get("C1", "1.1", first)
	if again := c.Get("C1", "1.1", nil); again != m {
		t.Fatal("Get started a second copy of one message")
	}
	if blocks, v := m.Snapshot(); len(blocks) != 1 || blocks[0].ID() != "a" || v != 0 {
		t.Fatalf("Get kept %d blocks, version %d", len(blocks), v)
	}
	if c.Track("C1", "1.1", clicked) != m {
		t.Fatal("Track started a second copy of one message")
	}
	m.SetStatus("⏳ repairing")
	blocks, v := m.Snapshot()
	if blocks[0].ID() != "b" || v != 2 {
		t.Errorf("after Track and SetStatus: first block %q, version %d; want b, 2", blocks[0].ID(), v)
	}
	if MessageKey("C1", "1.1") != "C1/1.1" {
		t.Errorf("MessageKey = %q", MessageKey("C1", "1.1"))
	}
}
