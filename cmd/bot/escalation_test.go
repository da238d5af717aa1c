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
	if err := listEscalations(ctx, client, &out); err != nil || !strings.Contains(out.String(), "No cluster is escalated") {
		t.Fatalf("empty list: %v\n%s", err, out.String())
	}
	key := kube.ClusterKeyOf("kafka", "foobar")
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if _, _, err := client.Escalate(ctx, kube.Escalation{Key: key, Pod: "foobar-kafka-broker-0", ApprovalID: "APPR1", Reason: "new pod crash-looping", At: at}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := listEscalations(ctx, client, &out); err != nil {
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
	for _, args := range [][]string{nil, {"frobnicate"}, {"clear"}, {"clear", "kafka"}, {"list", "extra"}} {
		var out, errOut strings.Builder
		if err := runEscalation(context.Background(), args, strings.NewReader(""), &out, &errOut); !errors.Is(err, errUsage) {
			t.Errorf("bot escalation %q: err %v, want a usage error", args, err)
		}
	}
}
