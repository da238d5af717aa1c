// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview_test

import (
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// TestKafkaViewOnTheCard: a card with Approve shows Kafka's own view in one
// line above the status line and the buttons, in every outcome; a card
// without buttons shows none.
func TestKafkaViewOnTheCard(t *testing.T) {
	for _, tt := range []struct {
		name string
		view slackview.KafkaView
		want string
	}{
		{"pass", slackview.KafkaView{Outcome: slackview.KafkaPass,
			Line: "quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on broker 102 alone"},
			"✅ *Kafka's view:* quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on broker 102 alone"},
		{"fail", slackview.KafkaView{Outcome: slackview.KafkaFail,
			Line: "quorum: leader 1, 3/3 voters caught up; brokers: 103 fenced too: one broker at a time; no partition relies on broker 102 alone"},
			"⛔ *Kafka's view:* quorum: leader 1, 3/3 voters caught up; brokers: 103 fenced too: one broker at a time; no partition relies on broker 102 alone. " +
				"Approve will be refused until this clears."},
		{"defer", slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: "quorum: no leader reported (epoch 7); brokers: no other fenced; no partition relies on broker 102 alone"},
			"❔ *Kafka's view:* unclear (quorum: no leader reported (epoch 7); brokers: no other fenced; no partition relies on broker 102 alone). " +
				"Approve will be refused until this clears."},
		{"not configured", slackview.KafkaView{},
			"➖ *Kafka's view:* not checked (no Kafka bootstrap address configured for this cluster)"},
		{"timeout", slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: "Kafka did not answer within 5s"},
			"❔ *Kafka's view:* unclear (Kafka did not answer within 5s). Approve will be refused until this clears."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.view.Text(); got != tt.want {
				t.Errorf("Text() =\n%s\nwant\n%s", got, tt.want)
			}
			d := seedView()
			d.Kafka = tt.view
			blocks := d.Message().Blocks
			var kafka, status, actions = -1, -1, -1
			for i, b := range blocks {
				switch b.ID() {
				case slackview.BlockKafka:
					kafka = i
				case slackview.BlockStatus:
					status = i
				case slackview.BlockActions:
					actions = i
				}
			}
			if kafka < 0 || kafka > status || status > actions {
				t.Fatalf("Kafka's view at block %d, status %d, buttons %d: want it just above them", kafka, status, actions)
			}
			if !strings.Contains(texts(t, blocks[kafka:kafka+1]), tt.want) {
				t.Errorf("the card's Kafka block does not say %q:\n%s", tt.want, texts(t, blocks[kafka:kafka+1]))
			}
			d.Token = ""
			if strings.Contains(texts(t, d.Message().Blocks), "Kafka's view") {
				t.Error("a card without buttons shows Kafka's view")
			}
		})
	}
}

// TestKafkaViewHostileAnswer: the line quotes what brokers answered (topic
// names, error texts); a hostile or huge answer gets one bounded line
// with no mention, link, formatting or control character of its own, and
// secret-looking settings scrubbed.
func TestKafkaViewHostileAnswer(t *testing.T) {
	var parts []string
	for i := range 3000 {
		parts = append(parts, "<!channel> *bold* `code` <https://evil.example|click> _x_\x00\x1b[31m\r\n"+strings.Repeat("t", i%300))
	}
	hostile := "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required password=\"hunter2-s3cret\"; " +
		strings.Join(parts, ", ")
	for _, outcome := range []slackview.KafkaOutcome{slackview.KafkaPass, slackview.KafkaFail, slackview.KafkaDefer} {
		got := slackview.KafkaView{Outcome: outcome, Line: hostile}.Text()
		if n := slackview.RuneLen(got); n > 240 {
			t.Errorf("outcome %d: %d characters, want at most 240", outcome, n)
		}
		for _, bad := range []string{"<!", "<http", "hunter2", "\x00", "\x1b", "\r", "\n", "`"} {
			if strings.Contains(got, bad) {
				t.Errorf("outcome %d: the line contains %q:\n%q", outcome, bad, got)
			}
		}
	}
}
