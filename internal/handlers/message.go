// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"slices"
	"sync"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/slack-go/slack"
)

// parentMessage is the diagnosis message whose buttons were clicked: its
// blocks as Slack stored them, rewritten as the repair progresses. It is
// safe for concurrent use.
type parentMessage struct {
	Channel string
	TS      string

	mu      sync.Mutex
	blocks  []slack.Block
	version int
}

func newParentMessage(channel, ts string, blocks []slack.Block) *parentMessage {
	return &parentMessage{Channel: channel, TS: ts, blocks: slices.Clone(blocks)}
}

// decide removes the buttons and records who decided, with a status line
// (slackview.Decided).
func (m *parentMessage) decide(decision, status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocks = slackview.Decided(m.blocks, decision, status)
	m.version++
}

// SetStatus replaces the status line.
func (m *parentMessage) SetStatus(status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocks = slackview.WithStatus(m.blocks, status)
	m.version++
}

// Snapshot returns the current blocks and their version.
func (m *parentMessage) Snapshot() ([]slack.Block, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.blocks), m.version
}
