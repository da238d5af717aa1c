// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package alert

import (
	"testing"
	"time"
)

// TestKeys: an alert's pod key and a Kafka cluster's key are the silence
// keys the sweep matches and the Slack buttons sign, so their shape is
// part of the persisted state.
func TestKeys(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"pod", Alert{Key: "kafka/broker-0/rule", Namespace: "kafka", Pod: "broker-0"}.PodKey(), "kafka/broker-0"},
		{"kafka cluster", KafkaClusterKey("kafka", "foobar"), "cluster:kafka/foobar"},
		{"kafka cluster unknown", KafkaClusterKey("kafka", ""), "cluster:kafka/"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestMessageRefIsZero(t *testing.T) {
	tests := []struct {
		ref  MessageRef
		want bool
	}{
		{MessageRef{}, true},
		{MessageRef{Channel: "C1"}, false},
		{MessageRef{TS: "1.2"}, false},
	}
	for _, tt := range tests {
		if got := tt.ref.IsZero(); got != tt.want {
			t.Errorf("%+v.IsZero() = %v, want %v", tt.ref, got, tt.want)
		}
	}
}

func TestSilenceActive(t *testing.T) {
	until := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := Silence{ID: "s1", Key: "kafka/broker-0", Until: until}
	tests := []struct {
		at   time.Time
		want bool
	}{
		{until.Add(-time.Second), true},
		{until, false},
		{until.Add(time.Second), false},
	}
	for _, tt := range tests {
		if got := s.Active(tt.at); got != tt.want {
			t.Errorf("Active(%s) = %v, want %v", tt.at, got, tt.want)
		}
	}
}
