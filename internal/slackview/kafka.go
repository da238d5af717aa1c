// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import "github.com/kafka-chatops/kafkabot/internal/logging"

// BlockKafka is the card's line with Kafka's own view of the broker's
// cluster, just above the approval status and the buttons.
const BlockKafka = "kafkabot.kafka"

// KafkaOutcome is what Kafka's own view said when the card was posted.
type KafkaOutcome int

// Outcomes of the card's Kafka read. The zero value is KafkaNotChecked: no
// Kafka bootstrap address is configured for the broker's cluster.
const (
	KafkaNotChecked KafkaOutcome = iota
	KafkaPass
	KafkaFail
	KafkaDefer
)

// KafkaView is Kafka's own view of a broker's cluster, read once (the
// repair gate's BeforeMove, bounded by a short timeout) just before a card
// with Approve is posted. The card shows it as one line; the gate still
// decides again when Approve is clicked: the line informs, the gate is the
// safety.
type KafkaView struct {
	Outcome KafkaOutcome
	// Line is the read's one line as the gate words it (e.g. "quorum:
	// leader 1, 3/3 voters caught up; brokers: no other fenced; no
	// partition relies on broker 102 alone"), or why it could not be read.
	// It quotes a broker's answer: untrusted, escaped and cut here.
	Line string
}

// maxKafkaLine bounds the gate's line on the card, so that the card's
// line stays within two lines (a hostile or huge cluster's answer must not
// fill the message; the gate's thread at repair time says it in full).
const maxKafkaLine = 160

// kafkaRefused is what a failing or unclear view means for the buttons.
const kafkaRefused = " Approve will be refused until this clears."

// Text is the card's line: what Kafka's view said and what it means for
// Approve.
func (k KafkaView) Text() string {
	line := EscapeTruncate(OneLine(logging.ScrubSecrets(k.Line)), maxKafkaLine)
	switch k.Outcome {
	case KafkaPass:
		return "✅ *Kafka's view:* " + line
	case KafkaFail:
		return "⛔ *Kafka's view:* " + line + "." + kafkaRefused
	case KafkaDefer:
		return "❔ *Kafka's view:* unclear (" + line + ")." + kafkaRefused
	}
	return "➖ *Kafka's view:* not checked (no Kafka bootstrap address configured for this cluster)"
}
