// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkafake_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kafkafake"
)

// Healthy is a KRaft cluster of controllers 1-3 and brokers 101-103 with
// one topic of replication factor 3.
func healthy() kafkafake.Cluster {
	return kafkafake.Cluster{
		Brokers: []int32{101, 102, 103}, Leader: 1, Voters: []int32{1, 2, 3}, Observers: []int32{101, 102, 103}, MinISR: 2,
		Partitions: []kafkahealth.Partition{
			{Topic: "orders", Partition: 0, Leader: 101, Replicas: []int32{101, 102, 103}, ISR: []int32{101, 102, 103}},
			{Topic: "orders", Partition: 1, Leader: 102, Replicas: []int32{102, 103, 101}, ISR: []int32{102, 103, 101}},
		},
	}
}

// TestHealthReadOverTheProtocol: the bot's real client reads the fake's
// picture over the Kafka protocol and decides on it as on a real cluster.
func TestHealthReadOverTheProtocol(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tt := range []struct {
		name   string
		change func(*kafkafake.Cluster)
		want   kafkahealth.Verdict
		line   string
	}{
		{"healthy", func(*kafkafake.Cluster) {}, kafkahealth.Pass,
			"quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on broker 102 alone"},
		{"another broker fenced", func(c *kafkafake.Cluster) { c.Fenced = map[int32]bool{103: true} }, kafkahealth.Fail,
			"quorum: leader 1, 3/3 voters caught up; brokers: 103 fenced too: one broker at a time; no partition relies on broker 102 alone"},
		{"no quorum leader", func(c *kafkafake.Cluster) { c.Leader = -1 }, kafkahealth.Defer,
			"quorum: no leader reported (epoch 5); brokers: no other fenced; no partition relies on broker 102 alone"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := healthy()
			tt.change(&c)
			s, err := kafkafake.Start(c)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cl, err := kafkahealth.Dial(kafkahealth.Settings{Bootstrap: []string{s.Addr()}, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			v := cl.Read(ctx)
			if len(v.Problems) > 0 {
				t.Fatalf("problems reading the fake: %v", v.Problems)
			}
			if d := kafkahealth.BeforeMove(v, 102); d.Verdict != tt.want || d.Line != tt.line {
				t.Errorf("BeforeMove = %v %q, want %v %q", d.Verdict, d.Line, tt.want, tt.line)
			}
		})
	}
}
