// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Message is a message as the emulator stores it.
type Message struct {
	Channel string
	TS      string
	// ThreadTS is the parent's ts for a thread reply, empty for a top-level message.
	ThreadTS string
	// User is the author: the bot user for messages the app posted.
	User string
	Text string
	// Blocks is the message's Block Kit JSON array, nil when it has none.
	Blocks json.RawMessage
	// Updated counts the chat.update (or replace_original) calls that changed the message.
	Updated int
	// Ephemeral marks a message only ForUser can see (chat.postEphemeral, slash-command responses).
	Ephemeral bool
	ForUser   string
	// Broadcast marks a thread reply that was also posted to the channel (reply_broadcast).
	Broadcast bool
}

func (m *Message) clone() Message {
	c := *m
	if m.Blocks != nil {
		c.Blocks = append(json.RawMessage(nil), m.Blocks...)
	}
	return c
}

type messageKey struct{ channel, ts string }

// messageStore holds every message by channel. Guarded by Server.mu.
type messageStore struct {
	byKey      map[messageKey]*Message
	channel    map[string][]*Message     // what the channel shows: top-level messages and broadcast replies
	threads    map[messageKey][]*Message // replies by parent
	ephemerals map[string][]*Message     // by channel
}

func newMessageStore() messageStore {
	return messageStore{
		byKey:      map[messageKey]*Message{},
		channel:    map[string][]*Message{},
		threads:    map[messageKey][]*Message{},
		ephemerals: map[string][]*Message{},
	}
}

func (st *messageStore) add(m *Message) {
	if m.Ephemeral {
		st.ephemerals[m.Channel] = append(st.ephemerals[m.Channel], m)
		return
	}
	st.byKey[messageKey{m.Channel, m.TS}] = m
	if m.ThreadTS != "" {
		parent := messageKey{m.Channel, m.ThreadTS}
		st.threads[parent] = append(st.threads[parent], m)
	}
	if m.ThreadTS == "" || m.Broadcast {
		st.channel[m.Channel] = append(st.channel[m.Channel], m)
	}
}

func (st *messageStore) get(channel, ts string) (*Message, bool) {
	m, ok := st.byKey[messageKey{channel, ts}]
	return m, ok
}

func (st *messageStore) remove(m *Message) {
	delete(st.byKey, messageKey{m.Channel, m.TS})
	without := func(list []*Message) []*Message {
		out := list[:0:0]
		for _, o := range list {
			if o != m {
				out = append(out, o)
			}
		}
		return out
	}
	st.channel[m.Channel] = without(st.channel[m.Channel])
	if m.ThreadTS != "" {
		parent := messageKey{m.Channel, m.ThreadTS}
		st.threads[parent] = without(st.threads[parent])
	}
}

// threadParent is the ts a reply to ts belongs under: replying to a reply joins its parent's thread.
func (st *messageStore) threadParent(channel, ts string) string {
	if m, ok := st.get(channel, ts); ok && m.ThreadTS != "" {
		return m.ThreadTS
	}
	return ts
}

func clones(list []*Message) []Message {
	out := make([]Message, 0, len(list))
	for _, m := range list {
		out = append(out, m.clone())
	}
	return out
}

// tsClock issues message timestamps in Slack's "seconds.microseconds" format, strictly increasing.
// Guarded by Server.mu.
type tsClock struct{ last int64 }

func (c *tsClock) next() string {
	now := time.Now().UnixMicro()
	if now <= c.last {
		now = c.last + 1
	}
	c.last = now
	return fmt.Sprintf("%d.%06d", now/1_000_000, now%1_000_000)
}

// channelDirectory knows channel names and the channels marked missing or without the bot.
// Guarded by Server.mu.
type channelDirectory struct {
	names     map[string]string
	missing   map[string]bool
	notInside map[string]bool
	userNames map[string]string
}

func newChannelDirectory() channelDirectory {
	return channelDirectory{
		names:     map[string]string{},
		missing:   map[string]bool{},
		notInside: map[string]bool{},
		userNames: map[string]string{},
	}
}

// exists reports whether channel is a known conversation id: C (public), G (private) or D (DM).
func (d *channelDirectory) exists(channel string) bool {
	if channel == "" || d.missing[channel] {
		return false
	}
	return strings.ContainsRune("CGD", rune(channel[0]))
}

func (d *channelDirectory) name(channel string) string {
	if n, ok := d.names[channel]; ok {
		return n
	}
	return strings.ToLower(channel)
}

func (d *channelDirectory) userName(user string) string {
	if n, ok := d.userNames[user]; ok {
		return n
	}
	return strings.ToLower(user)
}

// SetChannelMissing makes the channel unknown: Web API calls on it answer channel_not_found.
func (s *Server) SetChannelMissing(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels.missing[channel] = true
}

// SetNotInChannel makes the bot a non-member of the channel: posting there answers not_in_channel.
func (s *Server) SetNotInChannel(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels.notInside[channel] = true
}

// RestoreChannel undoes SetChannelMissing and SetNotInChannel: the channel exists again and the
// bot is a member of it.
func (s *Server) RestoreChannel(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.channels.missing, channel)
	delete(s.channels.notInside, channel)
}

// SetChannelName sets the name payloads and conversations.info show for a channel (by default the
// lower-cased id, or the name of the last slash command sent from it).
func (s *Server) SetChannelName(channel, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels.names[channel] = name
}

// PostUserMessage stores a message written by a human user (which the bot cannot chat.update) and returns
// its ts. threadTS may be empty.
func (s *Server) PostUserMessage(channel, threadTS, user, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Channel: channel, User: user, Text: text, TS: s.clock.next()}
	if threadTS != "" {
		m.ThreadTS = s.store.threadParent(channel, threadTS)
	}
	s.store.add(m)
	s.notifyLocked()
	return m.TS
}

// Messages returns what the channel shows, oldest first: top-level messages and broadcast replies (thread
// replies are under Thread).
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clones(s.store.channel[channel])
}

// Thread returns the replies to the message ts, oldest first.
func (s *Server) Thread(channel, ts string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return clones(s.store.threads[messageKey{channel, ts}])
}

// Message returns the stored (non-ephemeral) message channel/ts, top-level or reply.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.store.get(channel, ts)
	if !ok {
		return Message{}, false
	}
	return m.clone(), true
}

// Ephemerals returns the ephemeral messages shown to user in channel, oldest first: chat.postEphemeral
// calls and slash-command responses (ack payloads and response_url posts) that were not "in_channel".
func (s *Server) Ephemerals(channel, user string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.store.ephemerals[channel] {
		if m.ForUser == user {
			out = append(out, m.clone())
		}
	}
	return out
}
