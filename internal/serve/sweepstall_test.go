// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// records are the log's JSON records whose msg starts with prefix and
// whose attributes include every one of attrs.
func records(t *testing.T, logs *logging.Buffer, prefix string, attrs map[string]string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if msg, _ := rec["msg"].(string); !strings.HasPrefix(msg, prefix) {
			continue
		}
		match := true
		for k, v := range attrs {
			if got, _ := rec[k].(string); got != v {
				match = false
			}
		}
		if match {
			out = append(out, rec)
		}
	}
	return out
}

// TestSweepWithoutBotNamespaceSaysWhy: on a bot serving two clusters whose
// bot namespace (POD_NAMESPACE, where each cluster keeps its alert state)
// exists only in a, b's sweep cannot start. It says so once, as a warning
// naming the cluster, the namespace and what to install, however often
// client-go retries; /kafka status shows b's sweep as not running, with
// the reason, and a's as nothing of the kind. Once the namespace is
// installed in b, b's sweep starts by itself and status stops saying so.
func TestSweepWithoutBotNamespaceSaysWhy(t *testing.T) {
	a := testenv.Start(t)
	home := a.SelfNamespace(t, "serve-home")
	nsA := a.KafkaNamespace(t, "serve-stall-a", nil)
	b := testenv.StartSecond(t)
	nsB := b.KafkaNamespace(t, "serve-stall-b", nil)
	emu, logs := startEmulator(t)
	log := slog.New(slog.NewJSONHandler(logs, nil))
	logging.RouteKlog(log) // client-go's retries are counted below
	t.Cleanup(klog.ClearLogger)
	cfg := settings(emu, nsA, nsB)
	cfg.PodNamespace, cfg.AlertChannel, cfg.LeaderElection, cfg.SweepSchedule = home, channel, true, "@every 1h"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server, err := New(ctx, Options{
		Settings: cfg,
		Clusters: []Cluster{
			{Name: "a", Config: a.BotConfig(), KafkaNamespaces: []string{nsA}},
			{Name: "b", Config: b.BotConfig(), KafkaNamespaces: []string{nsB}},
		},
		Identity: "serve-stall-test", Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, cancel, func() error { return server.Run(ctx) }, logs)
	wctx, wcancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer wcancel()
	waitLog := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-wctx.Done():
				t.Fatalf("waiting for %s: %v", what, wctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	stalled := map[string]string{"cluster": "b", "namespace": home}
	waitLog("b's sweep to warn", func() bool { return len(records(t, logs, "health sweep not running", stalled)) > 0 })
	// client-go retries the list (its lines name the cluster); the
	// warning stays one.
	waitLog("client-go to retry b's state list", func() bool {
		return len(records(t, logs, "Failed to watch", map[string]string{"type": "state configmap kafkabot-alert-state", "cluster": "b"})) >= 2
	})
	warns := records(t, logs, "health sweep not running", nil)
	if len(warns) != 1 {
		t.Fatalf("%d warnings about a sweep not running, want 1 (b's)", len(warns))
	}
	w := warns[0]
	fix, _ := w["fix"].(string)
	if w["level"] != "WARN" || w["cluster"] != "b" || !strings.Contains(fix, "namespace "+home) ||
		!strings.Contains(fix, "kafkabot.io/bot-namespace=true") || !strings.Contains(fix, "Role and RoleBinding") {
		t.Errorf("the warning does not name the cluster, the namespace and what to install: %v", w)
	}
	if got := records(t, logs, "leading the sweep", map[string]string{"cluster": "b"}); len(got) != 0 {
		t.Fatalf("b's sweep leads without its state: %v", got)
	}

	status := func() string {
		t.Helper()
		before := len(emu.Messages(channel))
		if _, err := emu.SendSlashCommand(wctx, slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "status"}); err != nil {
			t.Fatal(err)
		}
		if err := emu.WaitFor(wctx, func() bool { return len(emu.Messages(channel)) > before }); err != nil {
			t.Fatal(err)
		}
		text, err := slackemu.BlocksText(emu.Messages(channel)[before].Blocks)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	for !server.Bot().Connected() {
		waitLog("the bot to connect", func() bool { return server.Bot().Connected() })
	}
	text := status()
	_, sectionB, _ := strings.Cut(text, "*b*")
	sectionA, _, _ := strings.Cut(text, "*b*")
	if !strings.Contains(sectionB, "The health sweep is not running") || !strings.Contains(sectionB, "namespace "+home) {
		t.Errorf("/kafka status does not show b's sweep as not running, with why:\n%s", text)
	}
	if strings.Contains(sectionA, "health sweep") {
		t.Errorf("/kafka status shows a's sweep as not running:\n%s", text)
	}

	// Installing the bot's namespace in b lets b's sweep start by itself.
	if got := b.SelfNamespace(t, home); got != home {
		t.Fatalf("b's bot namespace is %s, want %s", got, home)
	}
	waitLog("b's sweep to lead", func() bool { return len(records(t, logs, "leading the sweep", map[string]string{"cluster": "b"})) > 0 })
	if text := status(); strings.Contains(text, "health sweep") {
		t.Errorf("/kafka status still shows b's sweep as not running:\n%s", text)
	}
}
