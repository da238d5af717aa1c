// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package repairthread

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
)

// recordingAPI records the Web API calls the reporter makes, as
// "post channel thread" and "update channel ts".
type recordingAPI struct {
	mu    sync.Mutex
	calls []string
	posts int
}

func (a *recordingAPI) PostMessageContext(_ context.Context, channel string, opts ...slack.MsgOption) (string, string, error) {
	_, values, err := slack.UnsafeApplyMsgOptions("", channel, "", opts...)
	if err != nil {
		return "", "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.posts++
	a.calls = append(a.calls, "post "+channel+" "+values.Get("thread_ts"))
	return channel, fmt.Sprintf("reply%d", a.posts), nil
}

func (a *recordingAPI) UpdateMessageContext(_ context.Context, channel, ts string, _ ...slack.MsgOption) (string, string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, "update "+channel+" "+ts)
	return channel, ts, "", nil
}

func (a *recordingAPI) PostEphemeralContext(context.Context, string, string, ...slack.MsgOption) (string, error) {
	return "", nil
}

func (a *recordingAPI) SendMessageContext(context.Context, string, ...slack.MsgOption) (string, string, string, error) {
	return "", "", "", nil
}

func (a *recordingAPI) recorded() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// statusMessage is a parent Message counting its status changes.
type statusMessage struct {
	mu       sync.Mutex
	statuses []string
}

func (m *statusMessage) SetStatus(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statuses = append(m.statuses, s)
}

func (m *statusMessage) Snapshot() ([]slack.Block, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return nil, len(m.statuses)
}

// TestReporterPostsInTheThreadInOrder runs one repair's reports through a
// reporter and checks what reached Slack: a repair approved from a message
// rewrites that message's status; a resumed one only posts in the thread.
func TestReporterPostsInTheThreadInOrder(t *testing.T) {
	for _, tc := range []struct {
		name         string
		resumed      bool
		want         []string
		wantStatuses int // status changes of the parent message
	}{
		{name: "approved", want: []string{
			"post C1 100.1",                       // Begin: the checklist reply
			"update C1 reply1",                    // Planned
			"update C1 reply1", "update C1 100.1", // started: checklist, status
			"update C1 reply1", "update C1 100.1", // done: checklist, status
			"update C1 reply1", "post C1 100.1", "update C1 100.1", // Finish: checklist, outcome, status
		}, wantStatuses: 3},
		{name: "resumed", resumed: true, want: []string{
			"post C1 100.1", // Planned: the checklist reply
			"update C1 reply1",
			"update C1 reply1",
			"update C1 reply1", "post C1 100.1", // Finish: checklist, outcome
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer wg.Wait() // the poster's goroutines, after cancel
			defer cancel()
			api := &recordingAPI{}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			p := slacktransport.NewPoster(ctx, api, log, &wg)
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			clock := func() time.Time { return now }
			parent := &statusMessage{}
			var r *Reporter
			if tc.resumed {
				r = NewResumed(p, "C1", "100.1", "resumed", log, clock)
			} else {
				r = New(p, "C1", "100.1", parent, "kafka-0", log, clock)
				r.Begin("approved")
			}
			r.Planned(ctx, []string{"restart"})
			r.Wait(ctx)
			r.Report(ctx, recovery.Progress{Step: "restart", Status: recovery.StepStarted})
			r.Wait(ctx)
			r.Report(ctx, recovery.Progress{Step: "restart", Status: recovery.StepDone})
			r.Wait(ctx)
			r.Finish(ctx, recovery.Summary{Outcome: recovery.OutcomeRepaired, Text: "repaired"})
			if got := r.key(); got != "C1/100.1" {
				t.Errorf("queue key = %q", got)
			}
			if got := len(parent.statuses); got != tc.wantStatuses {
				t.Errorf("parent status changes = %d %q, want %d", got, parent.statuses, tc.wantStatuses)
			}
			if got := api.recorded(); !slices.Equal(got, tc.want) {
				t.Errorf("Slack calls:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
