// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// TestChartInstallOnARealNode replaces the kustomize install with the Helm
// chart (deploy/helm/kafkabot), installed as the README says, command by
// command: `kubectl create namespace`, `kubectl create secret generic`,
// `helm install --take-ownership` with values only (the image by digest, the
// Slack IDs, the Kafka namespace, the brokers' image repository for the
// admission policy, and in extraConfig the emulator's URL, the short settle
// period and the API server's real address, as there is no kube-proxy), then
// `helm test` (bot doctor); it measures the time from the first command to a
// Ready bot and to the doctor passing. The chart's bot then repairs a real
// Kafka broker crash-looping on the seed fault, as TestRealKafkaRepairs'
// repairs are proven (repairOne), on the smallest cluster its gates accept
// (3 controllers, one broker), and the doctor runs again, on the install as
// it is and on each problem of checkDoctor. It runs last (its file name
// sorts last): the tests before it use the kustomize install.
//
// Helm is hack/build-helm.sh's (HELM_BIN, which hack/test.sh exports).
func TestChartInstallOnARealNode(t *testing.T) {
	helmBin := os.Getenv("HELM_BIN")
	if helmBin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("HELM_BIN is not set: hack/test.sh sets it to the helm hack/build-helm.sh builds")
		}
		t.Skip("HELM_BIN is not set (hack/test.sh sets it): the chart install is not tried")
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	// Uninstall the kustomize install, waiting until its namespace is gone.
	if out, err := env.run(ctx, "delete", "-k", env.overlay, "--wait=true", "--timeout=180s"); err != nil {
		t.Fatalf("kubectl delete -k: %v\n%s", err, out)
	}
	if err := waitFor(ctx, time.Minute, func() (bool, error) { return env.emu.OpenConnections() == 0, nil }); err != nil {
		t.Fatalf("the kustomize install's bots are still connected to Slack: %v", err)
	}

	// The README's install, literally: step 2's namespace and Secret, step
	// 3's helm install with values only, step 5's helm test; timed from the
	// first command to a Ready bot and to the doctor passing (the images are
	// on the node already: a newcomer's first pull comes on top).
	dir := t.TempDir()
	values := fmt.Sprintf(`kafkaNamespaces: [%s]
slack:
  alertChannel: %s
  approvers: [%s]
  approvalChannels: [%s]
image:
  repository: kafkabot.local/kafkabot
admissionPolicy:
  debugImageRepositories: [%s]
extraConfig:
  SLACK_API_URL: %q
  REPAIR_SETTLE: 20s
  KUBERNETES_SERVICE_HOST: %q
  KUBERNETES_SERVICE_PORT: "6443"
`, kafkaNS, alertChannel, approver, channel, kafkaImageRepo, env.emu.APIURL(), env.nodeIP)
	if err := os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	helm := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, helmBin, args...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(dir, "cache"), "HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
			"HELM_DATA_HOME="+filepath.Join(dir, "data"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	helmTest := func() (string, error) {
		return helm("test", "kafkabot", "--namespace", botNS, "--logs", "--timeout", "120s")
	}
	installing := time.Now()
	for _, step := range []struct {
		what string
		run  func() (string, error)
	}{
		{"kubectl create namespace", func() (string, error) { return env.run(ctx, "create", "namespace", botNS) }},
		{"kubectl create secret", func() (string, error) {
			return env.run(ctx, "-n", botNS, "create", "secret", "generic", "kafka-bot", "--from-literal=SLACK_APP_TOKEN="+slackemu.DefaultAppToken,
				"--from-literal=SLACK_BOT_TOKEN="+slackemu.DefaultBotToken, "--from-literal=APPROVAL_SECRET="+approvalSecret)
		}},
		{"helm install", func() (string, error) {
			return helm("install", "kafkabot", filepath.Join(env.repoRoot, "deploy", "helm", "kafkabot"), "--namespace", botNS, "--take-ownership",
				"-f", filepath.Join(dir, "values.yaml"), "--set", "image.digest="+env.images[botImageName].ManifestDigest)
		}},
		{"kubectl rollout status", func() (string, error) {
			return env.run(ctx, "-n", botNS, "rollout", "status", "deployment/kafka-bot", "--timeout=180s")
		}},
	} {
		if out, err := step.run(); err != nil {
			t.Fatalf("%s: %v\n%s", step.what, err, out)
		}
	}
	measure(t, "README install: first command to a Ready bot", time.Since(installing))
	if out, err := helmTest(); err != nil || !strings.Contains(out, "no problems found") {
		t.Fatalf("helm test (bot doctor) on the fresh install: %v\n%s", err, out)
	}
	measure(t, "README install: first command to helm test (bot doctor) passing", time.Since(installing))
	if err := waitFor(ctx, time.Minute, func() (bool, error) { return env.emu.OpenConnections() >= 2, nil }); err != nil {
		t.Fatalf("the chart's bots did not connect to Slack: %v", err)
	}

	// It is the chart's install: its policy, its pods.
	vap, err := env.admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, hostile.PolicyName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vap.Annotations["meta.helm.sh/release-name"] != "kafkabot" {
		t.Errorf("the admission policy is not the chart's: annotations %v", vap.Annotations)
	}
	pods, err := env.admin.CoreV1().Pods(botNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=kafkabot,app.kubernetes.io/name=kafkabot"})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.Containers[0].Image == "kafkabot.local/kafkabot@"+env.images[botImageName].ManifestDigest {
			running++
		}
	}
	if running != 2 {
		t.Fatalf("%d running chart bot pods on the image by digest, want 2", running)
	}

	// A repair by the chart's bot, on real Kafka.
	k := newKafkaCluster(t, "chart", newestKafka, 1, false, bitnamiLayout)
	k.writeData("start")
	if !t.Run(seedFault.name, func(t *testing.T) { k.repairOne(t, seedFault, repairHow{}) }) {
		t.FailNow()
	}

	// bot doctor finds each problem of an install, and passes on this one.
	checkDoctor(t, helmTest)
	measure(t, "the whole chart test (uninstall, install, repair, doctor)", time.Since(began))
}
