// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"
)

// Envelope types, as in the "type" field of a Socket Mode envelope.
const (
	envelopeSlashCommands = "slash_commands"
	envelopeInteractive   = "interactive"
	envelopeEventsAPI     = "events_api"
)

// maxAutoRetries is how often Options.RedeliverUnacked retries an envelope (Slack retries events 3 times).
const maxAutoRetries = 3

// Ack is an acknowledgement the app sent for an envelope.
type Ack struct {
	EnvelopeID string
	// Payload is the ack's "payload" field as sent (nil when absent).
	Payload json.RawMessage
	// Latency is the time from writing the envelope to the socket (not from SendX, since an envelope may
	// wait for a connection) to reading its ack.
	Latency time.Duration
	// Late is true when the ack came after the ack deadline.
	Late bool
}

// envelope is one Slack-to-app delivery and the state of its current attempt. Guarded by Server.mu.
type envelope struct {
	id                     string
	kind                   string
	payload                json.RawMessage
	acceptsResponsePayload bool
	retryAttempt           int
	retryReason            string
	// invoker is where a slash command's response payload is shown (channel and user).
	invoker *responseTarget

	queued  bool      // waiting in the pending queue or in a connection's outbox
	sentAt  time.Time // when the current attempt was written; zero before that
	timer   *time.Timer
	acked   bool
	ack     Ack
	failure *ackFailure // the failure recorded for the current attempt, if any
}

