// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package hostile is what a stolen kafkabot ServiceAccount token tries, and
// what it must still be allowed to do: a table of forbidden request shapes
// (pods the bot never builds, deletes of other pods, other Leases, the bot's
// settings, Secrets) and the bot's real debug pod for each supported Kafka
// layout. test/integration runs it against a real kube-apiserver with
// deploy/'s RBAC and admission policy; the same table can run against any
// cluster with the bot's real token, because every write is a server-side
// dry run (admission runs, nothing is stored).
//
// On a real cluster: run Install as an admin first (it creates the objects
// the shapes aim at), and use a Kafka namespace without Pod Security
// "enforce: restricted" (or expect Shape.Check to report the shapes that
// Pod Security admission refuses before the policy sees them: the check
// insists on the layer and the rule that refuse each shape). The bot's
// Namespace must list docker.io/bitnami/kafka (BrokerImage's repository) in
// kafkabot.io/debug-image-repositories, as deploy/ does by default, and its
// kafkabot.io/broker-pods and kafkabot.io/broker-claims must name the
// layouts' brokers: deploy/'s defaults name the Bitnami and Strimzi ones,
// BrokerParams all four.
package hostile

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// BrokerImage is the image the layouts' brokers run, pinned by digest as
// the kubelet reports it in the container status.
const BrokerImage = "docker.io/bitnami/kafka@sha256:" + "5b0f6c8f2f8c2f64e0f4d9f7a4c0f1a8e9b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3"

// Layout is one way Kafka brokers are deployed that the bot repairs.
type Layout struct {
	// Name describes the layout.
	Name string
	// Broker is a crash-looping broker pod of this layout, scheduled to a
	// node, in the namespace given to Layouts.
	Broker *corev1.Pod
	// KafkaContainer names its Kafka container.
	KafkaContainer string
	// Claims are the claims the repair mounts.
	Claims []string
}

