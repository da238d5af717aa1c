// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

func TestKafkaGateWiring(t *testing.T) {
	if kafkaGate(nil, nil) != nil {
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

	// The Secret is read with the cluster's own client; a missing key
	// defers and names the key, never a value.
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "kafkabot"},
		Data: map[string][]byte{"username": []byte("bot")}})
	g := kafkaGate([]fleet.KafkaAccess{{Namespace: "kafka", Bootstrap: []string{"127.0.0.1:1"}, SASLMechanism: "PLAIN",
		Secret: &fleet.SecretKeys{Name: "kafkabot"}}}, cs)
	c := g.BeforeMove(context.Background(), diagnose.Snapshot{Namespace: "kafka", NodeID: "4"})
	if c.Verdict != recovery.KafkaDefer || !strings.Contains(c.Line, `the Secret kafka/kafkabot has no key "password"`) {
		t.Errorf("BeforeMove = %+v, want a deferral naming the missing key", c)
	}
	if c := g.AfterRestart(context.Background(), diagnose.Snapshot{Namespace: "elsewhere", NodeID: "4"}); c.Verdict != recovery.KafkaNotChecked {
		t.Errorf("another namespace: %+v, want not checked", c)
	}
}
