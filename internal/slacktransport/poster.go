// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// API is the part of slack-go's Web API client the bot uses: its whole Web
// API surface (the Slack app manifest's scopes are checked against it).
// *slack.Client and *socketmode.Client satisfy it.
type API interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
	PostEphemeralContext(ctx context.Context, channelID, userID string, options ...slack.MsgOption) (string, error)
	SendMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, string, error)
}

// Retry bounds for rate-limited calls.
const (
	maxAPIAttempts = 5
	maxRetryAfter  = 2 * time.Minute
)

// Slack error codes the Poster reacts to.
const (
	errNotInChannel     = "not_in_channel"
	errChannelNotFound  = "channel_not_found"
	errInvalidBlocks    = "invalid_blocks"
	errInvalidBlocksFmt = "invalid_blocks_format"
	errMsgBlocksTooLong = "msg_blocks_too_long"
	errMsgTooLong       = "msg_too_long"
	errIsArchived       = "is_archived"
	MaxPlainText        = 3900
)

// Poster makes the bot's Web API calls: it retries rate-limited calls after
// Slack's Retry-After, falls back to plain text when Slack rejects blocks,
// logs every failure with a hint for the operator, and runs the posts of
// one thread strictly in order.
type Poster struct {
	api  API
	log  *slog.Logger
	base context.Context // the bot's lifetime; queued work stops with it
	wg   *sync.WaitGroup // tracks queue goroutines
	// sleep waits for d or until ctx ends; replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	queues map[string]*threadQueue
}

// NewPoster returns a Poster calling api. base is the bot's lifetime: queued
// jobs run with it and stop with it; wg tracks the queues' goroutines.
func NewPoster(base context.Context, api API, log *slog.Logger, wg *sync.WaitGroup) *Poster {
	return &Poster{api: api, log: log, base: base, wg: wg, sleep: sleepCtx, queues: map[string]*threadQueue{}}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serverErrorBackoff is the first wait after a 5xx answer; it doubles with
// every further attempt.
const serverErrorBackoff = 500 * time.Millisecond

// call runs fn, retrying after Slack's Retry-After while it is rate limited,
// and with a doubling backoff after a 5xx answer (Slack's transient
// failures; a retried post may rarely show twice, where giving up would
// lose it).
func (p *Poster) call(ctx context.Context, method, channel string, fn func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		var rl *slack.RateLimitedError
		var sc slack.StatusCodeError
		if attempt < maxAPIAttempts && errors.As(err, &sc) && sc.Code >= 500 {
			wait := serverErrorBackoff << (attempt - 1)
			p.log.Warn("slack answered with a server error; retrying",
				"method", method, "channel", channel, "status", sc.Code, "retry_in", wait, "attempt", attempt)
			if err := p.sleep(ctx, wait); err != nil {
				return fmt.Errorf("%s in %s: waiting to retry after a server error: %w", method, channel, err)
			}
			continue
		}
		if !errors.As(err, &rl) || attempt == maxAPIAttempts {
			return err
		}
		wait := min(max(rl.RetryAfter, time.Second), maxRetryAfter)
		p.log.Warn("slack rate limited the bot; retrying after Retry-After",
			"method", method, "channel", channel, "retry_after", wait, "attempt", attempt)
		if err := p.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s in %s: waiting out a rate limit: %w", method, channel, err)
		}
	}
}

// Post posts a message (in a thread when threadTS is set; extra options
// such as slack.MsgOptionBroadcast apply too). When Slack rejects the
// blocks it posts the fallback as plain text instead.
func (p *Poster) Post(ctx context.Context, channel, threadTS string, blocks []slack.Block, fallback string, extra ...slack.MsgOption) (string, error) {
	opts := append([]slack.MsgOption{slack.MsgOptionText(fallback, false), slack.MsgOptionDisableLinkUnfurl()}, extra...)
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	var ts string
	send := func(opts []slack.MsgOption) error {
		return p.call(ctx, "chat.postMessage", channel, func(ctx context.Context) (err error) {
			_, ts, err = p.api.PostMessageContext(ctx, channel, opts...)
			return err
		})
	}
	err := send(append(opts, slack.MsgOptionBlocks(blocks...)))
	if err == nil {
		return ts, nil
	}
	p.logAPIError("chat.postMessage", channel, err)
	if !blocksRejected(err) || len(blocks) == 0 {
		return "", fmt.Errorf("posting to %s: %w", channel, err)
	}
	// The blocks broke a Slack rule we did not foresee: say it in plain text.
	text := slackview.Truncate(fallback+"\n(The formatted message was rejected by Slack; this is the plain-text version.)", MaxPlainText)
	opts[0] = slack.MsgOptionText(text, false)
	if err := send(opts); err != nil {
		p.logAPIError("chat.postMessage", channel, err)
		return "", fmt.Errorf("posting plain-text fallback to %s: %w", channel, err)
	}
	return ts, nil
}

// Update replaces a message's blocks; on msg_too_long it retries with a
// shorter fallback text, on rejected blocks it keeps the old blocks and
// updates nothing (the thread still carries the news).
func (p *Poster) Update(ctx context.Context, channel, ts string, blocks []slack.Block, fallback string) error {
	send := func(text string) error {
		return p.call(ctx, "chat.update", channel, func(ctx context.Context) error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, channel, ts,
				slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
			return err
		})
	}
	err := send(fallback)
	if err != nil && ErrorCode(err) == errMsgTooLong {
		p.logAPIError("chat.update", channel, err)
		err = send(slackview.Truncate(fallback, 1000))
	}
	if err != nil {
		p.logAPIError("chat.update", channel, err)
		return fmt.Errorf("updating message %s in %s: %w", ts, channel, err)
	}
	return nil
}

