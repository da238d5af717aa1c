// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// The Slack side of issue 9: the WebSocket drops or is recycled, the Web
// API rate-limits and errs, apps.connections.open fails for a while, and
// the tokens are wrong. Each test checks that nothing is lost, nothing is
// done twice, and the bot never runs deaf or mute.

// pausingRepairer reports its steps and stops after step pauseAfter until
// resume is closed, so a test can break Slack in the middle of a repair.
type pausingRepairer struct {
	steps      []string
	pauseAfter int
	paused     chan struct{}
	resume     chan struct{}
	calls      atomic.Int32
}

func newPausingRepairer(steps []string, pauseAfter int) *pausingRepairer {
	return &pausingRepairer{steps: steps, pauseAfter: pauseAfter, paused: make(chan struct{}), resume: make(chan struct{})}
}

func (r *pausingRepairer) Repair(ctx context.Context, _ recovery.Request, rep recovery.Reporter) recovery.Summary {
	r.calls.Add(1)
	for i, s := range r.steps {
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepStarted})
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepDone})
		if i+1 == r.pauseAfter {
			close(r.paused)
			<-r.resume
		}
	}
	sum := recovery.Summary{Outcome: recovery.OutcomeRepaired, Text: "broker Ready"}
	rep.Finish(ctx, sum)
	return sum
}

var faultSteps = []string{"Step one", "Step two", "Step three", "Step four", "Step five", "Step six"}

// assertRepairThread checks that the thread holds exactly the details, one
// checklist and the outcome, and that the checklist lists every step done,
// each once, in order.
func assertRepairThread(t *testing.T, h *harness, m slackemu.Message, steps []string) {
	t.Helper()
	thread := h.emu.Thread(channel, m.TS)
	got := threadTexts(thread)
	if len(got) != 3 || !strings.Contains(got[0], "Details") || !strings.Contains(got[2], "Repair succeeded") {
		t.Errorf("thread (%d messages) is not details, checklist, outcome:\n%s", len(got), strings.Join(got, "\n---\n"))
		return
	}
	checklist := blockTexts(t, thread[1].Blocks)
	at := 0
	for _, s := range steps {
		if n := strings.Count(checklist, s); n != 1 {
			t.Errorf("step %q appears %d times in the checklist:\n%s", s, n, checklist)
			continue
		}
		i := strings.Index(checklist, "✅ "+s)
		if i < at {
			t.Errorf("step %q not done, or out of order, in the checklist:\n%s", s, checklist)
		}
		at = i
	}
}

// TestFaultSocketClosedMidRepair drops the WebSocket (no close frame) in
// the middle of a repair and sends a command while the bot is offline.
// The repair carries on; after the reconnect the thread holds every step
// in order, none lost, none twice; the command sent during the outage is
// delivered on the new connection and answered once.
func TestFaultSocketClosedMidRepair(t *testing.T) {
	t.Parallel()
	r := newPausingRepairer(faultSteps, 3)
	h := startBot(t, func(o *Options) { o.Clusters[0].Repairer = r })
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	<-r.paused

	opened := h.emu.ConnectionsOpened()
	h.emu.DropConnections()
	during, err := h.emu.SendSlashCommand(h.ctx(), slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "help"})
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("a reconnection", func() bool { return h.emu.ConnectionsOpened() > opened })
	close(r.resume)
	h.waitRepairDone(m)

	assertRepairThread(t, h, m, faultSteps)
	ack, err := h.emu.WaitAck(h.ctx(), during)
	if err != nil {
		t.Fatalf("the command sent while the socket was down was never acked: %v", err)
	}
	if !strings.Contains(string(ack.Payload), "Usage") {
		t.Errorf("the command sent during the outage got %s", ack.Payload)
	}
	if n := r.calls.Load(); n != 1 {
		t.Errorf("repair ran %d times", n)
	}
	if n := len(h.emu.Messages(channel)); n != 1 {
		t.Errorf("%d channel messages, want the diagnosis only", n)
	}
	h.noAckFailures()
}

