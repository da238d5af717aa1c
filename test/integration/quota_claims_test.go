// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestResourceQuotaAllowsOneDebugPodAtATime backs README's advice for "one
// at a time per Kafka namespace": with the ResourceQuota it gives
// (`spec: {scopes: [Terminating], hard: {pods: "1"}}`), the bot's debug pod
// for one broker is admitted and a second, for another broker, is refused
// by the quota, because every debug pod has activeDeadlineSeconds (so is in
// the Terminating scope), while a broker pod, which has none, is not
// counted. The quota's usage is released by the quota controller, which the
// test API server does not run: "until the first has finished" is
// Kubernetes' part and not shown here; the test seeds the quota's status as
// that controller would.
func TestResourceQuotaAllowsOneDebugPodAtATime(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	ns := env.KafkaNamespace(t, fmt.Sprintf("kafka-quota-%d", hostileSeq.Add(1)), nil)
	bot, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	waitForAdmission(t, kube.New(bot, kube.Options{Namespaces: []string{ns}}), ns, kube.AdmissionEnforced)

	one := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	quota, err := env.Clientset.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "one-debug-pod"},
		Spec:       corev1.ResourceQuotaSpec{Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}, Hard: one},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	quota.Status = corev1.ResourceQuotaStatus{Hard: one, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}
	if _, err := env.Clientset.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, quota, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	layouts := hostile.Layouts(ns, "node-1")
	debugPod := func(i int) *corev1.Pod {
		pod, err := layouts[i].DebugPod()
		if err != nil {
			t.Fatal(err)
		}
		if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d <= 0 {
			t.Fatalf("the %s debug pod has no deadline (%v): it would not be in the Terminating scope", layouts[i].Name, d)
		}
		return pod
	}
	if _, err := bot.CoreV1().Pods(ns).Create(ctx, debugPod(0), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the first debug pod (%s) was refused: %v", layouts[0].Name, err)
	}
	_, err = bot.CoreV1().Pods(ns).Create(ctx, debugPod(1), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("a second debug pod (%s) while the first runs: %v, want refused by the quota", layouts[1].Name, err)
	}
	broker := layouts[1].Broker.DeepCopy()
	broker.UID, broker.Status = "", corev1.PodStatus{}
	if _, err := env.Clientset.CoreV1().Pods(ns).Create(ctx, broker, metav1.CreateOptions{}); err != nil {
		t.Errorf("a broker pod (no deadline) was refused under the debug pods' quota: %v", err)
	}
}
