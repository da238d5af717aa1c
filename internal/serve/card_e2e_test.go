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

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kafkafake"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// seedBroker is a cluster of one crash-looping broker (node.id 102) whose
// log is the seed incident's, as handlers reads pods.
type seedBroker struct{ snap diagnose.Snapshot }

func (b seedBroker) ResolvePod(_ context.Context, _, _ string) (diagnose.Snapshot, func(context.Context) (diagnose.Snapshot, error), error) {
	return b.snap, func(context.Context) (diagnose.Snapshot, error) { return b.snap, nil }, nil
}

func (b seedBroker) KafkaPods(context.Context) ([]diagnose.Snapshot, error) {
	return []diagnose.Snapshot{b.snap}, nil
}

func newSeedBroker(t *testing.T) seedBroker {
	t.Helper()
	raw, err := os.ReadFile("testdata/34-kraft-metadata-log-unexpected-append-offset.log")
	if err != nil {
		t.Fatal(err)
	}
	return seedBroker{diagnose.Snapshot{
		Namespace: "kafka", Pod: "foobar-kafka-broker-0", UID: "0a1b2c3d-0000-4000-8000-000000000102", Node: "node-a", Phase: "Running",
		KafkaCluster: "foobar", Role: diagnose.RoleBroker, NodeID: "102", KafkaContainer: "kafka",
		Containers: []diagnose.ContainerState{{Name: "kafka", RestartCount: 7, WaitingReason: "CrashLoopBackOff",
			LastTerminated: &diagnose.Termination{Reason: "Error", ExitCode: 1, FinishedAt: time.Now().Add(-time.Minute)}}},
		Claims: []diagnose.VolumeClaim{{Volume: "data", ClaimName: "data-foobar-kafka-broker-0", MountPath: "/bitnami/kafka", Phase: "Bound",
			AccessModes: []string{"ReadWriteOnce"}}},
		Log: string(raw), LogBytes: len(raw),
	}}
}

// hostileCluster is a Kafka cluster whose answer is huge and hostile:
// thousands of partitions with Slack markup in their names that broker
// 102 alone holds in sync, and thousands of fenced brokers.
func hostileCluster() kafkafake.Cluster {
	c := kafkafake.Cluster{Leader: 1, Voters: []int32{1, 2, 3}, MinISR: 2}
	for id := int32(101); id < 3101; id++ {
		c.Brokers = append(c.Brokers, id)
	}
	c.Fenced = map[int32]bool{}
	for id := int32(103); id < 3101; id++ {
		c.Fenced[id] = true
	}
	name := strings.Repeat("<!channel>*x*`", 17)
	for i := range 5000 {
		c.Partitions = append(c.Partitions, kafkahealth.Partition{Topic: name, Partition: int32(i), Leader: 102, Replicas: []int32{102, 101}, ISR: []int32{102}})
	}
	return c
}

// TestCardShowsKafkaViewEndToEnd (issue 23 item 6): `/kafka diagnose` of a
// repairable broker, through the bot's real wiring (the kafka-health
// gate over the Kafka protocol, the card's bounded read, handlers, the
// view) and a Kafka cluster on loopback (internal/testkit/kafkafake),
// posts a card whose line above Approve is Kafka's own view; a huge,
// hostile answer stays one bounded, escaped line. (The fake speaks no
// SASL: TestCardKafkaViewUnreachable checks that the password never shows.)
func TestCardShowsKafkaViewEndToEnd(t *testing.T) {
	healthy := kafkafake.Cluster{
		Brokers: []int32{101, 102, 103}, Leader: 1, Voters: []int32{1, 2, 3}, Observers: []int32{101, 102, 103}, MinISR: 2,
		Partitions: []kafkahealth.Partition{{Topic: "orders", Partition: 0, Leader: 101, Replicas: []int32{101, 102, 103}, ISR: []int32{101, 102, 103}}},
	}
	for _, tt := range []struct {
		name    string
		cluster kafkafake.Cluster
		want    []string
	}{
		{"healthy", healthy, []string{
			"✅ *Kafka's view:* quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on broker 102 alone"}},
		{"hostile", hostileCluster(), []string{"⛔ *Kafka's view:* quorum: leader 1, 3/3 voters caught up; brokers: 103, 104, 105, 106, 107 and 2993 more fenced too",
			"Approve will be refused until this clears."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake, err := kafkafake.Start(tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			card := postedCard(t, fake.Addr())
			var line string
			for _, l := range strings.Split(card, "\n") {
				if strings.Contains(l, "Kafka's view:") {
					line = l
				}
			}
			t.Logf("card line: %s", line)
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("the card's Kafka line does not say %q:\n%s", w, line)
				}
			}
			if n := slackview.RuneLen(line); n > 240 {
				t.Errorf("the card's Kafka line is %d characters long", n)
			}
			for _, bad := range []string{"<!channel>", "`<"} {
				if strings.Contains(card, bad) {
					t.Errorf("the card contains %q", bad)
				}
			}
			if i, j := strings.Index(card, "Kafka's view:"), strings.Index(card, "Approve repair"); i < 0 || j < i {
				t.Errorf("Kafka's view is not above the Approve button:\n%s", card)
			}
		})
	}
}

// postedCard runs the bot with Kafka access to bootstrap (plaintext),
// asks /kafka diagnose in the Slack emulator and returns the card's text.
func postedCard(t *testing.T, bootstrap string) string {
	t.Helper()
	emu, logs := startEmulator(t)
	log := slog.New(slog.NewJSONHandler(logs, nil))
	gate := kafkaGate([]fleet.KafkaAccess{{Namespace: "kafka", Bootstrap: []string{bootstrap}}}, t.TempDir())
	bot, err := handlers.New(handlers.Options{
		AppToken: slackemu.DefaultAppToken, BotToken: slackemu.DefaultBotToken, APIURL: emu.APIURL(),
		ApprovalSecret: []byte("serve-test-approval-secret-0123456789abcdef"), ApprovalTTL: 30 * time.Minute,
		Approvers: []string{"U0APPROVER"}, ApprovalChannels: []string{channel}, Workers: 2, ShareWindow: -1,
		Clusters:  []handlers.ClusterOptions{{Reader: newSeedBroker(t), KafkaView: cardKafkaView(gate, cardKafkaTimeout, log)}},
		Diagnoser: diagnose.Default(), Logger: log, PingInterval: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runUntilCleanup(t, cancel, func() error { return bot.Run(ctx) }, logs)
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	waitConnected(wctx, t, bot.Connected)
	if _, err := emu.SendSlashCommand(wctx, slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "diagnose foobar-kafka-broker-0"}); err != nil {
		t.Fatal(err)
	}
	if err := emu.WaitFor(wctx, func() bool { return len(emu.Messages(channel)) > 0 }); err != nil {
		t.Fatalf("no card: %v", err)
	}
	card, err := slackemu.BlocksText(emu.Messages(channel)[0].Blocks)
	if err != nil {
		t.Fatal(err)
	}
	return card
}