// TestFaultSocketDisconnectReasons plays Slack's disconnect messages
// (warning then refresh_requested, as Slack sends before recycling a
// connection; too_many_websockets) with a command in flight each time: the
// bot reconnects, keeps exactly one socket, and answers every command once.
func TestFaultSocketDisconnectReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reasons []string
	}{
		{"warning then refresh_requested", []string{"warning", "refresh_requested"}},
		{"too_many_websockets", []string{"too_many_websockets"}},
		{"refresh_requested three times", []string{"refresh_requested", "refresh_requested", "refresh_requested"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startBot(t, nil)
			for i, reason := range tc.reasons {
				opened := h.emu.ConnectionsOpened()
				h.emu.Disconnect(reason)
				id, err := h.emu.SendSlashCommand(h.ctx(), slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "diagnose broker-0"})
				if err != nil {
					t.Fatal(err)
				}
				h.waitFor("a reconnection after "+reason, func() bool { return h.emu.ConnectionsOpened() > opened })
				if _, err := h.emu.WaitAck(h.ctx(), id); err != nil {
					t.Fatalf("command sent with %q never acked: %v", reason, err)
				}
				h.waitFor("the diagnosis after "+reason, func() bool { return len(h.emu.Messages(channel)) == i+1 })
			}
			h.eventually("the bot to be connected", h.bot.Connected)
			h.waitFor("the old sockets to close", func() bool { return h.emu.OpenConnections() == 1 })
			if _, snaps := h.cluster.counts(); snaps != len(tc.reasons) {
				t.Errorf("%d diagnoses for %d commands", snaps, len(tc.reasons))
			}
			h.noAckFailures()
		})
	}
}

// everyThird429 answers every third chat.* Web API call with HTTP 429 and
// Retry-After: 1, as Slack's per-method rate limit does under load.
type everyThird429 struct {
	next    http.RoundTripper
	calls   atomic.Int32
	limited atomic.Int32
}

func (e *everyThird429) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.Contains(req.URL.Path, "/api/chat.") {
		return e.next.RoundTrip(req)
	}
	if e.calls.Add(1)%3 != 0 {
		return e.next.RoundTrip(req)
	}
	e.limited.Add(1)
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Retry-After": {"1"}, "Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(`{"ok":false,"error":"ratelimited"}`)),
		Request: req,
	}, nil
}

// TestFaultWebAPIRateLimitedEveryThirdCall runs a diagnosis and a repair
// while every third chat.* call is refused with 429 Retry-After: 1: the
// bot waits and retries, the diagnosis is posted once, and the thread
// holds every step in order, none lost, none twice.
func TestFaultWebAPIRateLimitedEveryThirdCall(t *testing.T) {
	t.Parallel()
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	limiter := &everyThird429{next: base}
	steps := faultSteps
	r := newPausingRepairer(steps, 0)
	h := startBot(t, func(o *Options) {
		o.HTTPClient = &http.Client{Transport: limiter, Timeout: 30 * time.Second}
		o.Clusters[0].Repairer = r
	})
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	h.waitRepairDone(m)
	assertRepairThread(t, h, m, steps)
	if n := len(h.emu.Messages(channel)); n != 1 {
		t.Errorf("%d channel messages, want the diagnosis once", n)
	}
	// A repair now makes few calls (edits coalesce), so two 429s suffice.
	if n := limiter.limited.Load(); n < 2 {
		t.Errorf("only %d calls were rate limited; the test did not exercise the limit", n)
	}
	// A 429 answered just as the thread became complete may be logged a
	// moment later: wait (bounded) until every one is.
	logged := func() bool {
		return strings.Count(h.logs.String(), "retrying after Retry-After") == int(limiter.limited.Load())
	}
	if err := h.emu.WaitFor(h.ctx(), logged); err != nil || !logged() {
		t.Errorf("%d rate-limit retries logged for %d 429s", strings.Count(h.logs.String(), "retrying after Retry-After"), limiter.limited.Load())
	}
}

