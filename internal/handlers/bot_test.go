// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	channel   = "C0KAFKAOPS"
	otherChan = "C0RANDOM"
	requester = "U0REQUESTER"
	approver  = "U0APPROVER"
	stranger  = "U0STRANGER"
	waitLimit = 15 * time.Second
)

var testSecret = []byte("test-only-approval-secret-0123456789abcdef")

// harness is a bot connected over a real WebSocket to the Slack emulator,
// with a fake cluster and repairer.
type harness struct {
	t        testing.TB
	emu      *slackemu.Server
	bot      *Bot
	cluster  *fakeCluster
	repairer *fakeRepairer
	clock    *fakeClock
	logs     *logging.Buffer
}

func startBot(t testing.TB, mutate func(*Options)) *harness {
	t.Helper()
	emu, err := slackemu.New(slackemu.Options{PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, emu: emu, cluster: newFakeCluster(t), repairer: &fakeRepairer{},
		clock: &fakeClock{now: time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)}, logs: &logging.Buffer{}}
	opts := Options{
		AppToken: slackemu.DefaultAppToken, BotToken: slackemu.DefaultBotToken, APIURL: emu.APIURL(),
		ApprovalSecret: testSecret, ApprovalTTL: 30 * time.Minute, Approvers: []string{approver},
		Workers: 4, Clusters: []ClusterOptions{{Reader: h.cluster, Repairer: h.repairer}}, Diagnoser: seedDiagnoser{},
		// Most tests diagnose the same pod again and want a new message
		// each time; the sharing tests (coalesce_test.go) turn it on.
		ShareWindow:      -1,
		ApprovalChannels: []string{channel},
		Logger:           slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Clock:            h.clock.Now, PingInterval: 5 * time.Second,
	}
	if mutate != nil {
		mutate(&opts)
	}
	h.bot, err = New(opts)
	if err != nil {
		emu.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- h.bot.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-runErr; err != nil {
			t.Errorf("Run: %v", err)
		}
		emu.Close()
		if t.Failed() {
			t.Logf("bot log:\n%s", h.logs.String())
		}
	})
	h.eventually("the bot to connect", h.bot.Connected)
	return h
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	h.t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds (the bot's own state has no change
// notification); the limit only bounds a hung test.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitFor waits for a condition on the emulator's state.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	if err := h.emu.WaitFor(h.ctx(), cond); err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// slash types a /kafka command and returns its envelope and ack.
func (h *harness) slash(user, chan_, text string) (string, slackemu.Ack) {
	h.t.Helper()
	id, err := h.emu.SendSlashCommand(h.ctx(), slackemu.SlashCommand{ChannelID: chan_, UserID: user, Command: "/kafka", Text: text})
	if err != nil {
		h.t.Fatal(err)
	}
	ack, err := h.emu.WaitAck(h.ctx(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	if ack.Late {
		h.t.Errorf("ack of %q came late (%v)", text, ack.Latency)
	}
	return id, ack
}

// diagnose runs /kafka diagnose broker-0 and returns the posted message.
func (h *harness) diagnose() slackemu.Message {
	h.t.Helper()
	before := len(h.emu.Messages(channel))
	h.slash(requester, channel, "diagnose broker-0")
	h.waitFor("the diagnosis message", func() bool { return len(h.emu.Messages(channel)) > before })
	m := h.emu.Messages(channel)[before]
	// The details reply is posted with the message, before anyone could click.
	h.waitFor("the details reply", func() bool { return len(h.emu.Thread(channel, m.TS)) > 0 })
	return m
}

func (h *harness) click(m slackemu.Message, action, user string) {
	h.t.Helper()
	id, err := h.emu.SendClick(h.ctx(), slackemu.Click{ChannelID: m.Channel, UserID: user, MessageTS: m.TS, ActionID: action})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.emu.WaitAck(h.ctx(), id); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) clickRaw(c slackemu.Click) {
	h.t.Helper()
	id, err := h.emu.SendClickRaw(h.ctx(), c, slackview.BlockActions)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.emu.WaitAck(h.ctx(), id); err != nil {
		h.t.Fatal(err)
	}
}

// ephemeral waits for an ephemeral message to user in chan_ containing want.
func (h *harness) ephemeral(chan_, user, want string) slackemu.Message {
	h.t.Helper()
	var found slackemu.Message
	h.waitFor("an ephemeral reply containing "+want, func() bool {
		for _, m := range h.emu.Ephemerals(chan_, user) {
			if strings.Contains(m.Text, want) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

func (h *harness) message(m slackemu.Message) slackemu.Message {
	h.t.Helper()
	got, ok := h.emu.Message(m.Channel, m.TS)
	if !ok {
		h.t.Fatalf("message %s vanished", m.TS)
	}
	return got
}

func (h *harness) noAckFailures() {
	h.t.Helper()
	if f := h.emu.AckFailures(); len(f) > 0 {
		h.t.Errorf("ack failures:\n%s", strings.Join(f, "\n"))
	}
}

// waitRepairDone waits until the thread ends with the summary and the
// parent message shows the final status.
func (h *harness) waitRepairDone(m slackemu.Message) {
	h.t.Helper()
	h.waitFor("the repair summary and final status", func() bool {
		th := h.emu.Thread(channel, m.TS)
		return len(th) > 0 && strings.Contains(th[len(th)-1].Text, "Repair succeeded") &&
			strings.Contains(blockTexts(h.t, h.message(m).Blocks), "Repair succeeded")
	})
}

func threadTexts(msgs []slackemu.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

func TestDiagnoseShowsSummaryWithButtons(t *testing.T) {
	h := startBot(t, nil)
	_, ack := h.slash(requester, channel, "diagnose broker-0")
	var resp struct{ Text, ResponseType string }
	_ = json.Unmarshal(ack.Payload, &resp)
	if !strings.Contains(string(ack.Payload), "Diagnosing `broker-0`") || !strings.Contains(string(ack.Payload), `"ephemeral"`) {
		t.Errorf("ack payload %s", ack.Payload)
	}
	h.waitFor("the diagnosis", func() bool { return len(h.emu.Messages(channel)) == 1 })
	m := h.emu.Messages(channel)[0]
	if p := validateBlocksJSON(m.Blocks); len(p) > 0 {
		t.Errorf("posted blocks break limits:\n%s", strings.Join(p, "\n"))
	}
	text := blockTexts(t, m.Blocks)
	h.waitFor("the details reply", func() bool { return len(h.emu.Thread(channel, m.TS)) == 1 })
	text += blockTexts(t, h.emu.Thread(channel, m.TS)[0].Blocks)
	for _, want := range []string{"kafka/foobar-kafka-broker-0", "KRaft metadata log diverged", "*Restarts*\n37", seedPVC, seedNode} {
		if !strings.Contains(text, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	bs := buttons(t, m.Blocks)
	if bs[slackview.ActionApprove] == nil || bs[slackview.ActionReject] == nil {
		t.Fatalf("want both buttons, got %v", bs)
	}
	tok, _ := bs[slackview.ActionApprove]["value"].(string)
	a, err := approval.Verify(testSecret, tok, h.clock.Now())
	if err != nil {
		t.Fatalf("button token: %v", err)
	}
	if a.Pod != seedPod || a.PodUID != seedUID || a.Channel != channel || a.Requester != requester || a.Action != "move-metadata-log" {
		t.Errorf("token carries %+v", a)
	}
	h.noAckFailures()
}

func TestApproveRunsRepairInThread(t *testing.T) {
	h := startBot(t, nil)
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	h.waitRepairDone(m)
	got := h.message(m)
	if len(buttons(t, got.Blocks)) != 0 {
		t.Error("buttons still offered after approval")
	}
	text := blockTexts(t, got.Blocks)
	if !strings.Contains(text, "Approved by <@"+approver+">") || !strings.Contains(text, "Repair succeeded") {
		t.Errorf("parent message after repair:\n%s", text)
	}
	// The thread: the details (posted with the diagnosis), one checklist
	// edited in place, one outcome. Nothing else.
	thread := h.emu.Thread(channel, m.TS)
	th := threadTexts(thread)
	if len(th) != 3 {
		t.Fatalf("thread has %d messages, want 3 (details, checklist, outcome):\n%s", len(th), strings.Join(th, "\n---\n"))
	}
	if !strings.Contains(th[0], "Details of the diagnosis") || !strings.Contains(th[2], "Repair succeeded") {
		t.Errorf("thread %q", th)
	}
	checklist := blockTexts(t, thread[1].Blocks)
	if !strings.Contains(checklist, "<@"+approver+"> approved. Starting") {
		t.Errorf("checklist lacks who approved:\n%s", checklist)
	}
	for _, s := range fakeSteps {
		if !strings.Contains(checklist, "✅ "+s) {
			t.Errorf("checklist lacks %q done:\n%s", s, checklist)
		}
	}
	if strings.Contains(checklist, "⏳") {
		t.Errorf("a step is still running in the final checklist:\n%s", checklist)
	}
	if thread[1].Updated == 0 {
		t.Error("the checklist was never edited: each step posted anew?")
	}
	if thread[2].Broadcast {
		t.Error("a successful repair's outcome was broadcast to the channel")
	}
	reqs := h.repairer.calls()
	if len(reqs) != 1 {
		t.Fatalf("repairer called %d times", len(reqs))
	}
	r := reqs[0]
	if r.Approver != approver || r.Requester != requester || r.PodUID != seedUID || r.ThreadTS != m.TS || r.Channel != channel || r.ApprovalID == "" {
		t.Errorf("repair request %+v", r)
	}
	if !strings.Contains(h.logs.String(), `"event":"approval.approved"`) {
		t.Error("no audit line for the approval")
	}
	h.noAckFailures()
}

func TestRejectUpdatesMessage(t *testing.T) {
	h := startBot(t, nil)
	m := h.diagnose()
	h.click(m, slackview.ActionReject, approver)
	h.waitFor("the rejection", func() bool { return h.message(m).Updated > 0 })
	got := h.message(m)
	text := blockTexts(t, got.Blocks)
	if len(buttons(t, got.Blocks)) != 0 || !strings.Contains(text, "Rejected by <@"+approver+">") {
		t.Errorf("rejected message:\n%s", text)
	}
	h.waitFor("the thread note", func() bool { return len(h.emu.Thread(channel, m.TS)) == 2 })
	if n := len(h.repairer.calls()); n != 0 {
		t.Errorf("repairer called %d times after a rejection", n)
	}
}

func TestRefusedClicksChangeNothing(t *testing.T) {
	tests := []struct {
		name string
		// act clicks; it returns the user who must get the ephemeral answer and where.
		act  func(h *harness, m slackemu.Message, token string) (user, chan_ string)
		want string
		opts func(*Options)
	}{
		{"non-approver", func(h *harness, m slackemu.Message, _ string) (string, string) {
			h.click(m, slackview.ActionApprove, stranger)
			return stranger, channel
		}, "not allowed to approve", nil},
		{"requester approving own repair", func(h *harness, m slackemu.Message, _ string) (string, string) {
			h.click(m, slackview.ActionApprove, requester)
			return requester, channel
		}, "someone else has to approve", func(o *Options) {
			o.Approvers = append(o.Approvers, requester)
		}},
		{"stranger rejecting", func(h *harness, m slackemu.Message, _ string) (string, string) {
			h.click(m, slackview.ActionReject, stranger)
			return stranger, channel
		}, "Only approvers or the person who asked", nil},
		{"forged token", func(h *harness, m slackemu.Message, token string) (string, string) {
			part, sig, _ := strings.Cut(token, ".")
			forged := part[:len(part)-2] + "xx." + sig
			h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: forged})
			return approver, channel
		}, "not valid", nil},
		{"token signed with another key", func(h *harness, m slackemu.Message, _ string) (string, string) {
			a := approval.Approval{ID: "EVIL", Namespace: seedNamespace, Pod: seedPod, Rule: "r", Action: "move-metadata-log",
				Channel: channel, IssuedAt: h.clock.Now(), ExpiresAt: h.clock.Now().Add(time.Hour)}
			tok, err := approval.Sign([]byte("an-attacker-guessed-this-secret-0123456789"), a)
			if err != nil {
				h.t.Fatal(err)
			}
			h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: tok})
			return approver, channel
		}, "not valid", nil},
		{"expired token", func(h *harness, m slackemu.Message, _ string) (string, string) {
			h.clock.Advance(31 * time.Minute)
			h.click(m, slackview.ActionApprove, approver)
			return approver, channel
		}, "expired", nil},
		{"replay in another channel", func(h *harness, m slackemu.Message, token string) (string, string) {
			h.clickRaw(slackemu.Click{ChannelID: otherChan, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: token})
			return approver, otherChan
		}, "another channel", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startBot(t, tt.opts)
			m := h.diagnose()
			token, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
			user, where := tt.act(h, m, token)
			e := h.ephemeral(where, user, tt.want)
			if !strings.Contains(e.Text, "Nothing was changed") {
				t.Errorf("answer %q does not say nothing changed", e.Text)
			}
			got := h.message(m)
			if got.Updated != 0 || len(buttons(t, got.Blocks)) != 2 {
				t.Errorf("message changed: updated %d times, buttons %v", got.Updated, buttons(t, got.Blocks))
			}
			if n := len(h.emu.Thread(channel, m.TS)); n != 1 {
				t.Errorf("%d thread replies, want only the details", n)
			}
			if n := len(h.repairer.calls()); n != 0 {
				t.Errorf("repairer called %d times", n)
			}
			if !strings.Contains(h.logs.String(), `"event":"approval.refused"`) {
				t.Error("no audit line for the refusal")
			}
			if token != "" && strings.Contains(h.logs.String(), token) {
				t.Error("the token was logged")
			}
		})
	}
}

func TestDoubleClickRunsOnce(t *testing.T) {
	h := startBot(t, nil)
	m := h.diagnose()
	token, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	// Two clicks in flight before the message changes (a double click, or
	// two approvers at once): the second must be refused.
	first, err := h.emu.SendClick(h.ctx(), slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove})
	if err != nil {
		t.Fatal(err)
	}
	h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: token})
	if _, err := h.emu.WaitAck(h.ctx(), first); err != nil {
		t.Fatal(err)
	}
	h.ephemeral(channel, approver, "already")
	h.waitRepairDone(m)
	// A third click after the update: the message has no buttons any more.
	h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: token})
	h.waitFor("a second refusal", func() bool {
		n := 0
		for _, e := range h.emu.Ephemerals(channel, approver) {
			if strings.Contains(e.Text, "already") {
				n++
			}
		}
		return n == 2
	})
	if n := len(h.repairer.calls()); n != 1 {
		t.Errorf("repairer called %d times, want 1", n)
	}
}

