// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// kafkaReads is a ClusterOptions.KafkaView that answers view and records
// which brokers it was asked about.
type kafkaReads struct {
	mu    sync.Mutex
	view  slackview.KafkaView
	asked []string
}

func (k *kafkaReads) read(_ context.Context, s diagnose.Snapshot) slackview.KafkaView {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.asked = append(k.asked, s.Pod)
	return k.view
}

func (k *kafkaReads) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.asked)
}

// TestCardShowsKafkaViewBeforeApprove (issue 23 item 6): the card that
// offers Approve, for /kafka diagnose and for an alert, shows Kafka's own
// view in one line above the buttons, read once for that card; a cluster
// without Kafka access says it was not checked; a diagnosis that offers
// no repair does not ask Kafka.
func TestCardShowsKafkaViewBeforeApprove(t *testing.T) {
	pass := slackview.KafkaView{Outcome: slackview.KafkaPass,
		Line: "quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on broker 100 alone"}
	fail := slackview.KafkaView{Outcome: slackview.KafkaFail, Line: "brokers: 101 fenced too: one broker at a time"}

	t.Run("diagnose, pass", func(t *testing.T) {
		k := &kafkaReads{view: pass}
		h := startBot(t, func(o *Options) { o.Clusters[0].KafkaView = k.read })
		m := h.diagnose()
		cardLine(t, m.Blocks, "✅ *Kafka's view:* "+pass.Line)
		if k.count() != 1 || k.asked[0] != seedPod {
			t.Errorf("Kafka was asked about %v, want once about %s", k.asked, seedPod)
		}
	})
	t.Run("diagnose, not configured", func(t *testing.T) {
		h := startBot(t, nil)
		cardLine(t, h.diagnose().Blocks, "➖ *Kafka's view:* not checked (no Kafka bootstrap address configured for this cluster)")
	})
	t.Run("alert, fail", func(t *testing.T) {
		k := &kafkaReads{view: fail}
		h := startAlertBot(t)
		h.bot.clusters.All()[0].KafkaView = k.read
		m := h.notify(seedAlert(t, h.clock.Now()))
		cardLine(t, m.Blocks, "⛔ *Kafka's view:* "+fail.Line+". Approve will be refused until this clears.")
		if k.count() != 1 {
			t.Errorf("Kafka was asked %d times for one alert, want once", k.count())
		}
	})
	t.Run("no repair offered: Kafka not asked", func(t *testing.T) {
		k := &kafkaReads{view: pass}
		h := startBot(t, func(o *Options) { o.Clusters[0].KafkaView = k.read })
		h.cluster.mu.Lock()
		h.cluster.snap.Role = diagnose.RoleController
		h.cluster.mu.Unlock()
		m := h.diagnose()
		if text := blockTexts(t, m.Blocks); strings.Contains(text, "Kafka's view") {
			t.Errorf("a card without Approve shows Kafka's view:\n%s", text)
		}
		if k.count() != 0 {
			t.Errorf("Kafka was asked %d times for a card without Approve", k.count())
		}
	})
}

// cardLine checks that the card's Kafka block says want and comes before
// the Approve button.
func cardLine(t *testing.T, raw []byte, want string) {
	t.Helper()
	text := blockTexts(t, raw)
	i, j := strings.Index(text, want), strings.Index(text, "Approve repair")
	if i < 0 || j < 0 || i > j {
		t.Errorf("the card does not say %q above the Approve button:\n%s", want, text)
	}
}