// TestFaultWebAPIServerErrors makes the Web API answer 500, 502 and 503: a
// few in a row are retried (the diagnosis and every thread message arrive,
// in order, once); when chat.postMessage keeps failing the user who asked
// is told, in an ephemeral message, instead of hearing nothing.
func TestFaultWebAPIServerErrors(t *testing.T) {
	t.Parallel()
	for _, status := range []int{500, 502, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			steps := faultSteps[:2]
			r := newPausingRepairer(steps, 0)
			h := startBot(t, func(o *Options) { o.Clusters[0].Repairer = r })
			h.emu.InjectFault("chat.postMessage", slackemu.Fault{Status: status, Times: 2})
			m := h.diagnose()
			if n := len(h.emu.Messages(channel)); n != 1 {
				t.Fatalf("%d diagnosis messages after %d errors, want 1", n, status)
			}
			h.emu.InjectFault("chat.postMessage", slackemu.Fault{Status: status, Times: 1})
			h.emu.InjectFault("chat.update", slackemu.Fault{Status: status, Times: 1})
			h.click(m, slackview.ActionApprove, approver)
			h.waitRepairDone(m)
			assertRepairThread(t, h, m, steps)

			// An outage of chat.postMessage: the requester is told.
			h.emu.InjectFault("chat.postMessage", slackemu.Fault{Status: status, Times: 100})
			h.slash(requester, channel, "diagnose broker-0")
			e := h.ephemeral(channel, requester, "could not post")
			if !strings.Contains(e.Text, fmt.Sprint(status)) {
				t.Errorf("the ephemeral does not say what Slack answered: %q", e.Text)
			}
			if n := len(h.emu.Messages(channel)); n != 1 {
				t.Errorf("%d channel messages, want 1", n)
			}
		})
	}
}

// TestFaultConnectionsOpenFailing makes apps.connections.open fail for a
// while (ok:false internal_error, then HTTP 503, then 429 Retry-After)
// after the socket drops: the bot keeps trying with backoff, reconnects,
// and the command sent during the outage is answered once.
func TestFaultConnectionsOpenFailing(t *testing.T) {
	t.Parallel()
	h := startBot(t, nil)
	h.emu.InjectFault("apps.connections.open", slackemu.Fault{Error: "internal_error", Times: 3})
	h.emu.InjectFault("apps.connections.open", slackemu.Fault{Status: 503, Times: 2})
	h.emu.InjectFault("apps.connections.open", slackemu.Fault{Status: 429, RetryAfter: 1})
	opensBefore := h.emu.Calls("apps.connections.open")
	opened := h.emu.ConnectionsOpened()
	h.emu.DropConnections()
	id, err := h.emu.SendSlashCommand(h.ctx(), slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "diagnose broker-0"})
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("a reconnection", func() bool { return h.emu.ConnectionsOpened() > opened })
	if n := h.emu.Calls("apps.connections.open") - opensBefore; n != 7 {
		t.Errorf("apps.connections.open called %d times, want 6 failures and a success", n)
	}
	if _, err := h.emu.WaitAck(h.ctx(), id); err != nil {
		t.Fatalf("the command sent during the outage was lost: %v", err)
	}
	h.waitFor("the diagnosis", func() bool { return len(h.emu.Messages(channel)) == 1 })
	h.eventually("the bot to be connected", h.bot.Connected)
	if !strings.Contains(h.logs.String(), "slack connection failed; retrying") {
		t.Error("the failed connection attempts were not logged")
	}
	h.noAckFailures()
}

// TestFaultInvalidTokens starts the bot with a wrong app-level token, a
// wrong bot token, or a revoked one: Run returns at once with an error that
// wraps ErrFatalConnection, names the token that was refused and Slack's
// error code, and never contains the token itself; the bot never reports
// itself connected (it never runs deaf or mute).
func TestFaultInvalidTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		appToken, botToken string
		revokeBot          bool
		want               []string
	}{
		{name: "wrong app-level token", appToken: "xapp-placeholder-wrong-app-token", botToken: slackemu.DefaultBotToken,
			want: []string{"invalid_auth", "SLACK_APP_TOKEN"}},
		{name: "wrong bot token", appToken: slackemu.DefaultAppToken, botToken: "xoxb-placeholder-wrong-bot-token",
			want: []string{"invalid_auth", "SLACK_BOT_TOKEN"}},
		{name: "both wrong", appToken: "xapp-placeholder-wrong-app-token", botToken: "xoxb-placeholder-wrong-bot-token",
			want: []string{"invalid_auth"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			emu, err := slackemu.New(slackemu.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer emu.Close()
			logs := &logging.Buffer{}
			bot, err := New(Options{AppToken: tc.appToken, BotToken: tc.botToken, APIURL: emu.APIURL(),
				ApprovalSecret: testSecret, Clusters: []ClusterOptions{{Reader: newFakeCluster(t)}}, Diagnoser: seedDiagnoser{},
				Logger: newJSONLogger(logs)})
			if err != nil {
				t.Fatal(err)
			}
			var everConnected atomic.Bool
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
						if bot.Connected() {
							everConnected.Store(true)
						}
						time.Sleep(time.Millisecond)
					}
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			err = bot.Run(ctx)
			close(stop)
			wg.Wait()
			if !errors.Is(err, ErrFatalConnection) {
				t.Fatalf("Run = %v, want an ErrFatalConnection", err)
			}
			if ctx.Err() != nil {
				t.Fatal("Run only returned when the test's deadline passed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Run's error %q lacks %q", err, w)
				}
			}
			for _, secret := range []string{tc.appToken, tc.botToken} {
				if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
					t.Errorf("a token appears in the error or the log")
				}
			}
			if everConnected.Load() && tc.appToken != slackemu.DefaultAppToken {
				t.Error("the bot reported itself connected with a refused app token")
			}
			if n := emu.Calls("chat.postMessage"); n != 0 {
				t.Errorf("%d messages attempted by a bot that cannot authenticate", n)
			}
		})
	}
}