// Ephemeral shows text (and blocks, when given) to one user. When the bot
// cannot post in the channel it falls back to the command's response_url,
// which works without channel membership.
func (p *Poster) Ephemeral(ctx context.Context, channel, user, responseURL, text string, blocks ...slack.Block) error {
	text = slackview.Truncate(text, MaxPlainText)
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	err := p.call(ctx, "chat.postEphemeral", channel, func(ctx context.Context) error {
		_, err := p.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err == nil {
		return nil
	}
	p.logAPIError("chat.postEphemeral", channel, err)
	if responseURL == "" {
		return fmt.Errorf("telling %s in %s: %w", user, channel, err)
	}
	err = p.call(ctx, "response_url", channel, func(ctx context.Context) error {
		_, _, _, err := p.api.SendMessageContext(ctx, channel,
			append([]slack.MsgOption{slack.MsgOptionResponseURL(responseURL, slack.ResponseTypeEphemeral)}, opts...)...)
		return hideURL(err, responseURL)
	})
	if err != nil {
		p.logAPIError("response_url", channel, err)
		return fmt.Errorf("telling %s in %s via response_url: %w", user, channel, err)
	}
	return nil
}

// logAPIError writes one useful line per failed call: the Slack error code,
// what it usually means, and Slack's own details for rejected blocks.
func (p *Poster) logAPIError(method, channel string, err error) {
	code := ErrorCode(err)
	label := code
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &rl):
		label = "ratelimited"
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		label = "canceled"
	case label == "":
		label = "transport"
	}
	metrics.SlackAPIErrors.WithLabelValues(method, label).Inc()
	attrs := []any{"method", method, "channel", channel, "error", err}
	if code != "" {
		attrs = append(attrs, "slack_error", code)
	}
	if hint := errorHint(code); hint != "" {
		attrs = append(attrs, "hint", hint)
	}
	var ser slack.SlackErrorResponse
	if errors.As(err, &ser) {
		if msgs := ser.ResponseMetadata.Messages; len(msgs) > 0 {
			attrs = append(attrs, "details", strings.Join(msgs, "; "))
		}
	}
	p.log.Error("slack web API call failed", attrs...)
}

func errorHint(code string) string {
	switch code {
	case errNotInChannel:
		return "the bot is not a member of this channel: /invite it, or grant the chat:write.public scope"
	case errChannelNotFound:
		return "the channel does not exist or is private and the bot was not invited"
	case errInvalidBlocks, errInvalidBlocksFmt, errMsgBlocksTooLong:
		return "Slack rejected the message's blocks; a plain-text version is posted instead"
	case errMsgTooLong:
		return "message text over 4000 characters; retrying with a shorter text"
	case errIsArchived:
		return "the channel is archived"
	case "invalid_auth", "not_authed", "token_revoked", "account_inactive":
		return "the bot token (SLACK_BOT_TOKEN) is not valid"
	case "missing_scope":
		return "the Slack app lacks a scope: see deploy/slack-app-manifest.yaml"
	}
	return ""
}

// ErrorCode returns Slack's error code for an ok:false response, or "".
func ErrorCode(err error) string {
	var ser slack.SlackErrorResponse
	if errors.As(err, &ser) {
		return ser.Err
	}
	var pser *slack.SlackErrorResponse
	if errors.As(err, &pser) && pser != nil {
		return pser.Err
	}
	return ""
}

func blocksRejected(err error) bool {
	switch ErrorCode(err) {
	case errInvalidBlocks, errInvalidBlocksFmt, errMsgBlocksTooLong:
		return true
	}
	return false
}

// CannotPostHere reports whether err says the bot cannot post in the
// channel at all (not a member, no such channel, archived).
func CannotPostHere(err error) bool {
	switch ErrorCode(err) {
	case errNotInChannel, errChannelNotFound, errIsArchived:
		return true
	}
	return false
}

// threadQueue runs the jobs of one thread one after another, in the order
// they were enqueued. Its goroutine exists only while jobs are pending.
type threadQueue struct {
	jobs    []func(ctx context.Context)
	running bool
}

// Enqueue adds job to the queue of key (a channel and thread) and returns a
// channel closed when the job has run.
func (p *Poster) Enqueue(key string, job func(ctx context.Context)) <-chan struct{} {
	done := make(chan struct{})
	wrapped := func(ctx context.Context) {
		defer close(done)
		job(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q, ok := p.queues[key]
	if !ok {
		q = &threadQueue{}
		p.queues[key] = q
	}
	q.jobs = append(q.jobs, wrapped)
	if !q.running {
		q.running = true
		p.wg.Add(1)
		go p.drain(key, q)
	}
	return done
}

func (p *Poster) drain(key string, q *threadQueue) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			delete(p.queues, key)
			p.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs = q.jobs[1:]
		p.mu.Unlock()
		job(p.base)
	}
}

// hideURL keeps a response_url (a short-lived credential to post as the
// app) out of error messages and logs.
func hideURL(err error, secretURL string) error {
	if err == nil || secretURL == "" || !strings.Contains(err.Error(), secretURL) {
		return err
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl
	}
	return errors.New(strings.ReplaceAll(err.Error(), secretURL, "<response_url>"))
}
