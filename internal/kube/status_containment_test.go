// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// TestContainment2_KafkaPodsLeavesOutTheBotsOwnPods (issue 27 item 2,
// review finding 2): a pod labelled app.kubernetes.io/managed-by=kafkabot
// is one of the bot's debug pods, whatever Kafka labels it also carries: it
// is never counted as a Kafka pod (a stolen token could otherwise create a
// look-alike controller that satisfies the bot's own quorum gate). Before
// the fix KafkaPods listed it.
func TestContainment2_KafkaPodsLeavesOutTheBotsOwnPods(t *testing.T) {
	lookAlike := inspBitnamiPod("kafka", "kafkabot-repair-x", "controller-eligible")
	lookAlike.Labels[LabelManagedBy] = ManagedByBot
	lookAlike.Labels[LabelRepairID] = "x"
	lookAlike.Labels[LabelBroker] = "x"
	cs := fake.NewClientset(inspBitnamiPod("kafka", "foobar-kafka-broker-0", "broker"), lookAlike)
	c := New(cs, Options{Namespaces: []string{"kafka"}})
	snaps, err := c.KafkaPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range snaps {
		got = append(got, s.Pod)
	}
	if len(got) != 1 || got[0] != "foobar-kafka-broker-0" {
		t.Errorf("KafkaPods = %v, want only foobar-kafka-broker-0 (the bot's own pod is no Kafka pod)", got)
	}
}
