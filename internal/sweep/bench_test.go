// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Size of the benchmark cluster: 10,000 pods, 60 of them Kafka nodes
// (3 clusters of 20 in 3 namespaces), the rest spread over 50 namespaces.
const (
	benchPods       = 10000
	benchKafkaPods  = 60
	benchClusters   = 3
	benchNamespaces = 50
)

// benchCluster returns the pods of a busy cluster. Every pod carries what
// real pods carry and the sweep never reads: managedFields, a
// last-applied-configuration annotation, env, probes, tolerations.
func benchCluster() []k8sruntime.Object {
	objs := make([]k8sruntime.Object, 0, benchPods)
	for i := range benchKafkaPods {
		c := i % benchClusters
		p := benchPod(fmt.Sprintf("kafka-%d", c), fmt.Sprintf("kafka-%d-broker-%d", c, i/benchClusters), map[string]string{
			"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": fmt.Sprintf("kafka-%d", c),
			"app.kubernetes.io/component": "broker",
		})
		objs = append(objs, p)
	}
	for i := range benchPods - benchKafkaPods {
		objs = append(objs, benchPod(fmt.Sprintf("team-%d", i%benchNamespaces), fmt.Sprintf("web-%d", i), map[string]string{
			"app": fmt.Sprintf("web-%d", i%200), "pod-template-hash": "7d4b9c8f6",
		}))
	}
	return objs
}

func benchPod(ns, name string, labels map[string]string) *corev1.Pod {
	env := make([]corev1.EnvVar, 30)
	for i := range env {
		env[i] = corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", i), Value: strings.Repeat("v", 40)}
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}, PeriodSeconds: 10}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name), Labels: labels,
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1500),
				"prometheus.io/scrape":                             "true",
				"checksum/config":                                  strings.Repeat("c", 64),
			},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{` + strings.Repeat(`"f:x":{},`, 100) + `"f:y":{}}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{` + strings.Repeat(`"f:z":{},`, 100) + `"f:w":{}}}`)},
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "owner"}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.example.com/app:1.2.3", Env: env, Command: []string{"/bin/run", "--flag"},
				LivenessProbe: probe, ReadinessProbe: probe,
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "token", MountPath: "/var/run/secrets"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
			},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.1.2.3", HostIP: "10.0.0.1",
			PodIPs:     []corev1.PodIP{{IP: "10.1.2.3"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "main", Ready: true, Image: "registry.example.com/app:1.2.3", ImageID: "sha256:" + strings.Repeat("a", 64),
				ContainerID: "containerd://" + strings.Repeat("b", 64),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
}

// BenchmarkSweep measures one full sweep of the cache after warm-up: CPU
// time (ns/op) and API requests per sweep (target 0), with 3 brokers
// crash-looping (already diagnosed and alerted) among the 60.
func BenchmarkSweep(b *testing.B) {
	objs := benchCluster()
	for i := range 3 {
		p := objs[i].(*corev1.Pod)
		p.Status.Conditions[0].Status = corev1.ConditionFalse
		p.Status.ContainerStatuses[0].Ready = false
		p.Status.ContainerStatuses[0].RestartCount = 5
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	}
	cs := fake.NewClientset(objs...)
	notes := &recorder{}
	s, err := New(Options{
		Client: kube.New(cs, kube.Options{}), Engine: newStubEngine(), Notifier: notes,
		StateNamespace: testBotNS, Identity: "bench", Clock: clocktesting.NewFakeClock(t0),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for !s.Leading() {
		runtime.Gosched()
	}
	if err := s.SweepNow(ctx); err != nil { // warm-up: first diagnoses and alerts
		b.Fatal(err)
	}
	if n := len(notes.of("notify")); n != 3 {
		b.Fatalf("warm-up notified %d alerts, want 3", n)
	}
	before := len(cs.Actions())
	b.ResetTimer()
	for b.Loop() {
		if err := s.SweepNow(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(cs.Actions())-before)/float64(b.N), "api-requests/op")
	b.ReportMetric(float64(len(s.pods.List())), "kafka-pods")
}

// BenchmarkInformerCache measures the heap the pod informers hold once
// synced (after GC), for the built-in selectors with and without the
// transform, and, for comparison, for an informer on every pod.
func BenchmarkInformerCache(b *testing.B) {
	variants := []struct {
		name     string
		selector string // "" = built-in selectors; "bench!=none" matches every pod
		full     bool   // no transform
	}{
		{"selectors+transform", "", false},
		{"selectors", "", true},
		{"all-pods+transform", "bench!=none", false},
		{"all-pods", "bench!=none", true},
	}
	cs := fake.NewClientset(benchCluster()...)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var held, cached float64
			for b.Loop() {
				c := kube.New(cs, kube.Options{Selector: v.selector})
				inf, err := c.NewPodInformer(kube.PodInformerOptions{KeepFullObjects: v.full})
				if err != nil {
					b.Fatal(err)
				}
				before := heapAlloc()
				ctx, cancel := context.WithCancel(context.Background())
				inf.Start(ctx)
				if err := inf.WaitForCacheSync(ctx); err != nil {
					b.Fatal(err)
				}
				held += float64(heapAlloc() - before)
				cached += float64(len(inf.List()))
				cancel()
				runtime.KeepAlive(inf)
			}
			b.ReportMetric(held/float64(b.N), "heap-bytes")
			b.ReportMetric(cached/float64(b.N), "cached-pods")
		})
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
