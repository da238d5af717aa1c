// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// allowRootAnnotation is the bot namespace's opt-in for root debug pods.
const allowRootAnnotation = "kafkabot.io/allow-root-broker"

// TestRootBrokerOptInNeedsTheNamespaceAnnotation backs README's "Root
// brokers": the debug pod the bot builds for a broker running as uid 0
// with ALLOW_ROOT_BROKER=true (recovery.DebugPodInput.AllowRoot) is
// admitted only while the bot's namespace carries
// kafkabot.io/allow-root-broker "true"; absent or any other value, the
// policy refuses it, naming the opt-in. The setting alone cannot give a
// leaked token a root pod; the annotation alone does not make the bot
// build one (TestDebugPodRootRefusalIsTheDiagnosisCheck). A broker's
// non-root debug pod is admitted throughout.
func TestRootBrokerOptInNeedsTheNamespaceAnnotation(t *testing.T) {
	env := testenv.Start(t)
	b := installAs(t, env, fmt.Sprintf("chatops-rootopt-%d", hostileSeq.Add(1)), "kafka-bot", true)
	bot, err := kubernetes.NewForConfig(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitForAdmission(t, kube.New(bot, kube.Options{Namespaces: []string{b.kafkaNS}}), b.kafkaNS, kube.AdmissionEnforced)

	layout := hostile.Layouts(b.kafkaNS, "node-1")[1] // Strimzi: uid set on the pod
	rootBroker := layout.Broker.DeepCopy()
	rootBroker.Spec.SecurityContext.RunAsUser = ptr.To[int64](0)
	rootDebug, err := recovery.DebugPod(recovery.DebugPodInput{
		Broker: rootBroker, KafkaContainer: layout.KafkaContainer, ClaimNames: layout.Claims,
		RepairID: "rootopt-" + rootBroker.Name, AllowRoot: true,
		Script: recovery.ScriptInput{Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "3",
			BackupName: recovery.BackupName("rootopt", time.Date(2026, 4, 28, 8, 22, 1, 0, time.UTC))},
	})
	if err != nil {
		t.Fatalf("building the root broker's debug pod with AllowRoot: %v", err)
	}
	if u := rootDebug.Spec.SecurityContext.RunAsUser; u == nil || *u != 0 {
		t.Fatalf("the root broker's debug pod runs as %v, want uid 0 (else this test shows nothing)", u)
	}
	plainDebug, err := layout.DebugPod()
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name       string
		annotation *string // nil: absent
		admitted   bool
	}{
		{"annotation absent", nil, false},
		{"annotation true", ptr.To("true"), true},
		{"annotation false", ptr.To("false"), false},
		{"annotation yes", ptr.To("yes"), false},
		{"annotation removed again", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testContext(t)
			value := "null"
			if c.annotation != nil {
				value = fmt.Sprintf("%q", *c.annotation)
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, allowRootAnnotation, value)
			if _, err := env.Clientset.CoreV1().Namespaces().Patch(ctx, b.namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			// The API server reads the policy's parameters asynchronously.
			var last error
			testenv.WaitFor(t, "the policy to apply the annotation", func(ctx context.Context) (bool, error) {
				_, last = bot.CoreV1().Pods(b.kafkaNS).Create(ctx, rootDebug.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if c.admitted {
					return last == nil, nil
				}
				return hostile.RefusedByPolicy(last), nil
			})
			if !c.admitted && !strings.Contains(last.Error(), allowRootAnnotation) {
				t.Errorf("the refusal does not name the opt-in %s: %v", allowRootAnnotation, last)
			}
			if _, err := bot.CoreV1().Pods(b.kafkaNS).Create(ctx, plainDebug.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("a non-root broker's debug pod was refused: %v", err)
			}
		})
	}
}