// TestFaultHostileCommandsChangeNothing types commands with shell
// metacharacters, path traversal, unicode look-alikes, a 10 KB argument, a
// namespace the bot may not read: each gets a clear ephemeral answer, an
// audit log line with who typed it, and no cluster lookup beyond the
// namespace check, no channel message.
func TestFaultHostileCommandsChangeNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
		// lookup: the text is well formed, so the cluster is asked (and
		// says no); the parser refuses everything else before any lookup.
		lookup bool
	}{
		{name: "shell metacharacters", text: "diagnose broker-0;reboot", want: "not a valid pod name"},
		{name: "shell command line", text: "diagnose broker-0;rm -rf /", want: "unknown option"},
		{name: "redirection", text: "diagnose broker-0>/etc/passwd", want: "not a valid"},
		{name: "command substitution", text: "diagnose $(reboot)", want: "not a valid pod name"},
		{name: "backticks and pipes", text: "diagnose `id`|sh", want: "not a valid pod name"},
		{name: "path traversal", text: "diagnose ../../etc/passwd", want: "not a valid"},
		{name: "traversal in the namespace", text: "diagnose -n .. broker-0", want: "not a valid namespace"},
		{name: "cyrillic look-alike", text: "diagnose br\u043eker-0", want: "not a valid pod name"},
		{name: "fullwidth look-alike", text: "diagnose \uff42roker-0", want: "not a valid pod name"},
		{name: "zero-width joiner", text: "diagnose broker\u200d-0", want: "not a valid pod name"},
		{name: "10 KB argument", text: "diagnose " + strings.Repeat("a", 10<<10), want: "too long"},
		{name: "mention injection", text: "diagnose <!channel>", want: "not a valid pod name"},
		{name: "namespace outside KAFKA_NAMESPACES", text: "diagnose -n kube-system broker-0", want: "no Kafka pod", lookup: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startBot(t, nil)
			_, ack := h.slash(stranger, channel, tc.text)
			var reply string
			if !tc.lookup {
				reply = string(ack.Payload)
				if !strings.Contains(reply, `"ephemeral"`) {
					t.Errorf("the refusal is not ephemeral: %s", reply)
				}
			} else {
				reply = h.ephemeral(channel, stranger, "⚠️").Text
			}
			if !strings.Contains(reply, tc.want) || !strings.Contains(reply, "⚠️") {
				t.Errorf("reply %q lacks %q", reply, tc.want)
			}
			if len(reply) > 4000 {
				t.Errorf("reply is %d bytes: it echoes the input", len(reply))
			}
			finds, snaps := h.cluster.counts()
			if snaps != 0 || (!tc.lookup && finds != 0) {
				t.Errorf("cluster asked: %d lookups, %d snapshots", finds, snaps)
			}
			if n := len(h.emu.Messages(channel)); n != 0 {
				t.Errorf("%d channel messages", n)
			}
			if !auditLineFor(h.logs.String(), stranger) {
				t.Errorf("no audit line naming %s:\n%s", stranger, h.logs.String())
			}
		})
	}
}

// auditLineFor reports whether a JSON log line marked audit names user.
func auditLineFor(logs, user string) bool {
	return slices.ContainsFunc(strings.Split(logs, "\n"), func(l string) bool {
		return strings.Contains(l, `"audit":true`) && strings.Contains(l, `"user":"`+user+`"`)
	})
}

func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