// envelopeFrame is the JSON of an envelope on the wire, keys in the order Slack's examples use.
type envelopeFrame struct {
	EnvelopeID             string          `json:"envelope_id"`
	Payload                json.RawMessage `json:"payload"`
	Type                   string          `json:"type"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           *int            `json:"retry_attempt,omitempty"`
	RetryReason            *string         `json:"retry_reason,omitempty"`
}

func (e *envelope) frame() []byte {
	f := envelopeFrame{
		EnvelopeID:             e.id,
		Payload:                e.payload,
		Type:                   e.kind,
		AcceptsResponsePayload: e.acceptsResponsePayload,
	}
	// events_api envelopes always carry the retry fields; others only when retried.
	if e.kind == envelopeEventsAPI || e.retryAttempt > 0 {
		f.RetryAttempt, f.RetryReason = &e.retryAttempt, &e.retryReason
	}
	return mustJSON(f)
}

// ackFailure is one late or missing ack, or an unusable frame from the app.
type ackFailure struct {
	envelopeID string
	kind       string
	attempt    int
	deadline   time.Duration
	lateBy     time.Duration // > 0 once a late ack arrived
	detail     string        // set for frames that are not acks of a known envelope
}

func (f ackFailure) String() string {
	switch {
	case f.detail != "":
		return f.detail
	case f.lateBy > 0:
		return fmt.Sprintf("envelope %s (%s, attempt %d): acknowledged %s after the %s deadline",
			f.envelopeID, f.kind, f.attempt, f.lateBy.Round(time.Millisecond), f.deadline)
	default:
		return fmt.Sprintf("envelope %s (%s, attempt %d): not acknowledged within %s",
			f.envelopeID, f.kind, f.attempt, f.deadline)
	}
}

// envelopeTracker holds every envelope sent, the ones waiting for a connection, and the ack failures.
// Guarded by Server.mu.
type envelopeTracker struct {
	byID     map[string]*envelope
	pending  []*envelope
	failures []*ackFailure
}

func newEnvelopeTracker() envelopeTracker {
	return envelopeTracker{byID: map[string]*envelope{}}
}

func (t *envelopeTracker) takePending() []*envelope {
	p := t.pending
	t.pending = nil
	return p
}

func (t *envelopeTracker) pushFrontPending(env *envelope) {
	env.queued = true
	t.pending = append([]*envelope{env}, t.pending...)
}

func (t *envelopeTracker) stopTimers() {
	for _, env := range t.byID {
		if env.timer != nil {
			env.timer.Stop()
		}
	}
}

// send registers a new envelope and hands it to a connection (or queues it).
func (s *Server) send(ctx context.Context, env *envelope) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("sending %s envelope: %w", env.kind, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed
	}
	env.id = newUUID()
	s.envelopes.byID[env.id] = env
	s.dispatchLocked(env)
	s.opts.Logf("slackemu: %s envelope %s queued", env.kind, env.id)
	s.notifyLocked()
	return env.id, nil
}

// dispatchLocked puts env in the outbox of the target connection, or in the pending queue when there is
// none.
func (s *Server) dispatchLocked(env *envelope) {
	env.queued = true
	if c := s.sockets.target(); c != nil {
		c.outbox = append(c.outbox, outboundFrame{envelope: env})
		c.signal()
		return
	}
	s.envelopes.pending = append(s.envelopes.pending, env)
}

// flushPendingLocked hands queued envelopes to the target connection, if there is one.
func (s *Server) flushPendingLocked() {
	c := s.sockets.target()
	if c == nil || len(s.envelopes.pending) == 0 {
		return
	}
	for _, env := range s.envelopes.takePending() {
		c.outbox = append(c.outbox, outboundFrame{envelope: env})
	}
	c.signal()
}

// beginDeliveryLocked marks env as written now, starts its ack deadline and returns its frame.
func (s *Server) beginDeliveryLocked(env *envelope) []byte {
	env.queued = false
	env.sentAt = time.Now()
	attempt := env.retryAttempt
	if env.timer != nil {
		env.timer.Stop()
	}
	if !s.closed {
		env.timer = time.AfterFunc(s.opts.AckDeadline, func() { s.ackDeadlinePassed(env, attempt) })
	}
	return env.frame()
}

// undeliver takes back an envelope whose write to c failed, so that it goes out on the next connection.
func (s *Server) undeliver(c *socketConn, env *envelope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if env.timer != nil {
		env.timer.Stop()
	}
	env.sentAt = time.Time{}
	env.queued = true
	for _, o := range s.sockets.open {
		if o == c { // its read loop will requeue the outbox, this envelope first
			c.outbox = append([]outboundFrame{{envelope: env}}, c.outbox...)
			return
		}
	}
	s.envelopes.pushFrontPending(env)
	s.flushPendingLocked()
}

func (s *Server) ackDeadlinePassed(env *envelope, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || env.acked || env.retryAttempt != attempt || env.sentAt.IsZero() {
		return
	}
	f := &ackFailure{envelopeID: env.id, kind: env.kind, attempt: attempt, deadline: s.opts.AckDeadline}
	env.failure = f
	s.envelopes.failures = append(s.envelopes.failures, f)
	s.opts.Logf("slackemu: %s", f)
	if s.opts.RedeliverUnacked && env.retryAttempt < maxAutoRetries {
		s.redeliverLocked(env)
	}
	s.notifyLocked()
}

func (s *Server) redeliverLocked(env *envelope) {
	if env.timer != nil {
		env.timer.Stop()
	}
	env.retryAttempt++
	env.retryReason = "timeout"
	env.acked, env.ack, env.failure, env.sentAt = false, Ack{}, nil, time.Time{}
	if !env.queued {
		s.dispatchLocked(env)
	}
}

// Redeliver sends an envelope again with the same envelope_id, retry_attempt+1 and retry_reason
// "timeout", as Slack retries an envelope that was not acknowledged. WaitAck then waits for the new
// attempt's ack.
func (s *Server) Redeliver(ctx context.Context, envelopeID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redelivering envelope %s: %w", envelopeID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	env, ok := s.envelopes.byID[envelopeID]
	if !ok {
		return fmt.Errorf("redelivering envelope %s: no such envelope", envelopeID)
	}
	s.redeliverLocked(env)
	s.notifyLocked()
	return nil
}

// handleAck records an ack frame read from the app.
func (s *Server) handleAck(data []byte) {
	var frame struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(data, &frame); err != nil {
		s.recordFailure(ackFailure{detail: fmt.Sprintf("unreadable frame from the app: %v", err)})
		return
	}
	if frame.EnvelopeID == "" {
		s.recordFailure(ackFailure{detail: fmt.Sprintf("frame from the app without envelope_id: %.200s", data)})
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	env, ok := s.envelopes.byID[frame.EnvelopeID]
	if !ok {
		s.recordFailureLocked(ackFailure{detail: fmt.Sprintf("ack for unknown envelope_id %q", frame.EnvelopeID)})
		return
	}
	if env.acked || env.sentAt.IsZero() {
		s.opts.Logf("slackemu: ignoring a second ack of envelope %s", env.id)
		return
	}
	latency := now.Sub(env.sentAt)
	late := env.failure != nil || latency > s.opts.AckDeadline
	if env.timer != nil {
		env.timer.Stop()
	}
	env.acked = true
	env.ack = Ack{EnvelopeID: env.id, Payload: frame.Payload, Latency: latency, Late: late}
	if late {
		if env.failure == nil {
			env.failure = &ackFailure{envelopeID: env.id, kind: env.kind, attempt: env.retryAttempt,
				deadline: s.opts.AckDeadline}
			s.envelopes.failures = append(s.envelopes.failures, env.failure)
		}
		env.failure.lateBy = latency - s.opts.AckDeadline
		s.opts.Logf("slackemu: %s", env.failure)
	}
	if env.acceptsResponsePayload && env.invoker != nil && hasContent(frame.Payload) {
		s.showSlashResponseLocked(env, frame.Payload)
	}
	s.notifyLocked()
}

// hasContent reports whether an ack payload is more than absent, null or {}.
func hasContent(payload json.RawMessage) bool {
	p := bytes.TrimSpace(payload)
	return len(p) > 0 && !bytes.Equal(p, []byte("null")) && !bytes.Equal(p, []byte("{}"))
}

func (s *Server) recordFailure(f ackFailure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordFailureLocked(f)
}

func (s *Server) recordFailureLocked(f ackFailure) {
	s.envelopes.failures = append(s.envelopes.failures, &f)
	s.opts.Logf("slackemu: %s", f)
	s.notifyLocked()
}

// WaitAck waits for the ack of the envelope's current attempt and returns it (at once if it already came).
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (Ack, error) {
	var ack Ack
	var known bool
	err := s.WaitFor(ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		env, ok := s.envelopes.byID[envelopeID]
		known = ok
		if ok && env.acked {
			ack = env.ack
		}
		return !ok || env.acked
	})
	if err != nil {
		return Ack{}, fmt.Errorf("waiting for the ack of envelope %s: %w", envelopeID, err)
	}
	if !known {
		return Ack{}, fmt.Errorf("waiting for the ack of envelope %s: no such envelope", envelopeID)
	}
	return ack, nil
}

// AckFailures returns one line per envelope attempt whose ack was missing at the deadline or came late,
// and per frame from the app that was not an ack of a known envelope, in the order they happened.
func (s *Server) AckFailures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := make([]string, 0, len(s.envelopes.failures))
	for _, f := range s.envelopes.failures {
		lines = append(lines, f.String())
	}
	return lines
}

// newUUID returns a random (version 4) UUID, the format of Slack's envelope ids.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
