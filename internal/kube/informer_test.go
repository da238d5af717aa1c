// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// informerPod returns a pod with the clutter the transform drops.
func informerPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: labels, UID: types.UID("uid-" + ns + "-" + name),
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container":          "kafka",
				"kubectl.kubernetes.io/last-applied-configuration": `{"big":"json"}`,
				"checksum/config": "0123456789abcdef",
			},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "kafka", APIVersion: "apps/v1"}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Containers: []corev1.Container{{
				Name: "kafka", Image: "bitnami/kafka:3.9",
				Env:          []corev1.EnvVar{{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "broker"}},
				Command:      []string{"/opt/bitnami/scripts/kafka/run.sh"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}, {Name: "config", MountPath: "/config"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
			},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "kafka"}},
		},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "kafka", RestartCount: 2,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			}},
		},
	}
}

var (
	bitnamiLabels = map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "prod"}
	strimziLabels = map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "prod", "strimzi.io/name": "prod-kafka"}
	// The Strimzi entity operator matches the Strimzi selector but is no Kafka node.
	operatorLabels = map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "prod", "strimzi.io/name": "prod-entity-operator"}
	// Matches two built-in selectors at once.
	doubleLabels = map[string]string{"app.kubernetes.io/name": "kafka", "app": "kafka"}
	webLabels    = map[string]string{"app": "web"}
)

func startInformer(t *testing.T, c *Client) *PodInformer {
	t.Helper()
	p, err := c.NewPodInformer(PodInformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p.Start(ctx)
	if err := p.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPodInformerScope(t *testing.T) {
	objs := []runtime.Object{
		informerPod("kafka", "bitnami-0", bitnamiLabels),
		informerPod("kafka", "strimzi-0", strimziLabels),
		informerPod("kafka", "operator", operatorLabels),
		informerPod("kafka", "double-0", doubleLabels),
		informerPod("kafka", "web", webLabels),
		informerPod("other", "bitnami-0", bitnamiLabels),
	}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"built-in selectors, all namespaces", Options{}, []string{"kafka/bitnami-0", "kafka/double-0", "kafka/strimzi-0", "other/bitnami-0"}},
		{"built-in selectors, allowed namespaces", Options{Namespaces: []string{"kafka"}}, []string{"kafka/bitnami-0", "kafka/double-0", "kafka/strimzi-0"}},
		{"KAFKA_POD_SELECTOR", Options{Selector: "app=web"}, []string{"kafka/web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startInformer(t, New(fake.NewClientset(objs...), tt.opts))
			var got []string
			for _, pod := range p.List() {
				got = append(got, pod.Namespace+"/"+pod.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("List() = %v, want %v", got, tt.want)
			}
			if _, ok := p.Get(PodKey{"kafka", "operator"}); ok {
				t.Error("Get found the Strimzi entity operator")
			}
		})
	}
}

func TestPodInformerIgnoresUnselectedWatchEvents(t *testing.T) {
	cs := fake.NewClientset()
	p := startInformer(t, New(cs, Options{Namespaces: []string{"kafka"}}))
	ctx := context.Background()
	// The fake clientset ignores label selectors on watches, like a
	// misbehaving proxy could: the informer must still cache Kafka pods only.
	for _, pod := range []*corev1.Pod{informerPod("kafka", "web", webLabels), informerPod("kafka", "bitnami-0", bitnamiLabels)} {
		if _, err := cs.CoreV1().Pods("kafka").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, func() bool { return len(p.List()) == 1 })
	for _, s := range p.sources {
		for _, obj := range s.informer.GetStore().List() {
			if pod := obj.(*corev1.Pod); pod.Name == "web" {
				t.Errorf("informer %s cached the unselected pod %s", s.selector, pod.Name)
			}
		}
	}
	// Relabelled out of the selector: it leaves the cache.
	pod := informerPod("kafka", "bitnami-0", webLabels)
	if _, err := cs.CoreV1().Pods("kafka").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return len(p.List()) == 0 })
}

