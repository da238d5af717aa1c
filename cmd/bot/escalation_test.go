// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

func TestEscalationListAndClear(t *testing.T) {
	ctx := context.Background()
	client := kube.New(fake.NewClientset(), kube.Options{Namespaces: []string{"kafka"}})
	var out strings.Builder
	if err := listEscalations(ctx, client, "", &out); err != nil || !strings.Contains(out.String(), "No cluster is escalated") {
		t.Fatalf("empty list: %v\n%s", err, out.String())
	}
	key := kube.KafkaClusterKeyOf("kafka", "foobar")
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if _, _, err := client.Escalate(ctx, kube.Escalation{Key: key, Pod: "foobar-kafka-broker-0", ApprovalID: "APPR1", Reason: "new pod crash-looping", At: at}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := listEscalations(ctx, client, "", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kafka/foobar", "2026-11-29T12:00:00Z", "foobar-kafka-broker-0", "APPR1", "new pod crash-looping", "bot escalation clear"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := clearEscalation(ctx, client, key, false, strings.NewReader("no\n"), &out); err == nil || !strings.Contains(err.Error(), "stays escalated") {
		t.Errorf("answer no: %v", err)
	}
	if _, found, _ := client.GetEscalation(ctx, key); !found {
		t.Fatal("answering no cleared the escalation")
	}
	out.Reset()
	if err := clearEscalation(ctx, client, key, false, strings.NewReader("yes\n"), &out); err != nil {
		t.Fatalf("answer yes: %v", err)
	}
	if _, found, _ := client.GetEscalation(ctx, key); found {
		t.Error("the escalation is still there after clear")
	}
	if err := clearEscalation(ctx, client, key, true, strings.NewReader(""), &out); err == nil || !strings.Contains(err.Error(), "is not escalated") {
		t.Errorf("clearing a cluster that is not escalated: %v", err)
	}
}

func TestRunEscalationUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing list or clear"},
		{[]string{"frobnicate"}, `unknown verb "frobnicate": want list or clear`},
		{[]string{"clear"}, "missing NAMESPACE/CLUSTER"},
		{[]string{"clear", "kafka/a/b"}, `cluster "kafka/a/b": want namespace/cluster`},
		{[]string{"clear", "a", "b"}, "one NAMESPACE/CLUSTER expected, got 2"},
		{[]string{"list", "extra"}, `unexpected argument "extra"`},
		{[]string{"list", "-n", "kafka", "-A"}, "exclude each other"},
		{[]string{"list", "--yes"}, "unknown flag: --yes"},
	}
	for _, tt := range tests {
		_, _, err := execute(t, "", append([]string{"escalation"}, tt.args...)...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("bot escalation %q: err %v, want a usage error saying %q", tt.args, err, tt.want)
		}
	}
}

// TestEscalationListNamespace: -n lists one namespace, and one outside
// KAFKA_NAMESPACES is refused rather than listed.
func TestEscalationListNamespace(t *testing.T) {
	ctx := context.Background()
	client := kube.New(fake.NewClientset(), kube.Options{Namespaces: []string{"kafka", "kafka-2"}})
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, key := range []kube.KafkaClusterKey{kube.KafkaClusterKeyOf("kafka", "one"), kube.KafkaClusterKeyOf("kafka-2", "two")} {
		if _, _, err := client.Escalate(ctx, kube.Escalation{Key: key, Pod: "p", ApprovalID: "A", Reason: "r", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := listEscalations(ctx, client, "kafka-2", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kafka-2/two") || strings.Contains(out.String(), "kafka/one") {
		t.Errorf("-n kafka-2 listed:\n%s", out.String())
	}
	out.Reset()
	if err := listEscalations(ctx, client, "", &out); err != nil || !strings.Contains(out.String(), "kafka-2/two") || !strings.Contains(out.String(), "kafka/one") {
		t.Errorf("all namespaces: %v\n%s", err, out.String())
	}
	if err := listEscalations(ctx, client, "default", &out); !errors.Is(err, kube.ErrNamespaceNotAllowed) {
		t.Errorf("a namespace outside KAFKA_NAMESPACES: %v", err)
	}
}
