// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// outsideRepository is where Bitnami moved its images in 2025, a
// repository deploy/'s debug-image allow-list does not name.
const outsideRepository = "docker.io/bitnamilegacy/kafka"

// TestServeProbesDebugImagesAndWarns backs README's "Debug images outside
// the allow-list": `bot serve` asks the admission policy at start and then
// every interval (5 minutes by default), by a server-side dry run that
// stores nothing; a broker whose image the allow-list does not name is
// logged once as a WARN naming the repository and the fix, and its
// diagnosis offers no Approve and says why. The broker appears only after
// the first probes, so seeing it shows the probe runs again.
func TestServeProbesDebugImagesAndWarns(t *testing.T) {
	if DefaultImageProbeInterval != 5*time.Minute {
		t.Errorf("DefaultImageProbeInterval = %v; README says every 5 minutes", DefaultImageProbeInterval)
	}
	env := testenv.Start(t)
	ns := env.KafkaNamespace(t, "serve-images", nil)
	emu, err := slackemu.New(slackemu.Options{PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Close)
	logs := &logging.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const interval = 100 * time.Millisecond
	server, err := New(ctx, Options{
		Settings:           settings(emu, ns),
		Clusters:           []Cluster{{Name: "a", Config: env.BotConfig(), KafkaNamespaces: []string{ns}}},
		Identity:           "serve-images-test",
		Logger:             slog.New(slog.NewJSONHandler(logs, nil)),
		ImageProbeInterval: interval,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if t.Failed() {
			t.Logf("bot log:\n%s", logs.String())
		}
	}()
	client := server.clusters[0].client
	testenv.WaitFor(t, "the admission self-check to find the policy enforced", func(ctx context.Context) (bool, error) {
		return client.CheckAdmission(ctx, ns).Enforced(), nil
	})
	time.Sleep(3 * interval) // probes of a namespace without brokers
	if warns := records(t, logs, "debug-image check", nil); len(warns) != 0 {
		t.Fatalf("warnings before any broker exists: %v", warns)
	}

	broker, err := hostile.CreateRunningBroker(ctx, env.Clientset, ns, outsideRepository+"@sha256:"+strings.Repeat("0d", 32))
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]string{"namespace": ns, "pod": broker.Name, "repository": outsideRepository, "cluster": "a"}
	testenv.WaitFor(t, "a WARN naming the repository", func(context.Context) (bool, error) {
		return len(records(t, logs, "debug-image check: a broker's image is not in the debug-image allow-list", want)) > 0, nil
	})
	time.Sleep(5 * interval) // more probes: the warning stays one
	warns := records(t, logs, "debug-image check", nil)
	if len(warns) != 1 {
		t.Fatalf("%d debug-image warnings, want one: %v", len(warns), warns)
	}
	if fix, _ := warns[0]["fix"].(string); warns[0]["level"] != "WARN" || !strings.Contains(fix, "kafkabot.io/debug-image-repositories") {
		t.Errorf("warning %v: want level WARN and a fix naming the annotation", warns[0])
	}

	in, err := client.Inspect(ctx, ns, broker.Name)
	if err != nil {
		t.Fatal(err)
	}
	if r := in.Snapshot.RepairRefusal; !strings.Contains(r, outsideRepository+" is not in the debug-image allow-list") {
		t.Errorf("the diagnosis's repair refusal is %q; want it to say the repository is outside the allow-list (no Approve)", r)
	}
	pods, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Errorf("pods in %s after the probes: %d (%v), want only the broker (a dry run stores nothing)", ns, len(pods.Items), err)
	}
}
