// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"slices"
	"sync"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// MessageKey names message (channel, ts): the key of its live copy and of
// its thread's ordered queue (Poster.Enqueue).
func MessageKey(channel, ts string) string { return channel + "/" + ts }

// Message is the live copy of one posted message: its blocks as Slack
// stored them, rewritten as alerts resolve and repairs progress, so that
// neither undoes the other. It is safe for concurrent use.
type Message struct {
	Channel string
	TS      string

	mu      sync.Mutex
	blocks  []slack.Block
	version int
}

// Rewrite replaces the blocks with fn's result (fn gets the current ones
// and may keep them).
func (m *Message) Rewrite(fn func(blocks []slack.Block) []slack.Block) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blocks = fn(m.blocks)
	m.version++
}

// Replace sets the message's blocks.
func (m *Message) Replace(blocks []slack.Block) {
	m.Rewrite(func([]slack.Block) []slack.Block { return slices.Clone(blocks) })
}

// SetStatus replaces the status line (slackview.WithStatus).
func (m *Message) SetStatus(status string) {
	m.Rewrite(func(blocks []slack.Block) []slack.Block { return slackview.WithStatus(blocks, status) })
}

// Snapshot returns the current blocks and their version.
func (m *Message) Snapshot() ([]slack.Block, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.blocks), m.version
}

// Messages is a bounded cache of live message copies, by channel and ts.
type Messages struct {
	lru *LRU[string, *Message]
}

// NewMessages returns a cache of at most size messages.
func NewMessages(size int) *Messages {
	return &Messages{lru: NewLRU[string, *Message](size)}
}

// Get returns the live copy of message (channel, ts), starting it with
// blocks when the cache has none (a message this process never saw has
// none: pass nil).
func (c *Messages) Get(channel, ts string, blocks []slack.Block) *Message {
	m, _ := c.lru.AddIfAbsent(MessageKey(channel, ts), &Message{Channel: channel, TS: ts, blocks: slices.Clone(blocks)})
	return m
}

// Track returns the live copy of message (channel, ts), set to blocks
// (what Slack stored, which a click carried).
func (c *Messages) Track(channel, ts string, blocks []slack.Block) *Message {
	m, added := c.lru.AddIfAbsent(MessageKey(channel, ts), &Message{Channel: channel, TS: ts, blocks: slices.Clone(blocks)})
	if !added {
		m.Replace(blocks)
	}
	return m
}
