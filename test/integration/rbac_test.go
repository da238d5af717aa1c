// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// botClients returns the admin clientset and one acting as the bot.
func botClients(t *testing.T, env *testenv.Env) (admin, bot kubernetes.Interface) {
	t.Helper()
	bot, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	return env.Clientset, bot
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// debugPod is a pod the bot is allowed to create: labelled as its own, no
// ServiceAccount token, nothing from the host.
func debugPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "kafkabot"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "repair", Image: "busybox:1.36", Command: []string{"sh", "-c", "true"}}},
		},
	}
}

// TestBotIsRefused shows RBAC is enforced and deploy/ grants nothing
// beyond the Kafka namespaces and never Secrets: each request, made as the
// bot's ServiceAccount, must come back 403 Forbidden.
func TestBotIsRefused(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	admin, bot := botClients(t, env)
	kafka := env.KafkaNamespace(t, "kafka-refused", nil)
	other := env.Namespace(t, "not-kafka", nil)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "broker-jaas", Namespace: kafka}, StringData: map[string]string{"password": "s3cret"}}
	if _, err := admin.CoreV1().Secrets(kafka).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Pods(other).Create(ctx, debugPod("elsewhere"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		do   func() error
	}{
		{"get a Secret in the Kafka namespace", func() error {
			_, err := bot.CoreV1().Secrets(kafka).Get(ctx, "broker-jaas", metav1.GetOptions{})
			return err
		}},
		{"list Secrets in the Kafka namespace", func() error {
			_, err := bot.CoreV1().Secrets(kafka).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list Secrets in its own namespace", func() error {
			_, err := bot.CoreV1().Secrets(testenv.BotNamespace).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list pods where no RoleBinding exists", func() error {
			_, err := bot.CoreV1().Pods(other).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get a pod where no RoleBinding exists", func() error {
			_, err := bot.CoreV1().Pods(other).Get(ctx, "elsewhere", metav1.GetOptions{})
			return err
		}},
		{"delete a pod where no RoleBinding exists", func() error {
			return bot.CoreV1().Pods(other).Delete(ctx, "elsewhere", metav1.DeleteOptions{})
		}},
		{"list pods in all namespaces", func() error {
			_, err := bot.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list nodes", func() error {
			_, err := bot.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create a ConfigMap in the Kafka namespace", func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
			_, err := bot.CoreV1().ConfigMaps(kafka).Create(ctx, cm, metav1.CreateOptions{})
			return err
		}},
		{"list StatefulSets in the Kafka namespace", func() error {
			_, err := bot.AppsV1().StatefulSets(kafka).List(ctx, metav1.ListOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !apierrors.IsForbidden(err) {
				t.Fatalf("want 403 Forbidden, got %v", err)
			}
		})
	}
}

// TestBotCanDoItsJob performs, as the bot, each kind of request its code
// makes in a Kafka namespace, for real.
func TestBotCanDoItsJob(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	admin, bot := botClients(t, env)
	kafka := env.KafkaNamespace(t, "kafka-allowed", nil)

	layout := hostile.Layouts(kafka, "node-1")[0] // Bitnami: kafka-broker-0, claim data-kafka-broker-0
	broker := layout.Broker.DeepCopy()
	broker.UID, broker.Status, broker.Spec.NodeName = "", corev1.PodStatus{}, ""
	if _, err := admin.CoreV1().Pods(kafka).Create(ctx, broker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	debug, err := layout.DebugPod()
	if err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-kafka-broker-0"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *mustQuantity(t, "1Gi")}},
		},
	}
	if _, err := admin.CoreV1().PersistentVolumeClaims(kafka).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name string
		do   func() error
	}{
		{"get a broker pod", func() error {
			_, err := bot.CoreV1().Pods(kafka).Get(ctx, "kafka-broker-0", metav1.GetOptions{})
			return err
		}},
		{"list pods", func() error {
			_, err := bot.CoreV1().Pods(kafka).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kafka"})
			return err
		}},
		{"watch pods", func() error {
			w, err := bot.CoreV1().Pods(kafka).Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}},
		{"get a claim", func() error {
			_, err := bot.CoreV1().PersistentVolumeClaims(kafka).Get(ctx, "data-kafka-broker-0", metav1.GetOptions{})
			return err
		}},
		{"list claims", func() error {
			_, err := bot.CoreV1().PersistentVolumeClaims(kafka).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create an event", func() error {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{GenerateName: "broker-0."},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: kafka, Name: "broker-0", APIVersion: "v1"},
				Reason:         "KafkaBotRepair", Message: "moved __cluster_metadata-0 to the backup", Type: corev1.EventTypeNormal,
				Source: corev1.EventSource{Component: "kafkabot"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
			}
			_, err := bot.CoreV1().Events(kafka).Create(ctx, ev, metav1.CreateOptions{})
			return err
		}},
		{"list events", func() error {
			_, err := bot.CoreV1().Events(kafka).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broker-0"})
			return err
		}},
		{"create a debug pod", func() error {
			_, err := bot.CoreV1().Pods(kafka).Create(ctx, debug, metav1.CreateOptions{})
			return err
		}},
		{"delete the debug pod", func() error {
			return bot.CoreV1().Pods(kafka).Delete(ctx, debug.Name, metav1.DeleteOptions{})
		}},
		{"delete the broker pod to restart it", func() error {
			return bot.CoreV1().Pods(kafka).Delete(ctx, broker.Name, metav1.DeleteOptions{})
		}},
		{"create, read, list and update a repair lease", func() error {
			leases := bot.CoordinationV1().Leases(kafka)
			l, err := leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "kafkabot-repair-broker-0"},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("bot-1")},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if l, err = leases.Get(ctx, l.Name, metav1.GetOptions{}); err != nil {
				return err
			}
			if _, err = leases.List(ctx, metav1.ListOptions{}); err != nil {
				return err
			}
			l.Spec.HolderIdentity = ptr.To("bot-2")
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			return err
		}},
		{"hold the leader-election lease in its own namespace", func() error {
			leases := bot.CoordinationV1().Leases(testenv.BotNamespace)
			l, err := leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "kafkabot-sweep-leader-" + kafka},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("bot-1")},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if l, err = leases.Get(ctx, l.Name, metav1.GetOptions{}); err != nil {
				return err
			}
			l.Spec.HolderIdentity = ptr.To("bot-2")
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			return err
		}},
		{"keep alert state in its ConfigMap in its own namespace", func() error {
			// Its own copy of the bot's namespace, so that no other test's
			// state is touched: the Role there is deploy/'s.
			self := env.SelfNamespace(t, "kafka-bot-self-"+kafka)
			cms := bot.CoreV1().ConfigMaps(self)
			cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kafkabot-alert-state"}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			cm.Data = map[string]string{"state": "{}"}
			if _, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				return err
			}
			if _, err = cms.Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
				return err
			}
			w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kafkabot-alert-state"})
			if err != nil {
				return err
			}
			w.Stop()
			_, err = cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kafkabot-alert-state"})
			return err
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
}
