// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// The Kubelet must also drive client-go's fake clientset (for `bot demo`):
// the same scenarios, without an API server or a kubelet API.
func TestKubeletOnFakeClientset(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset()
	k, err := New(cs, Options{NodeName: "demo-node", Namespaces: []string{"kafka"}, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)

	if _, err := cs.CoreV1().Nodes().Get(ctx, "demo-node", metav1.GetOptions{}); err != nil {
		t.Fatalf("node not registered: %v", err)
	}

	broker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "broker-0", Namespace: "kafka", UID: "uid-1",
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "kafka", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka", Image: "apache/kafka:3.7.0"}}},
	}
	if _, err := cs.CoreV1().Pods("kafka").Create(ctx, broker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "broker-0", func(p *corev1.Pod) bool { return p.Spec.NodeName == "demo-node" })

	if err := k.CrashLoop(ctx, "kafka", "broker-0", "fatal\n"); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "broker-0", func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 1 })
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" {
		t.Errorf("state = %+v, want CrashLoopBackOff", p.Status.ContainerStatuses[0].State)
	}
	if got, _ := k.Logs().Get("kafka", "broker-0", "kafka", true); got != "fatal\n" {
		t.Errorf("previous log = %q", got)
	}

	// Recreated after deletion (the fake assigns no UIDs: the recreated
	// pod is recognised by coming back Ready).
	if err := cs.CoreV1().Pods("kafka").Delete(ctx, "broker-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "broker-0", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready
	})

	// A debug pod runs for real, against the claim's host directory.
	vol := filepath.Join(t.TempDir(), "pv")
	if err := os.MkdirAll(filepath.Join(vol, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	k.SetVolumeDir("kafka", "data-broker-0", vol)
	debug := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "kafka",
			Labels: map[string]string{LabelManagedBy: ManagedByBot}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-broker-0"}}}},
			Containers: []corev1.Container{{
				Name: "repair", Command: []string{"/bin/sh", "-c", `ls "$KB_MOUNT_ROOT/0"; touch "$KB_MOUNT_ROOT/0/ran"`},
				Env:          []corev1.EnvVar{{Name: "KB_MOUNT_ROOT", Value: "/kafkabot"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/kafkabot/0"}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	if _, err := cs.CoreV1().Pods("kafka").Create(ctx, debug, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "debug", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if out, _ := k.Logs().Get("kafka", "debug", "repair", false); strings.TrimSpace(out) != "data" {
		t.Errorf("debug pod output = %q, want the claim's listing", out)
	}
	if _, err := os.Stat(filepath.Join(vol, "ran")); err != nil {
		t.Errorf("the script did not run against the claim's directory: %v", err)
	}
}

func waitPod(t *testing.T, cs *fake.Clientset, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("kafka").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("waiting for pod %s: %v (last seen: %+v)", name, err, got)
	}
	return got
}
