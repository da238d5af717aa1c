// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
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
