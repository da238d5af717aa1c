// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	channel   = "C0KAFKAOPS"
	requester = "U0ONCALL"
)

// settings are the bot's settings for these tests (what config.Load's
// defaults give, with the Slack emulator), without sweeps.
func settings(emu *slackemu.Server, namespaces ...string) *config.Config {
	return &config.Config{
		SlackAppToken: slackemu.DefaultAppToken, SlackBotToken: slackemu.DefaultBotToken, SlackAPIURL: emu.APIURL(),
		ApprovalSecret: "serve-test-approval-secret-0123456789abcdef", ApprovalTTL: 30 * time.Minute,
		Approvers: []string{"U0APPROVER"}, ApprovalChannels: []string{channel}, ForbidSelfApproval: true, RequiredApprovals: 1,
		KafkaNamespaces: namespaces, Workers: 4, QueueSize: 256, ShareWindow: time.Minute,
		RepairTimeout: time.Minute, PodNamespace: "kafka-bot", ClusterName: "ignored",
	}
}

// TestHangingClusterHoldsNothingBack: a bot serving a real cluster (a) and
// one whose API server answers nothing (b) starts (b's startup self-check
// is still hanging: StartupTimeout is an hour), answers a command naming a
// at once, answers a short name from a while saying b could not be
// checked, and shows b as unreachable in /kafka status; it stops cleanly.
func TestHangingClusterHoldsNothingBack(t *testing.T) {
	a := testenv.Start(t)
	ns := a.KafkaNamespace(t, "serve-a", nil)
	b := testenv.StartHanging(t, testenv.HangOptions{})
	emu, logs := startEmulator(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server, err := New(ctx, Options{
		Settings: settings(emu, ns),
		Clusters: []Cluster{{Name: "a", Config: a.BotConfig()}, {Name: "b", Config: b.Config()}},
		Identity: "serve-test", Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		StartupTimeout: time.Hour, LookupTimeout: 500 * time.Millisecond, BreakerPeriod: time.Hour,
		Bot: func(o *handlers.Options) { o.PingInterval = 5 * time.Second },
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, cancel, func() error { return server.Run(ctx) }, logs)
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	waitConnected(wctx, t, server.Bot().Connected)
	ask := func(text, want string) string {
		t.Helper()
		seen := len(emu.Ephemerals(channel, requester))
		if _, err := emu.SendSlashCommand(wctx, slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: text}); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := emu.WaitFor(wctx, func() bool {
			for _, m := range emu.Ephemerals(channel, requester)[seen:] {
				if strings.Contains(m.Text, want) {
					got = m.Text
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("%q: no reply containing %q: %v", text, want, err)
		}
		return got
	}
	ask("diagnose a/"+ns+"/broker-9", "cluster a:")
	reply := ask("diagnose broker-9", "I found no Kafka pod")
	if !strings.Contains(reply, "(`a`)") || !strings.Contains(reply, "I could not check `b` (no answer within 500ms)") {
		t.Errorf("the short-name reply does not say what was and was not checked:\n%s", reply)
	}
	before := len(emu.Messages(channel))
	if _, err := emu.SendSlashCommand(wctx, slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "status"}); err != nil {
		t.Fatal(err)
	}
	if err := emu.WaitFor(wctx, func() bool { return len(emu.Messages(channel)) > before }); err != nil {
		t.Fatal(err)
	}
	status, err := slackemu.BlocksText(emu.Messages(channel)[before].Blocks)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "b* cannot be reached") || !strings.Contains(status, "*a*") {
		t.Errorf("status:\n%s", status)
	}
}

func TestLeaderLeaseName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		multi bool
		want  string
	}{{"kubernetes", false, "kafkabot-leader"}, {"prod-eu", true, "kafkabot-leader-prod-eu"}} {
		if got := LeaderLeaseName(tc.name, tc.multi); got != tc.want {
			t.Errorf("LeaderLeaseName(%q, %v) = %q, want %q", tc.name, tc.multi, got, tc.want)
		}
	}
}

func TestNewChecksClusters(t *testing.T) {
	cfg := &config.Config{}
	for _, tc := range []struct {
		name     string
		clusters []Cluster
		want     string
	}{
		{"none", nil, "no clusters"},
		{"no config", []Cluster{{Name: "a"}}, "no REST config"},
		{"bad name", []Cluster{{Name: "A", Config: testConfig()}, {Name: "b", Config: testConfig()}}, "name"},
		{"twice", []Cluster{{Name: "a", Config: testConfig()}, {Name: "a", Config: testConfig()}}, "listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(context.Background(), Options{Settings: cfg, Clusters: tc.clusters}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
