// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	_ "embed"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// metadataCrash is the seed incident's real crash log (testdata/SOURCES.md).
//
//go:embed testdata/34-kraft-metadata-log-unexpected-append-offset.log
var metadataCrash string

// startKubelet runs a kubesim kubelet for namespace ns for the test.
func startKubelet(t *testing.T, env *testenv.Env, ns string) *kubesim.Kubelet {
	t.Helper()
	k, err := kubesim.New(env.Clientset, kubesim.Options{
		NodeName: "node-" + ns, Namespaces: []string{ns}, ServeKubeletAPI: true, WorkDir: t.TempDir(), Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	return k
}

// TestBotInspectsACrashLoopingBroker runs the bot's own read path
// (kube.Client.Inspect), as the bot's ServiceAccount, against a broker the
// stand-in kubelet makes crash-loop: pod, claim, events and the previous
// container's log all come through the real API server, the log through
// pods/log and the kubelet API.
func TestBotInspectsACrashLoopingBroker(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	ns := env.KafkaNamespace(t, "kafka-inspect", nil)
	k := startKubelet(t, env, ns)

	if _, err := k.ProvisionClaim(ctx, ns, "data-kafka-broker-3", t.TempDir(), "8Gi"); err != nil {
		t.Fatal(err)
	}
	broker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "kafka-broker-3",
			Labels: map[string]string{
				"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "kafka",
				"app.kubernetes.io/component": "broker",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kafka-broker",
				UID: "00000000-0000-0000-0000-000000000003", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "kafka", Image: "bitnami/kafka:3.7.0",
				Env:          []corev1.EnvVar{{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "broker"}, {Name: "KAFKA_CFG_NODE_ID", Value: "3"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-kafka-broker-3"},
			}}},
		},
	}
	if _, err := env.Clientset.CoreV1().Pods(ns).Create(ctx, broker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the broker to be scheduled", func(ctx context.Context) (bool, error) {
		p, err := env.Clientset.CoreV1().Pods(ns).Get(ctx, broker.Name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == k.NodeName(), err
	})
	if err := k.CrashLoop(ctx, ns, broker.Name, metadataCrash); err != nil {
		t.Fatal(err)
	}

	botCS, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	client := kube.New(botCS, kube.Options{Namespaces: []string{ns}})
	in, err := client.Inspect(ctx, ns, broker.Name)
	if err != nil {
		t.Fatalf("Inspect as the bot: %v", err)
	}
	s := in.Snapshot
	if in.LogSource != kube.LogPrevious || s.Log != metadataCrash {
		t.Errorf("log from %s = %q, want the previous instance's %q", in.LogSource, s.Log, metadataCrash)
	}
	if len(s.Containers) != 1 || s.Containers[0].WaitingReason != "CrashLoopBackOff" || s.Containers[0].LastTerminated == nil {
		t.Errorf("containers = %+v, want kafka waiting in CrashLoopBackOff after a termination", s.Containers)
	}
	if len(s.Claims) != 1 || s.Claims[0].Phase != string(corev1.ClaimBound) {
		t.Errorf("claims = %+v, want data-kafka-broker-3 Bound", s.Claims)
	}
	if s.Node != k.NodeName() {
		t.Errorf("node = %q, want %q", s.Node, k.NodeName())
	}

	// The log read reached the kubelet as the bot's client asked for it.
	var logReads []kubesim.LogRequest
	for _, r := range k.LogRequests() {
		if r.Pod == broker.Name {
			logReads = append(logReads, r)
		}
	}
	if len(logReads) != 1 {
		t.Fatalf("kubelet API saw %d log reads of the broker, want 1: %+v", len(logReads), logReads)
	}
	r := logReads[0]
	opts := client.Options()
	switch {
	case !r.Previous || r.Container != "kafka":
		t.Errorf("kubelet saw container %q previous=%v, want kafka previous=true", r.Container, r.Previous)
	case r.TailLines == nil || *r.TailLines != opts.LogTailLines:
		t.Errorf("kubelet saw tailLines %v, want %d", r.TailLines, opts.LogTailLines)
	case r.LimitBytes == nil || *r.LimitBytes < opts.LogTailBytes:
		t.Errorf("kubelet saw limitBytes %v, want at least LogTailBytes %d", r.LimitBytes, opts.LogTailBytes)
	}
	if strings.Contains(s.Log, "fake logs") {
		t.Error("the log came from a fake, not the kubelet API")
	}
}