func TestRedeliveredEnvelopeRunsOnce(t *testing.T) {
	h := startBot(t, nil)
	id, _ := h.slash(requester, channel, "diagnose broker-0")
	if err := h.emu.Redeliver(h.ctx(), id); err != nil {
		t.Fatal(err)
	}
	ack, err := h.emu.WaitAck(h.ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
		t.Errorf("redelivery acked with a response %s; it would show twice", ack.Payload)
	}
	h.waitFor("the diagnosis", func() bool { return len(h.emu.Messages(channel)) >= 1 })
	// The redelivery was dropped on the event loop before its ack was sent,
	// so by now no second job can exist.
	if _, snaps := h.cluster.counts(); snaps != 1 {
		t.Errorf("cluster read %d times, want 1", snaps)
	}
	if n := len(h.emu.Messages(channel)); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "ignoring a redelivered slack envelope") {
		t.Error("the redelivery was not logged")
	}
	// Redelivered clicks are dropped the same way.
	m := h.emu.Messages(channel)[0]
	cid, err := h.emu.SendClick(h.ctx(), slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionReject})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.emu.WaitAck(h.ctx(), cid); err != nil {
		t.Fatal(err)
	}
	if err := h.emu.Redeliver(h.ctx(), cid); err != nil {
		t.Fatal(err)
	}
	if _, err := h.emu.WaitAck(h.ctx(), cid); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the rejection", func() bool { return h.message(m).Updated > 0 })
	for _, e := range h.emu.Ephemerals(channel, approver) {
		if strings.Contains(e.Text, "already") {
			t.Errorf("the redelivered click was handled: %q", e.Text)
		}
	}
}

