// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/grant"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

const alertChan = "C0ALERTS"

// fakeSilencer records silences and sweeps (it stands in for the sweep).
type fakeSilencer struct {
	mu       sync.Mutex
	created  []alert.Silence
	list     []alert.Silence
	sweepErr error
	sweeps   int
	ended    []string // silence IDs ended, in order
}

// EndSilence ends a silence it created, once.
func (f *fakeSilencer) EndSilence(_ context.Context, id, _ string) (alert.Silence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.created {
		if s.ID == id && !slices.Contains(f.ended, id) {
			f.ended = append(f.ended, id)
			return s, nil
		}
	}
	return alert.Silence{}, fmt.Errorf("silence %s: %w", id, alert.ErrNoSuchSilence)
}

func (f *fakeSilencer) endedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ended...)
}

func (f *fakeSilencer) Silence(_ context.Context, key string, until time.Time, by string) (alert.Silence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := alert.Silence{ID: "sil" + string(rune('0'+len(f.created))), Key: key, Until: until, By: by}
	f.created = append(f.created, s)
	return s, nil
}

func (f *fakeSilencer) Silences(context.Context) ([]alert.Silence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]alert.Silence(nil), f.list...), nil
}

func (f *fakeSilencer) SweepNow(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweeps++
	return f.sweepErr
}

func (f *fakeSilencer) set(list []alert.Silence, sweepErr error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list, f.sweepErr = list, sweepErr
}

func (f *fakeSilencer) sweepCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sweeps
}

func (f *fakeSilencer) calls() []alert.Silence {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]alert.Silence(nil), f.created...)
}

// alertHarness is a running bot with alerts enabled.
type alertHarness struct {
	*harness
	notifier *alertnotify.Notifier
	silencer *fakeSilencer
}

func startAlertBot(t *testing.T) *alertHarness {
	t.Helper()
	n := alertnotify.New(alertChan)
	sil := &fakeSilencer{}
	h := startBot(t, func(o *Options) {
		o.Alerts, o.Clusters[0].Silencer, o.Clusters[0].Sweeper = n, sil, sil
	})
	return &alertHarness{harness: h, notifier: n, silencer: sil}
}

// seedAlert is the sweep's alert about the seed incident.
func seedAlert(t testing.TB, now time.Time) alert.Alert {
	snap := seedSnapshot(t)
	return alert.Alert{
		Key: seedNamespace + "/" + seedPod + "/metadata-log-offset-mismatch", Namespace: seedNamespace, Pod: seedPod,
		PodUID: seedUID, KafkaCluster: "foobar", Rule: "metadata-log-offset-mismatch",
		Title: "KRaft metadata log diverged (UnexpectedAppendOffsetException)", Severity: diagnose.SeverityCritical,
		Reason: "CrashLoopBackOff", Detail: "waiting in CrashLoopBackOff after 37 restarts",
		Findings: seedDiagnoser{}.Diagnose(snap), Snapshot: snap, StartsAt: now.Add(-3 * time.Minute),
	}
}

// notify posts a through the notifier and returns the posted message.
func (h *alertHarness) notify(a alert.Alert) slackemu.Message {
	h.t.Helper()
	ref, err := h.notifier.Notify(h.ctx(), a)
	if err != nil {
		h.t.Fatalf("Notify: %v", err)
	}
	if ref.Channel != alertChan || ref.TS == "" {
		h.t.Fatalf("Notify returned %+v", ref)
	}
	m, ok := h.emu.Message(ref.Channel, ref.TS)
	if !ok {
		h.t.Fatalf("no message at %+v", ref)
	}
	return m
}

