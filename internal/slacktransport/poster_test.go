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
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/slack-go/slack"
)

// scriptedAPI answers each Web API call with the next scripted error.
type scriptedAPI struct {
	mu     sync.Mutex
	errs   []error
	posts  []string // "channel/thread: text" of successful posts
	calls  int
	update int
}

func (a *scriptedAPI) next() error {
	a.calls++
	if len(a.errs) == 0 {
		return nil
	}
	err := a.errs[0]
	a.errs = a.errs[1:]
	return err
}

func (a *scriptedAPI) PostMessageContext(_ context.Context, ch string, opts ...slack.MsgOption) (string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.next(); err != nil {
		return "", "", err
	}
	_, vals, _ := slack.UnsafeApplyMsgOptions("", ch, "", opts...)
	a.posts = append(a.posts, fmt.Sprintf("%s/%s: %s blocks=%t", ch, vals.Get("thread_ts"), vals.Get("text"), vals.Get("blocks") != "" && vals.Get("blocks") != "[]"))
	return ch, fmt.Sprintf("%d.000100", len(a.posts)), nil
}

func (a *scriptedAPI) UpdateMessageContext(context.Context, string, string, ...slack.MsgOption) (string, string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.update++
	return "", "", "", a.next()
}

func (a *scriptedAPI) PostEphemeralContext(context.Context, string, string, ...slack.MsgOption) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return "", a.next()
}

func (a *scriptedAPI) SendMessageContext(context.Context, string, ...slack.MsgOption) (string, string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return "", "", "", a.next()
}

func newTestPoster(t *testing.T, api API) (*Poster, *[]time.Duration) {
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	p := NewPoster(t.Context(), api, slog.New(slog.DiscardHandler), &wg)
	var waits []time.Duration
	p.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return p, &waits
}

func TestPosterRetriesRateLimits(t *testing.T) {
	rl := func(d time.Duration) error { return &slack.RateLimitedError{RetryAfter: d} }
	tests := []struct {
		name      string
		errs      []error
		wantErr   bool
		wantWaits []time.Duration
	}{
		{"no error", nil, false, nil},
		{"one 429", []error{rl(3 * time.Second)}, false, []time.Duration{3 * time.Second}},
		{"zero Retry-After waits a second", []error{rl(0)}, false, []time.Duration{time.Second}},
		{"huge Retry-After is capped", []error{rl(time.Hour)}, false, []time.Duration{maxRetryAfter}},
		{"gives up after max attempts", []error{rl(time.Second), rl(time.Second), rl(time.Second), rl(time.Second), rl(time.Second)},
			true, []time.Duration{time.Second, time.Second, time.Second, time.Second}},
		{"other errors are not retried", []error{slack.SlackErrorResponse{Err: "channel_not_found"}}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &scriptedAPI{errs: tt.errs}
			p, waits := newTestPoster(t, api)
			_, err := p.Post(t.Context(), "C1", "", nil, "hello")
			if (err != nil) != tt.wantErr {
				t.Fatalf("post error = %v, want error %v", err, tt.wantErr)
			}
			if fmt.Sprint(*waits) != fmt.Sprint(tt.wantWaits) {
				t.Errorf("waited %v, want %v", *waits, tt.wantWaits)
			}
		})
	}
}

func TestPosterFallsBackToPlainText(t *testing.T) {
	for _, code := range []string{errInvalidBlocks, errInvalidBlocksFmt, errMsgBlocksTooLong} {
		api := &scriptedAPI{errs: []error{slack.SlackErrorResponse{Err: code}}}
		p, _ := newTestPoster(t, api)
		ts, err := p.Post(t.Context(), "C1", "", []slack.Block{slackview.Section("x", "hi")}, "fallback text")
		if err != nil || ts == "" {
			t.Fatalf("%s: post = %q, %v", code, ts, err)
		}
		if len(api.posts) != 1 || api.posts[0] != "C1/: fallback text\n(The formatted message was rejected by Slack; this is the plain-text version.) blocks=false" {
			t.Errorf("%s: posts %q", code, api.posts)
		}
	}
}

func TestPosterUpdateShortensOnMsgTooLong(t *testing.T) {
	api := &scriptedAPI{errs: []error{slack.SlackErrorResponse{Err: errMsgTooLong}}}
	p, _ := newTestPoster(t, api)
	if err := p.Update(t.Context(), "C1", "1.1", nil, string(make([]byte, 5000))); err != nil {
		t.Fatal(err)
	}
	if api.update != 2 {
		t.Errorf("%d chat.update calls, want 2", api.update)
	}
}

func TestThreadQueueKeepsOrderAcrossRetries(t *testing.T) {
	api := &scriptedAPI{errs: []error{&slack.RateLimitedError{RetryAfter: time.Second}}}
	p, _ := newTestPoster(t, api)
	var last <-chan struct{}
	for i := range 20 {
		key := "C1/1.1"
		if i%2 == 1 {
			key = "C1/2.2" // another thread interleaves
		}
		thread := key[3:]
		last = p.Enqueue(key, func(ctx context.Context) {
			if _, err := p.Post(ctx, "C1", thread, nil, fmt.Sprintf("msg %02d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	<-last
	p.wg.Wait()
	var t1, t2 []string
	for _, s := range api.posts {
		if s[:6] == "C1/1.1" {
			t1 = append(t1, s)
		} else {
			t2 = append(t2, s)
		}
	}
	for i := 1; i < len(t1); i++ {
		if t1[i] < t1[i-1] {
			t.Fatalf("thread 1.1 out of order: %q", t1)
		}
	}
	for i := 1; i < len(t2); i++ {
		if t2[i] < t2[i-1] {
			t.Fatalf("thread 2.2 out of order: %q", t2)
		}
	}
	if len(t1)+len(t2) != 20 {
		t.Errorf("%d posts, want 20", len(t1)+len(t2))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queues) != 0 {
		t.Errorf("%d idle queues kept", len(p.queues))
	}
}

func TestSlackErrorCode(t *testing.T) {
	wrapped := fmt.Errorf("posting: %w", slack.SlackErrorResponse{Err: errNotInChannel})
	if got := ErrorCode(wrapped); got != errNotInChannel || !CannotPostHere(wrapped) {
		t.Errorf("ErrorCode = %q", got)
	}
	if got := ErrorCode(errors.New("boom")); got != "" {
		t.Errorf("ErrorCode(plain) = %q", got)
	}
}

func TestHideURL(t *testing.T) {
	const secret = "https://hooks.slack.com/commands/T1/2/s3cr3t"
	err := hideURL(fmt.Errorf("Post %q: context canceled", secret), secret)
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "<response_url>") {
		t.Errorf("hideURL = %v", err)
	}
	var rl *slack.RateLimitedError
	if !errors.As(hideURL(&slack.RateLimitedError{RetryAfter: time.Second}, secret), &rl) {
		t.Error("a rate limit lost its type")
	}
}
