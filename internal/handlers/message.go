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

// decide removes the buttons and records who decided, with a status line.
func (m *parentMessage) decide(decision, status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []slack.Block
	for _, b := range m.blocks {
		if b.BlockType() == slack.MBTAction || b.ID() == slackview.BlockDecision || b.ID() == slackview.BlockStatus {
			continue
		}
		out = append(out, b)
	}
	out = append(out, slack.NewContextBlock(slackview.BlockDecision, slackview.Mrkdwn(slackview.Truncate(decision, slackview.MaxSectionText))), slackview.StatusLine(status))
	m.blocks = slackview.CapBlocks(out)
	m.version++
}

// setStatus replaces the status line.
func (m *parentMessage) setStatus(status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	replaced := false
	for i, b := range m.blocks {
		if b.ID() == slackview.BlockStatus {
			m.blocks[i] = slackview.StatusLine(status)
			replaced = true
		}
	}
	if !replaced {
		m.blocks = slackview.CapBlocks(append(m.blocks, slackview.StatusLine(status)))
	}
	m.version++
}

// snapshot returns the current blocks and their version.
func (m *parentMessage) snapshot() ([]slack.Block, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.blocks), m.version
}