func TestTransformPod(t *testing.T) {
	in := informerPod("kafka", "bitnami-0", bitnamiLabels)
	out, err := TransformPod(IsKafkaPod)(in.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	pod := out.(*corev1.Pod)
	if pod.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	if len(pod.Annotations) != 1 || pod.Annotations["kubectl.kubernetes.io/default-container"] != "kafka" {
		t.Errorf("annotations = %v, want only the default-container one", pod.Annotations)
	}
	c := pod.Spec.Containers[0]
	if c.Env != nil || c.Command != nil || pod.Spec.Tolerations != nil || pod.Status.PodIPs != nil {
		t.Errorf("spec clutter kept: env %v, command %v, tolerations %v, pod IPs %v", c.Env, c.Command, pod.Spec.Tolerations, pod.Status.PodIPs)
	}
	// What the sweep reads survives: identity, labels, owner, node, the
	// Kafka container and its claim, the status.
	snap, _ := statusSnapshot(pod)
	want, _ := statusSnapshot(in)
	want.Role, want.NodeID, snap.Role, snap.NodeID = "", "", "", "" // env-derived: read live, not from the cache
	if snap.Pod != "bitnami-0" || snap.KafkaCluster != "prod" || snap.Node != "node-1" || snap.KafkaContainer != "kafka" ||
		len(snap.Claims) != 1 || snap.Claims[0].ClaimName != want.Claims[0].ClaimName || snap.Claims[0].MountPath != want.Claims[0].MountPath || len(snap.Containers) != 1 ||
		snap.Containers[0].WaitingReason != "CrashLoopBackOff" || snap.Containers[0].RestartCount != 2 || !IsKafkaPod(pod) {
		t.Errorf("transformed pod lost what the sweep reads: %+v\nwant %+v", snap, want)
	}

	// A pod the built-in selectors match but IsKafkaPod rejects keeps only its identity.
	op, _ := TransformPod(IsKafkaPod)(informerPod("kafka", "operator", operatorLabels))
	if p := op.(*corev1.Pod); len(p.Spec.Containers) != 0 || len(p.Status.ContainerStatuses) != 0 || p.Name != "operator" {
		t.Errorf("non-Kafka pod kept its spec or status: %+v", p)
	}
}

func TestPodInformerQueuesStatusChanges(t *testing.T) {
	base := informerPod("kafka", "bitnami-0", bitnamiLabels)
	sentinel := informerPod("kafka", "bitnami-1", bitnamiLabels)
	cs := fake.NewClientset(base, sentinel)
	p := startInformer(t, New(cs, Options{Namespaces: []string{"kafka"}}))
	q := p.Queue()
	drain := func() map[PodKey]bool {
		got := map[PodKey]bool{}
		for q.Len() > 0 {
			k, _ := q.Get()
			got[k] = true
			q.Forget(k)
			q.Done(k)
		}
		return got
	}
	waitUntil(t, func() bool { return q.Len() == 2 }) // the initial adds
	drain()
	ctx := context.Background()

	tests := []struct {
		name   string
		change func(*corev1.Pod)
		queued bool
	}{
		{"label only", func(p *corev1.Pod) { p.Labels["extra"] = "x" }, false},
		{"restart", func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = 3 }, true},
		{"running again", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}, true},
	}
	cur := base.DeepCopy()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur = cur.DeepCopy()
			tt.change(cur)
			if _, err := cs.CoreV1().Pods("kafka").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			// A restart of the sentinel pod, after the change: one informer
			// handles its events in order, so once the sentinel is queued the
			// change has been handled too.
			sentinel = sentinel.DeepCopy()
			sentinel.Status.ContainerStatuses[0].RestartCount = int32(10 + i)
			if _, err := cs.CoreV1().Pods("kafka").Update(ctx, sentinel, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			got := map[PodKey]bool{}
			waitUntil(t, func() bool {
				for k := range drain() {
					got[k] = true
				}
				return got[PodKey{"kafka", "bitnami-1"}]
			})
			if queued := got[PodKey{"kafka", "bitnami-0"}]; queued != tt.queued {
				t.Fatalf("queued = %t, want %t", queued, tt.queued)
			}
		})
	}
}

func TestStateConfigMapOptimisticWrite(t *testing.T) {
	cs := fake.NewClientset()
	s := New(cs, Options{}).NewStateConfigMap("kafka-bot", "state")
	ctx := context.Background()
	cm, err := s.Read(ctx)
	if err != nil || cm != nil {
		t.Fatalf("Read of a missing ConfigMap = %v, %v; want nil, nil", cm, err)
	}
	if _, err := s.Write(ctx, "", map[string]string{"k": "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, "", map[string]string{"k": "2"}); err == nil {
		t.Fatal("a second create succeeded; want ErrStateConflict")
	} else if !errors.Is(err, ErrStateConflict) {
		t.Fatalf("second create: %v, want ErrStateConflict", err)
	}
	cm, err = s.Read(ctx)
	if err != nil || cm.Data["k"] != "1" {
		t.Fatalf("Read = %v, %v; want k=1", cm, err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