// silenceMenu returns the signed grant of the blocks' Silence menu and its
// option values ("" when there is none).
func silenceMenu(t testing.TB, raw []byte) (token string, options []string) {
	t.Helper()
	var list []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Options  []struct {
				Value string `json:"value"`
			} `json:"options"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("blocks are not JSON: %v", err)
	}
	for _, b := range list {
		for _, e := range b.Elements {
			if tok, ok := strings.CutPrefix(e.ActionID, slackview.ActionSilenceMenu); ok && e.Type == "overflow" {
				for _, o := range e.Options {
					options = append(options, o.Value)
				}
				return tok, options
			}
		}
	}
	return "", nil
}

func TestAlertNotifyPostsDiagnosisWithSilenceButtons(t *testing.T) {
	h := startAlertBot(t)
	now := h.clock.Now()
	m := h.notify(seedAlert(t, now))

	if p := validateBlocksJSON(m.Blocks); len(p) > 0 {
		t.Errorf("alert blocks break limits:\n%s", strings.Join(p, "\n"))
	}
	thread := h.emu.Thread(alertChan, m.TS)
	if len(thread) != 1 {
		t.Fatalf("%d thread replies, want the details", len(thread))
	}
	text := blockTexts(t, m.Blocks) + blockTexts(t, thread[0].Blocks)
	for _, want := range []string{
		"kafka/foobar-kafka-broker-0: KRaft metadata log diverged", "Alert from the health sweep",
		"*Noticed:* CrashLoopBackOff — waiting in CrashLoopBackOff after 37 restarts", "UnexpectedAppendOffsetException",
		"*Restarts*\n37", seedPVC, "Found by the health sweep",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("alert lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(m.Text, "Kafka alert") {
		t.Errorf("fallback text %q", m.Text)
	}
	bs := buttons(t, m.Blocks)
	tok, _ := bs[slackview.ActionApprove]["value"].(string)
	a, err := approval.Verify(testSecret, tok, now)
	if err != nil {
		t.Fatalf("approve button: %v", err)
	}
	if a.Requester != alertnotify.Requester || a.Channel != alertChan || a.PodUID != seedUID || a.Action != diagnose.ActionMoveMetadataLog {
		t.Errorf("approval token carries %+v", a)
	}
	token, options := silenceMenu(t, m.Blocks)
	g, err := grant.VerifySilence(testSecret, token, now)
	if err != nil {
		t.Fatalf("silence menu token: %v", err)
	}
	if g.Key != seedNamespace+"/"+seedPod || g.Duration() != 7*24*time.Hour || g.Channel != alertChan {
		t.Errorf("silence menu grants %+v", g)
	}
	if want := []string{"1h", "24h", "7d"}; !slices.Equal(options, want) {
		t.Errorf("silence menu options %v, want %v", options, want)
	}
	if bs[slackview.ActionSilence+"24h"] != nil {
		t.Error("Silence buttons posted beside the menu")
	}
	h.noAckFailures()
}

func TestAlertBanners(t *testing.T) {
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		mutate  func(a *alert.Alert)
		want    []string
		notWant []string
		approve bool
	}{
		{"first", func(*alert.Alert) {}, []string{"🚨 *Alert from the health sweep*", "🔴 kafka/foobar-kafka-broker-0"}, []string{"still firing", "finding changed"}, true},
		{"repeat", func(a *alert.Alert) { a.Repeat = true }, []string{"🔁 *Alert, still firing*"}, nil, true},
		{"raised by Alertmanager", func(a *alert.Alert) { a.Source, a.SourceAlert = "Alertmanager", "KubePodCrashLooping" },
			[]string{"🚨 *Alert from Alertmanager* (`KubePodCrashLooping`)", "raised by Alertmanager (`KubePodCrashLooping`)", "*Raised by:* Alertmanager alert `KubePodCrashLooping`"},
			[]string{"health sweep"}, true},
		{"changed", func(a *alert.Alert) { a.Changed = true }, []string{"🔀 *Alert: the finding changed*"}, nil, true},
		{"status only", func(a *alert.Alert) { a.ReadError = "pods/log forbidden" }, []string{"Only the pod's status was read (pods/log forbidden)"}, nil, true},
		{"unclassified", func(a *alert.Alert) {
			a.Findings, a.Title, a.Rule, a.Severity = nil, "", "unclassified", ""
		}, []string{"🔴 kafka/foobar-kafka-broker-0: CrashLoopBackOff, 37 restarts, no rule matched its log", "none of my rules matched"}, []string{"🟢"}, false},
		{"controller: no repair", func(a *alert.Alert) { a.Snapshot.Role = diagnose.RoleController }, []string{"not on this pod"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Bot{opts: Options{ApprovalSecret: testSecret, ApprovalTTL: time.Hour}, log: slog.New(slog.DiscardHandler)}
			if err := b.setupClusters(&Options{Clusters: []ClusterOptions{{Reader: newFakeCluster(t)}}}); err != nil {
				t.Fatal(err)
			}
			a := seedAlert(t, now)
			tt.mutate(&a)
			msg, details := alertnotify.RenderAlert(context.Background(), alertSide{b}, "", a, alertChan, now)
			blocks := append(msg.Blocks, details.Blocks...)
			if p := validateBlocks(blocks); len(p) > 0 {
				t.Errorf("blocks break limits:\n%s", strings.Join(p, "\n"))
			}
			raw := mustJSON(t, blocks)
			text := blockTexts(t, raw)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("has %q:\n%s", w, text)
				}
			}
			bs := buttons(t, raw)
			if got := bs[slackview.ActionApprove] != nil; got != tt.approve {
				t.Errorf("approve button offered = %t, want %t", got, tt.approve)
			}
			if tok, _ := silenceMenu(t, mustJSON(t, msg.Blocks)); tok == "" {
				t.Error("no Silence menu")
			}
		})
	}
}

func TestAlertResolveUpdatesMessageAndThread(t *testing.T) {
	tests := []struct {
		name string
		// forget drops the bot's copy of the message (a restarted bot).
		forget bool
		want   []string
	}{
		{"same process keeps the diagnosis", false, []string{"UnexpectedAppendOffsetException", "*Restarts:* 37"}},
		{"restarted bot rebuilds it", true, []string{"*Was:* KRaft metadata log diverged", "bot restarted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startAlertBot(t)
			a := seedAlert(t, h.clock.Now())
			m := h.notify(a)
			if tt.forget {
				h.bot.messages = slacktransport.NewMessages(messageCacheSize)
			}
			h.clock.Advance(20 * time.Minute)
			a.Findings, a.Snapshot = nil, diagnose.Snapshot{}
			a.Resolution, a.ResolvedAt = alert.ResolutionRecovered, h.clock.Now()
			if err := h.notifier.Resolve(h.ctx(), alert.MessageRef{Channel: m.Channel, TS: m.TS}, a); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			got := h.message(m)
			if got.Updated != 1 {
				t.Errorf("message updated %d times, want 1", got.Updated)
			}
			if bs := buttons(t, got.Blocks); len(bs) != 0 {
				t.Errorf("resolved message still has buttons %v", bs)
			}
			text := shownDates(blockTexts(t, got.Blocks))
			for _, w := range append([]string{"✅ Resolved · kafka/foobar-kafka-broker-0", "is Ready again", "Fired from 2026-11-29 16:57 UTC to 2026-11-29 17:20 UTC"}, tt.want...) {
				if !strings.Contains(text, w) {
					t.Errorf("resolved message lacks %q:\n%s", w, text)
				}
			}
			if strings.Contains(text, "Awaiting approval") {
				t.Errorf("resolved message still awaits approval:\n%s", text)
			}
			th := h.emu.Thread(alertChan, m.TS)
			// The details reply, then the resolution line.
			if len(th) != 2 || !strings.Contains(th[1].Text, "✅") || !strings.Contains(th[1].Text, "Ready again") {
				t.Errorf("thread %q, want the details and one resolution line", threadTexts(th))
			}
		})
	}
}

func TestAlertApproveFromAlertRunsRepair(t *testing.T) {
	h := startAlertBot(t)
	m := h.notify(seedAlert(t, h.clock.Now()))
	h.click(m, slackview.ActionApprove, approver)
	h.waitFor("the repair to finish", func() bool {
		th := h.emu.Thread(alertChan, m.TS)
		return len(th) > 0 && strings.Contains(th[len(th)-1].Text, "Repair succeeded")
	})
	reqs := h.repairer.calls()
	if len(reqs) != 1 || reqs[0].Requester != alertnotify.Requester || reqs[0].Approver != approver || reqs[0].Channel != alertChan {
		t.Fatalf("repair requests %+v", reqs)
	}
	// The alert resolves afterwards: the decision and the repair's outcome stay.
	h.waitFor("the final status", func() bool { return strings.Contains(blockTexts(t, h.message(m).Blocks), "Repair succeeded") })
	a := seedAlert(t, h.clock.Now())
	a.Resolution, a.ResolvedAt = alert.ResolutionRecovered, h.clock.Now()
	if err := h.notifier.Resolve(h.ctx(), alert.MessageRef{Channel: m.Channel, TS: m.TS}, a); err != nil {
		t.Fatal(err)
	}
	text := blockTexts(t, h.message(m).Blocks)
	for _, w := range []string{"✅ Resolved", "Approved by <@" + approver + ">", "Repair succeeded"} {
		if !strings.Contains(text, w) {
			t.Errorf("message after repair and resolution lacks %q:\n%s", w, text)
		}
	}
}

func TestAlertGroupLifecycle(t *testing.T) {
	h := startAlertBot(t)
	member := func(pod string) alert.Alert {
		a := seedAlert(t, h.clock.Now())
		a.Pod, a.Key, a.Group = pod, seedNamespace+"/"+pod+"/"+a.Rule, "cluster:kafka/foobar"
		a.Findings, a.Snapshot = nil, diagnose.Snapshot{}
		return a
	}
	g := alert.Group{Key: "cluster:kafka/foobar", Namespace: seedNamespace, KafkaCluster: "foobar", Firing: 3,
		Alerts: []alert.Alert{member("foobar-kafka-broker-0"), member("foobar-kafka-broker-1"), member("foobar-kafka-broker-2")}}
	ref, err := h.notifier.NotifyGroup(h.ctx(), g)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := h.emu.Message(ref.Channel, ref.TS)
	if n := len(h.emu.Messages(alertChan)); n != 1 {
		t.Fatalf("%d messages in the alert channel, want one grouped alert", n)
	}
	text := blockTexts(t, m.Blocks)
	for _, w := range []string{"Kafka cluster kafka/foobar: 3 pods unhealthy", "`foobar-kafka-broker-0`", "`foobar-kafka-broker-2`", "Grouped alert"} {
		if !strings.Contains(text, w) {
			t.Errorf("group message lacks %q:\n%s", w, text)
		}
	}
	bs := buttons(t, m.Blocks)
	if bs[slackview.ActionApprove] != nil {
		t.Error("a grouped alert offers a repair")
	}
	menu, _ := silenceMenu(t, m.Blocks)
	sil, err := grant.VerifySilence(testSecret, menu, h.clock.Now())
	if err != nil || sil.Key != g.Key {
		t.Fatalf("cluster silence button grants %+v, %v; want key %s", sil, err, g.Key)
	}

	// A fourth pod joins: a thread line, and the message lists all four.
	g2 := alert.Group{Key: g.Key, Namespace: g.Namespace, KafkaCluster: g.KafkaCluster, Ref: ref, Firing: 4,
		Alerts: []alert.Alert{member("foobar-kafka-broker-3")}}
	if ref2, err := h.notifier.NotifyGroup(h.ctx(), g2); err != nil || ref2 != ref {
		t.Fatalf("NotifyGroup with Ref = %+v, %v; want the same message", ref2, err)
	}
	m = h.message(m)
	text = blockTexts(t, m.Blocks)
	if !strings.Contains(text, "4 pods unhealthy") || !strings.Contains(text, "`foobar-kafka-broker-0`") || !strings.Contains(text, "`foobar-kafka-broker-3`") {
		t.Errorf("updated group message:\n%s", text)
	}
	th := threadTexts(h.emu.Thread(alertChan, ref.TS))
	if len(th) != 1 || !strings.Contains(th[0], "1 more pod") || !strings.Contains(th[0], "foobar-kafka-broker-3") {
		t.Errorf("thread %q", th)
	}

	// A member recovers: a thread line only.
	r := member("foobar-kafka-broker-1")
	r.Resolution, r.ResolvedAt = alert.ResolutionRecovered, h.clock.Now()
	if err := h.notifier.Resolve(h.ctx(), ref, r); err != nil {
		t.Fatal(err)
	}
	if got := h.message(m); got.Updated != m.Updated {
		t.Errorf("a member's recovery rewrote the group message")
	}
	th = threadTexts(h.emu.Thread(alertChan, ref.TS))
	if len(th) != 2 || !strings.Contains(th[1], "foobar-kafka-broker-1") || !strings.Contains(th[1], "Ready again") {
		t.Errorf("thread %q", th)
	}

	// The whole group resolves.
	if err := h.notifier.ResolveGroup(h.ctx(), ref, alert.Group{Key: g.Key, Namespace: g.Namespace, KafkaCluster: g.KafkaCluster}); err != nil {
		t.Fatal(err)
	}
	m = h.message(m)
	if bs := buttons(t, m.Blocks); len(bs) != 0 {
		t.Errorf("resolved group still has buttons %v", bs)
	}
	if text := blockTexts(t, m.Blocks); !strings.Contains(text, "✅ Resolved · Kafka cluster kafka/foobar") || !strings.Contains(text, "foobar-kafka-broker-3") {
		t.Errorf("resolved group message:\n%s", text)
	}
}

func TestSweepSummary(t *testing.T) {
	h := startAlertBot(t)
	a := seedAlert(t, h.clock.Now())
	if err := h.notifier.Summary(h.ctx(), alert.Summary{At: h.clock.Now(), KafkaPods: 6, Firing: []alert.Alert{a}, Silenced: 1}); err != nil {
		t.Fatal(err)
	}
	msgs := h.emu.Messages(alertChan)
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want the summary", len(msgs))
	}
	text := blockTexts(t, msgs[0].Blocks)
	for _, w := range []string{"1 alert(s) firing", "`kafka/foobar-kafka-broker-0`", "Looked at 6 Kafka pod(s)", "1 of the alerts are silenced"} {
		if !strings.Contains(text, w) {
			t.Errorf("summary lacks %q:\n%s", w, text)
		}
	}
}

func TestNotifierFailsWhenTheBotDoesNotRun(t *testing.T) {
	n := alertnotify.New(alertChan)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := n.Notify(ctx, seedAlert(t, time.Now())); !errors.Is(err, context.Canceled) {
		t.Errorf("Notify before Run = %v, want context.Canceled", err)
	}
	if _, err := New(Options{AppToken: "xapp-1", BotToken: "xoxb-1", ApprovalSecret: testSecret,
		Clusters: []ClusterOptions{{Reader: newFakeCluster(t)}}, Diagnoser: seedDiagnoser{}, Alerts: alertnotify.New("")}); err == nil {
		t.Error("New accepted a notifier without a channel")
	}
}
