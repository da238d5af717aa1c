// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

func TestKafkaGateWiring(t *testing.T) {
	if kafkaGate(nil, t.TempDir()) != nil {
		t.Fatal("a cluster without Kafka access got a Kafka gate")
	}
	for _, tt := range []struct {
		d          kafkahealth.Decision
		configured bool
		want       recovery.KafkaVerdict
	}{
		{kafkahealth.Decision{}, false, recovery.KafkaNotChecked},
		{kafkahealth.Decision{Verdict: kafkahealth.Pass}, true, recovery.KafkaPass},
		{kafkahealth.Decision{Verdict: kafkahealth.Fail}, true, recovery.KafkaFail},
		{kafkahealth.Decision{Verdict: kafkahealth.Defer}, true, recovery.KafkaDefer},
	} {
		if got := check(tt.d, tt.configured); got.Verdict != tt.want {
			t.Errorf("check(%v, %t) = %v, want %v", tt.d.Verdict, tt.configured, got.Verdict, tt.want)
		}
	}

	// The Secret is read from its mount in the bot's pod (never through
	// the API); a missing key defers and names the key, never a value.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "kafkabot", "..2026_12_02"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kafkabot", "username"), []byte("bot"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := kafkaGate([]fleet.KafkaAccess{{Namespace: "kafka", Bootstrap: []string{"127.0.0.1:1"}, SASLMechanism: "PLAIN",
		Secret: &fleet.SecretKeys{Name: "kafkabot"}}}, dir)
	c := g.BeforeMove(context.Background(), diagnose.Snapshot{Namespace: "kafka", NodeID: "4"})
	if c.Verdict != recovery.KafkaDefer || !strings.Contains(c.Line, `the Secret kafkabot has no key "password"`) {
		t.Errorf("BeforeMove = %+v, want a deferral naming the missing key", c)
	}
	if c := g.AfterRestart(context.Background(), diagnose.Snapshot{Namespace: "elsewhere", NodeID: "4"}); c.Verdict != recovery.KafkaNotChecked {
		t.Errorf("another namespace: %+v, want not checked", c)
	}
}

// fakeKafka answers BeforeMove with check, or blocks (ignoring its
// context, as a hung read might) until release is closed, or panics.
type fakeKafka struct {
	check   recovery.KafkaCheck
	release chan struct{}
	panics  bool
}

func (f fakeKafka) BeforeMove(context.Context, diagnose.Snapshot) recovery.KafkaCheck {
	if f.panics {
		panic("broken client")
	}
	if f.release != nil {
		<-f.release
	}
	return f.check
}

func (f fakeKafka) AfterRestart(context.Context, diagnose.Snapshot) recovery.KafkaCheck {
	panic("a card never asks AfterRestart")
}

// TestCardKafkaView: the card's read of Kafka's view is the gate's
// BeforeMove in the card's words, bounded: a read that hangs or panics is
// an unclear view within the timeout, never a crash or a long wait.
func TestCardKafkaView(t *testing.T) {
	hung := make(chan struct{})
	defer close(hung)
	const timeout = 100 * time.Millisecond
	for _, tt := range []struct {
		name string
		kh   fakeKafka
		want slackview.KafkaView
	}{
		{"pass", fakeKafka{check: recovery.KafkaCheck{Verdict: recovery.KafkaPass, Line: "quorum: leader 1, 3/3 voters caught up"}},
			slackview.KafkaView{Outcome: slackview.KafkaPass, Line: "quorum: leader 1, 3/3 voters caught up"}},
		{"fail", fakeKafka{check: recovery.KafkaCheck{Verdict: recovery.KafkaFail, Line: "brokers: 103 fenced too"}},
			slackview.KafkaView{Outcome: slackview.KafkaFail, Line: "brokers: 103 fenced too"}},
		{"defer", fakeKafka{check: recovery.KafkaCheck{Verdict: recovery.KafkaDefer, Line: "quorum: no leader reported (epoch 7)"}},
			slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: "quorum: no leader reported (epoch 7)"}},
		{"no entry for this namespace", fakeKafka{check: recovery.KafkaCheck{Verdict: recovery.KafkaNotChecked}},
			slackview.KafkaView{Outcome: slackview.KafkaNotChecked}},
		{"timeout", fakeKafka{release: hung}, slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: "Kafka did not answer within 100ms"}},
		{"panic", fakeKafka{panics: true},
			slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: "reading Kafka's view failed unexpectedly (see the bot's log)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := cardKafkaView(tt.kh, timeout, slog.New(slog.DiscardHandler))(context.Background(), diagnose.Snapshot{NodeID: "102"})
			if took := time.Since(start); took > timeout+2*time.Second {
				t.Errorf("the card waited %s (timeout %s)", took, timeout)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCardKafkaViewUnreachable: with the real gate, a cluster whose
// bootstrap address refuses connections is an unclear view within the
// card's timeout, and the SASL password is nowhere in it.
func TestCardKafkaViewUnreachable(t *testing.T) {
	dir := t.TempDir()
	const password = "s3cret-kafka-password"
	if err := os.MkdirAll(filepath.Join(dir, "kafkabot"), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"username": "bot", "password": password} {
		if err := os.WriteFile(filepath.Join(dir, "kafkabot", k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	g := kafkaGate([]fleet.KafkaAccess{{Namespace: "kafka", Bootstrap: []string{addr}, SASLMechanism: "SCRAM-SHA-512",
		Secret: &fleet.SecretKeys{Name: "kafkabot"}}}, dir)
	logs := &logging.Buffer{}
	start := time.Now()
	got := cardKafkaView(g, time.Second, slog.New(slog.NewJSONHandler(logs, nil)))(context.Background(),
		diagnose.Snapshot{Namespace: "kafka", Pod: "broker-0", NodeID: "102"})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the card waited %s for an unreachable cluster", took)
	}
	if got.Outcome != slackview.KafkaDefer || got.Line == "" {
		t.Errorf("got %+v, want an unclear view saying why", got)
	}
	if text := got.Text() + logs.String(); strings.Contains(text, password) {
		t.Errorf("the password shows:\n%s", text)
	}
	t.Logf("card line: %s", got.Text())
}
