// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestSafety02_EscalationRecordOnTheRealAPIServer: the per-cluster
// escalation record, as the bot's ServiceAccount on a real API server: the
// first escalation is kept (create-if-absent, a second replica gets the
// first record back), it lists, and a clear removes only the record it
// names, so a stale button cannot clear a newer escalation.
func TestSafety02_EscalationRecordOnTheRealAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	ns := env.KafkaNamespace(t, "kafka-escalation", nil)
	var replicas []*kube.Client
	for range 2 {
		cs, err := kubernetes.NewForConfig(env.BotConfig())
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, kube.New(cs, kube.Options{Namespaces: []string{ns}}))
	}
	key := kube.KafkaClusterKeyOf(ns, "foobar")
	at := time.Now().UTC()

	first, created, err := replicas[0].Escalate(ctx, kube.Escalation{Key: key, Pod: "foobar-kafka-broker-0", ApprovalID: "A1", Reason: "crashed again", At: at})
	if err != nil || !created || first.UID == "" {
		t.Fatalf("first escalation = %+v, created %t, %v", first, created, err)
	}
	second, created, err := replicas[1].Escalate(ctx, kube.Escalation{Key: key, Pod: "foobar-kafka-broker-1", ApprovalID: "A2", Reason: "also", At: at})
	if err != nil || created || second.UID != first.UID || second.Pod != "foobar-kafka-broker-0" {
		t.Fatalf("second escalation = %+v, created %t, %v; want the first record back", second, created, err)
	}
	lease, err := env.Clientset.CoordinationV1().Leases(ns).Get(ctx, kube.EscalationLeaseName(key), metav1.GetOptions{})
	if err != nil || lease.Labels[kube.LabelRecord] != "escalation" {
		t.Fatalf("the record is not the Lease %s labelled as an escalation: %v %v", kube.EscalationLeaseName(key), err, lease)
	}
	list, err := replicas[1].Escalations(ctx, ns)
	if err != nil || len(list) != 1 || list[0].Key != key || list[0].Reason != "crashed again" {
		t.Fatalf("Escalations = %+v, %v", list, err)
	}

	if _, err := replicas[1].ClearEscalation(ctx, key, "not-its-uid"); !errors.Is(err, kube.ErrNoEscalation) {
		t.Fatalf("clear with another record's UID: %v, want ErrNoEscalation", err)
	}
	if _, err := replicas[1].ClearEscalation(ctx, key, first.UID); err != nil {
		t.Fatalf("clear: %v", err)
	}
	again, created, err := replicas[0].Escalate(ctx, kube.Escalation{Key: key, Pod: "foobar-kafka-broker-2", ApprovalID: "A3", Reason: "third", At: at})
	if err != nil || !created || again.UID == first.UID {
		t.Fatalf("re-escalation = %+v, created %t, %v", again, created, err)
	}
	if _, err := replicas[1].ClearEscalation(ctx, key, first.UID); !errors.Is(err, kube.ErrNoEscalation) {
		t.Errorf("a stale clear (the first record's UID) removed the newer escalation: %v", err)
	}
	if _, found, err := replicas[1].GetEscalation(ctx, key); err != nil || !found {
		t.Errorf("the newer escalation is gone: found %t, %v", found, err)
	}
}
