// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package escalation

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

func TestSlackAdapter(t *testing.T) {
	ctx := context.Background()
	client := kube.New(fake.NewClientset(), kube.Options{})
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, e := range []kube.Escalation{
		{Key: kube.KafkaClusterKeyOf("kafka", "a"), Pod: "a-broker-0", ApprovalID: "APPR-A", At: at},
		{Key: kube.KafkaClusterKeyOf("kafka", "b"), Pod: "b-broker-0", ApprovalID: "APPR-B", At: at.Add(time.Minute)},
	} {
		if _, _, err := client.Escalate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSlack(client)
	tests := []struct {
		pod, approval, want string
		found               bool
	}{
		{"b-broker-0", "APPR-B", "kafka/b", true},
		{"a-broker-1", "APPR-A", "kafka/a", true},     // the record the approval's repair left
		{"b-broker-0", "APPR-OTHER", "kafka/b", true}, // a record an earlier repair of the pod left
		{"c-broker-0", "APPR-C", "", false},
	}
	for _, tc := range tests {
		ref, found, err := s.EscalationFor(ctx, "kafka", tc.pod, tc.approval)
		if err != nil || found != tc.found || ref.KafkaCluster != tc.want {
			t.Errorf("EscalationFor(%s, %s) = %+v, %t, %v; want %q, %t", tc.pod, tc.approval, ref, found, err, tc.want, tc.found)
		}
	}
	if _, err := s.ClearEscalation(ctx, "kafka/a", ""); err == nil {
		t.Error("a clear naming no record was accepted")
	}
	if _, err := s.ClearEscalation(ctx, "not-a-key", "uid"); err == nil {
		t.Error("a malformed cluster key was accepted")
	}
}