func TestRateLimitedThreadStaysInOrder(t *testing.T) {
	h := startBot(t, nil)
	m := h.diagnose()
	h.emu.InjectFault("chat.postMessage", slackemu.Fault{Status: 429, RetryAfter: 1, Times: 2})
	h.emu.InjectFault("chat.update", slackemu.Fault{Status: 429, RetryAfter: 1})
	h.click(m, slackview.ActionApprove, approver)
	h.waitRepairDone(m)
	thread := h.emu.Thread(channel, m.TS)
	th := threadTexts(thread)
	if len(th) != 3 {
		t.Fatalf("thread has %d messages, want details, checklist, outcome:\n%s", len(th), strings.Join(th, "\n---\n"))
	}
	checklist := blockTexts(t, thread[1].Blocks)
	if !strings.Contains(th[0], "Details") || !strings.Contains(checklist, "approved. Starting") || !strings.Contains(th[2], "Repair succeeded") {
		t.Errorf("thread out of order:\n%s", strings.Join(th, "\n---\n"))
	}
	for _, s := range fakeSteps {
		if !strings.Contains(checklist, "✅ "+s) {
			t.Errorf("after the rate limits the checklist lacks %q done:\n%s", s, checklist)
		}
	}
	if !strings.Contains(blockTexts(t, h.message(m).Blocks), "Repair succeeded") {
		t.Error("parent status not updated after the rate limit")
	}
	if !strings.Contains(h.logs.String(), "retrying after Retry-After") {
		t.Error("the rate limit was not logged")
	}
}