// Layouts returns a broker of each supported layout in namespace ns, on
// node: the Bitnami chart (one claim, uid 1001), Strimzi KRaft node pools
// (JBOD, two claims, identity at pod level, StrimziPodSet), Confluent for
// Kubernetes, and plain manifests (app=kafka, no uid: the image's user).
func Layouts(ns, node string) []Layout {
	owner := func(kind, name string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name,
			UID: types.UID("00000000-0000-4000-8000-" + fmt.Sprintf("%012d", len(name))), Controller: ptr.To(true)}}
	}
	pvc := func(vol, claim string) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
	}
	status := func(container string) corev1.PodStatus {
		return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: container, Image: "docker.io/bitnami/kafka:3.7.0", ImageID: BrokerImage, RestartCount: 7,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		}}}
	}
	nonRoot := func() *corev1.SecurityContext {
		return &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}
	}

	bitnami := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka-broker-0", Namespace: ns, UID: "b0000000-0000-4000-8000-000000000001",
			Labels: map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "kafka",
				"app.kubernetes.io/component": "broker"},
			OwnerReferences: owner("StatefulSet", "kafka-broker")},
		Spec: corev1.PodSpec{
			NodeName: node,
			SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1001),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "kafka", Image: "docker.io/bitnami/kafka:3.7.0",
				SecurityContext: func() *corev1.SecurityContext {
					sc := nonRoot()
					sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot = ptr.To[int64](1001), ptr.To[int64](1001), ptr.To(true)
					return sc
				}(),
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}}}},
			Volumes: []corev1.Volume{pvc("data", "data-kafka-broker-0")},
		},
		Status: status("kafka"),
	}

	strimzi := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "my-cluster-brokers-3", Namespace: ns, UID: "b0000000-0000-4000-8000-000000000002",
			Labels: map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "my-cluster",
				"strimzi.io/name": "my-cluster-kafka", "strimzi.io/broker-role": "true", "strimzi.io/controller-role": "false",
				"strimzi.io/pool-name": "brokers"},
			OwnerReferences: owner("StrimziPodSet", "my-cluster-brokers")},
		Spec: corev1.PodSpec{
			NodeName: node,
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1001), FSGroup: ptr.To[int64](0),
				SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c123,c456"}},
			Containers: []corev1.Container{{Name: "kafka", Image: "quay.io/strimzi/kafka:0.45.0-kafka-3.9.0",
				VolumeMounts: []corev1.VolumeMount{{Name: "data-0", MountPath: "/var/lib/kafka/data-0"}, {Name: "data-1", MountPath: "/var/lib/kafka/data-1"}}}},
			Volumes: []corev1.Volume{pvc("data-0", "data-0-my-cluster-brokers-3"), pvc("data-1", "data-1-my-cluster-brokers-3")},
		},
		Status: status("kafka"),
	}

	confluent := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka-2", Namespace: ns, UID: "b0000000-0000-4000-8000-000000000003",
			Labels:          map[string]string{"platform.confluent.io/type": "kafka", "app": "kafka", "clusterId": "confluent"},
			OwnerReferences: owner("StatefulSet", "kafka")},
		Spec: corev1.PodSpec{
			NodeName:        node,
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1001), RunAsGroup: ptr.To[int64](1001), FSGroup: ptr.To[int64](1001), RunAsNonRoot: ptr.To(true)},
			Containers: []corev1.Container{{Name: "kafka", Image: "confluentinc/cp-server:7.8.0",
				VolumeMounts: []corev1.VolumeMount{{Name: "data0", MountPath: "/mnt/data/data0"}}}},
			Volumes: []corev1.Volume{pvc("data0", "data0-kafka-2")},
		},
		Status: status("kafka"),
	}

	plain := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kafka-1", Namespace: ns, UID: "b0000000-0000-4000-8000-000000000004",
			Labels:          map[string]string{"app": "kafka"},
			OwnerReferences: owner("StatefulSet", "kafka")},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "broker", Image: "apache/kafka:3.9.0",
				VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/var/lib/kafka"}}}},
			Volumes: []corev1.Volume{pvc("logs", "logs-kafka-1")},
		},
		Status: status("broker"),
	}

	return []Layout{
		{Name: "Bitnami chart, one claim, uid 1001", Broker: bitnami, KafkaContainer: "kafka", Claims: []string{"data-kafka-broker-0"}},
		{Name: "Strimzi node pool, JBOD, pod-level uid, SELinux level", Broker: strimzi, KafkaContainer: "kafka",
			Claims: []string{"data-0-my-cluster-brokers-3", "data-1-my-cluster-brokers-3"}},
		{Name: "Confluent for Kubernetes", Broker: confluent, KafkaContainer: "kafka", Claims: []string{"data0-kafka-2"}},
		{Name: "plain manifests, app=kafka, the image's user (no uid)", Broker: plain, KafkaContainer: "broker", Claims: []string{"logs-kafka-1"}},
	}
}

// DebugPod is the debug pod the bot builds to repair the layout's broker:
// recovery.DebugPod with a metadata-log move, as after an approval.
func (l Layout) DebugPod() (*corev1.Pod, error) {
	return recovery.DebugPod(recovery.DebugPodInput{
		Broker: l.Broker, KafkaContainer: l.KafkaContainer, ClaimNames: l.Claims,
		RepairID: "hostile-" + strings.ToLower(l.Broker.Name),
		Script: recovery.ScriptInput{
			Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "3",
			BackupName: recovery.BackupName("hostile", time.Date(2026, 4, 28, 8, 22, 1, 0, time.UTC)),
		},
	})
}

// CreateRunningBroker creates the Bitnami layout's broker pod in ns through
// cs and reports its Kafka container running image imageID (by digest, as
// a kubelet does): a broker the bot sees as running that image.
func CreateRunningBroker(ctx context.Context, cs kubernetes.Interface, ns, imageID string) (*corev1.Pod, error) {
	broker := Layouts(ns, "node-1")[0].Broker.DeepCopy()
	broker.UID, broker.ResourceVersion = "", ""
	status := broker.Status
	status.ContainerStatuses[0].ImageID = imageID
	created, err := cs.CoreV1().Pods(ns).Create(ctx, broker, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create broker pod %s/%s: %w", ns, broker.Name, err)
	}
	created.Status = status
	updated, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("report broker pod %s/%s running: %w", ns, broker.Name, err)
	}
	return updated, nil
}
