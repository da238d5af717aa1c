// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fakeapi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Created objects get what an API server gives them and the fake does not.
func TestCreatedPodsLookAsFromAnAPIServer(t *testing.T) {
	existing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "existing", Namespace: "kafka"}}
	cs := New()
	if _, err := cs.CoreV1().Pods("kafka").Create(t.Context(), existing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "kafka"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	created, err := cs.CoreV1().Pods("kafka").Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.CreationTimestamp.IsZero() || created.Status.Phase != corev1.PodPending {
		t.Errorf("created pod: uid %q, created %v, phase %q; want a UID, a time and Pending", created.UID, created.CreationTimestamp, created.Status.Phase)
	}
	if pod.UID != "" {
		t.Error("Create changed the caller's object")
	}
	other, err := cs.CoreV1().Pods("kafka").Get(t.Context(), "existing", metav1.GetOptions{})
	if err != nil || other.UID == created.UID {
		t.Errorf("UIDs are not unique: %v", err)
	}
}

// Updates behave as on an API server: each write gets a new
// resourceVersion, and a write based on a stale one is refused.
func TestUpdatesUseResourceVersions(t *testing.T) {
	cms := New().CoreV1().ConfigMaps("kafka-bot")
	ctx := t.Context()
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "state", Namespace: "kafka-bot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.ResourceVersion == "" {
		t.Fatal("a created object has no resourceVersion")
	}
	tests := []struct {
		name         string
		version      func(current string) string
		wantConflict bool
	}{
		{"current version", func(current string) string { return current }, false},
		{"stale version", func(string) string { return created.ResourceVersion }, true},
		{"no version: unconditional", func(string) string { return "" }, false},
	}
	current := created.ResourceVersion
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := created.DeepCopy()
			cm.ResourceVersion = tt.version(current)
			cm.Data = map[string]string{"write": tt.name}
			got, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			if tt.wantConflict {
				if !apierrors.IsConflict(err) {
					t.Fatalf("Update = %v, want 409 Conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion == "" || got.ResourceVersion == current {
				t.Errorf("resourceVersion %q after an update of %q: want a new one", got.ResourceVersion, current)
			}
			current = got.ResourceVersion
		})
	}
}