func TestDisconnectDuringCommandLosesNothing(t *testing.T) {
	h := startBot(t, nil)
	gate := make(chan struct{})
	h.cluster.mu.Lock()
	h.cluster.gate = gate
	h.cluster.mu.Unlock()
	h.slash(requester, channel, "diagnose broker-0")
	h.eventually("the command to reach the cluster", func() bool { _, s := h.cluster.counts(); return s == 1 })
	opened := h.emu.ConnectionsOpened()
	h.emu.Disconnect("refresh_requested")
	h.waitFor("a reconnection", func() bool { return h.emu.ConnectionsOpened() > opened })
	h.eventually("the bot to be connected again", h.bot.Connected)
	close(gate)
	h.waitFor("the diagnosis after the reconnect", func() bool { return len(h.emu.Messages(channel)) == 1 })
	if len(buttons(t, h.emu.Messages(channel)[0].Blocks)) != 2 {
		t.Error("the diagnosis lost its buttons")
	}
	// The new connection serves commands too.
	_, ack := h.slash(requester, channel, "help")
	if !strings.Contains(string(ack.Payload), "Usage") {
		t.Errorf("help after reconnect: %s", ack.Payload)
	}
	h.noAckFailures()
}

func TestInvalidAppTokenStopsRun(t *testing.T) {
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	bot, err := New(Options{AppToken: "xapp-1-wrong-token", BotToken: slackemu.DefaultBotToken, APIURL: emu.APIURL(),
		ApprovalSecret: testSecret, Clusters: []ClusterOptions{{Reader: newFakeCluster(t)}}, Diagnoser: seedDiagnoser{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err = bot.Run(ctx)
	if !errors.Is(err, ErrFatalConnection) || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("Run = %v, want a fatal invalid_auth error", err)
	}
	if bot.Connected() {
		t.Error("Connected after a fatal error")
	}
	if strings.Contains(err.Error(), "wrong-token") {
		t.Error("the error shows the token")
	}
}

func TestHelpAndUsageNeedNoWebAPI(t *testing.T) {
	h := startBot(t, nil)
	for _, tc := range []struct{ text, want string }{
		{"help", "Usage"},
		{"", "Usage"},
		{"restart everything", "unknown subcommand `restart`"},
		{"diagnose <!channel>", "not a valid pod name"},
	} {
		_, ack := h.slash(requester, channel, tc.text)
		var p struct {
			Text         string `json:"text"`
			ResponseType string `json:"response_type"`
		}
		if err := json.Unmarshal(ack.Payload, &p); err != nil {
			t.Fatalf("%q: ack payload %s: %v", tc.text, ack.Payload, err)
		}
		if !strings.Contains(p.Text, tc.want) || p.ResponseType != "ephemeral" || strings.Contains(p.Text, "<!channel>") {
			t.Errorf("%q: ack %+v", tc.text, p)
		}
	}
	for _, method := range []string{"chat.postMessage", "chat.postEphemeral"} {
		if n := h.emu.Calls(method); n != 0 {
			t.Errorf("%d calls of %s", n, method)
		}
	}
	if f, s := h.cluster.counts(); f+s != 0 {
		t.Errorf("cluster called %d times", f+s)
	}
	h.noAckFailures()
}

func TestStatusGroupsPods(t *testing.T) {
	h := startBot(t, nil)
	h.slash(requester, channel, "status")
	h.waitFor("the status", func() bool { return len(h.emu.Messages(channel)) == 1 })
	text := blockTexts(t, h.emu.Messages(channel)[0].Blocks)
	for _, want := range []string{"*kafka / foobar*", "CrashLoopBackOff, 37 restarts", "*streaming / events*"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
}

func TestUnknownPodGetsEphemeralAnswer(t *testing.T) {
	h := startBot(t, nil)
	h.slash(requester, channel, "diagnose zookeeper-7")
	h.ephemeral(channel, requester, "no Kafka pod matches")
	if n := len(h.emu.Messages(channel)); n != 0 {
		t.Errorf("%d channel messages", n)
	}
}

// TestFullQueueRefusesWithRetryTime: with one worker held and the one
// queue place taken, a third command is refused with when to try again;
// the queued one is acked at once and answered once the worker frees.
func TestFullQueueRefusesWithRetryTime(t *testing.T) {
	h := startBot(t, func(o *Options) { o.Workers, o.QueueSize = 1, 1 })
	gate := make(chan struct{})
	h.cluster.mu.Lock()
	h.cluster.gate = gate
	h.cluster.mu.Unlock()
	h.slash(requester, channel, "diagnose broker-0")
	h.eventually("the first command to hold the worker", func() bool { _, s := h.cluster.counts(); return s == 1 })
	_, queued := h.slash(stranger, channel, "diagnose broker-0")
	if !strings.Contains(string(queued.Payload), "Diagnosing") {
		t.Errorf("second command's ack %s, want it queued (Diagnosing…)", queued.Payload)
	}
	_, refused := h.slash(approver, channel, "diagnose broker-0")
	if !strings.Contains(string(refused.Payload), "already waiting") || !strings.Contains(string(refused.Payload), "try again in about") {
		t.Errorf("third command's ack %s, want a full-queue refusal saying when to retry", refused.Payload)
	}
	close(gate)
	h.waitFor("both accepted diagnoses", func() bool { return len(h.emu.Messages(channel)) == 2 })
	h.noAckFailures()
}

func TestCannotPostFallsBackToResponseURL(t *testing.T) {
	tests := []struct {
		name, code string
		set        func(*slackemu.Server)
		hint       string
	}{
		{"bot not in channel", "not_in_channel", func(e *slackemu.Server) { e.SetNotInChannel(channel) }, "/invite it"},
		{"private channel unknown to the bot", "channel_not_found", func(e *slackemu.Server) { e.SetChannelMissing(channel) }, "was not invited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startBot(t, nil)
			tt.set(h.emu)
			h.slash(requester, channel, "diagnose broker-0")
			e := h.ephemeral(channel, requester, "I cannot post in this channel")
			if !strings.Contains(e.Text, tt.code) || !strings.Contains(e.Text, seedPod) {
				t.Errorf("fallback answer %q", e.Text)
			}
			if !strings.Contains(h.logs.String(), tt.hint) {
				t.Error("no operator hint in the log")
			}
		})
	}
}

func TestRejectedBlocksFallBackToPlainText(t *testing.T) {
	h := startBot(t, nil)
	h.emu.InjectFault("chat.postMessage", slackemu.Fault{Error: "invalid_blocks"})
	h.slash(requester, channel, "diagnose broker-0")
	h.waitFor("the plain-text diagnosis", func() bool { return len(h.emu.Messages(channel)) == 1 })
	m := h.emu.Messages(channel)[0]
	if !strings.Contains(m.Text, seedPod) || !strings.Contains(m.Text, "plain-text version") {
		t.Errorf("fallback message %q", m.Text)
	}
	if len(m.Blocks) > 2 {
		t.Errorf("fallback has blocks %s", m.Blocks)
	}
}

func TestApprovalWithoutRepairerSaysSo(t *testing.T) {
	h := startBot(t, func(o *Options) { o.Clusters[0].Repairer = nil })
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	h.waitFor("the honest note", func() bool {
		for _, r := range h.emu.Thread(channel, m.TS) {
			if strings.Contains(r.Text, "not available in this build") && strings.Contains(r.Text, "`move-metadata-log` of `__cluster_metadata-0` on pod `kafka/foobar-kafka-broker-0`") {
				return true
			}
		}
		return false
	})
	h.waitFor("the status line", func() bool {
		return strings.Contains(blockTexts(t, h.message(m).Blocks), "nothing was changed")
	})
}

// BenchmarkSlashCommandAck measures a /kafka diagnose round trip over the
// WebSocket: the emulator sends the envelope, the bot acks it (the ack
// carries the "Diagnosing…" response) and the emulator records the ack.
func BenchmarkSlashCommandAck(b *testing.B) {
	h := startBot(b, func(o *Options) { o.Workers = 64 })
	var worst time.Duration
	for b.Loop() {
		_, ack := h.slash(requester, channel, "diagnose broker-0")
		worst = max(worst, ack.Latency)
	}
	b.ReportMetric(float64(worst.Microseconds()), "worst-ack-µs")
}
