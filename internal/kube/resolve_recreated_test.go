// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// TestResolvePodRecreatedWithinTheListTTL pins how stale the identity that
// keys a shared diagnosis (diagshare.KeyOf: namespace, pod, UID and
// restart count, from ResolvePod's status) can be. A pod deleted and
// recreated (new UID) after a shared list started still resolves, until
// ResolveListTTL after that list started, to the old UID, and so does the
// read that follows; once the TTL passes the new UID is seen, which is a new key, diagnosed afresh. A
// shared answer is therefore never staler about the pod's identity than a
// fresh diagnosis in the same window, and an Approve signed from either
// names the old UID, which the click-time gate (same pod UID) refuses.
func TestResolvePodRecreatedWithinTheListTTL(t *testing.T) {
	cs := fake.NewClientset(inspSeedObjects()...)
	c := New(cs, Options{Namespaces: []string{"kafka"}})
	now := time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c.lists.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()
	const name = "foobar-kafka-broker-0"

	before, _, err := c.ResolvePod(ctx, "kafka", name)
	if err != nil {
		t.Fatal(err)
	}
	old, err := cs.CoreV1().Pods("kafka").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if before.UID != string(old.UID) || before.UID == "" {
		t.Fatalf("resolved UID %q, want the pod's %q", before.UID, old.UID)
	}
	// The StatefulSet recreates it (a repair, or someone deleting it).
	if err := cs.CoreV1().Pods("kafka").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	recreated := old.DeepCopy()
	recreated.UID, recreated.ResourceVersion = types.UID("uid-recreated"), ""
	recreated.Status = corev1.PodStatus{Phase: corev1.PodPending}
	if _, err := cs.CoreV1().Pods("kafka").Create(ctx, recreated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	advance(ResolveListTTL - time.Millisecond)
	stale, read, err := c.ResolvePod(ctx, "kafka", name)
	if err != nil {
		t.Fatal(err)
	}
	if stale.UID != before.UID {
		t.Fatalf("within the TTL: UID %q, want the shared list's %q", stale.UID, before.UID)
	}
	snap, err := read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.UID != before.UID {
		t.Errorf("within the TTL the read names UID %q, want the listed %q", snap.UID, before.UID)
	}

	advance(2 * time.Millisecond) // the list is older than ResolveListTTL now
	fresh, _, err := c.ResolvePod(ctx, "kafka", name)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.UID != "uid-recreated" {
		t.Errorf("after the TTL: UID %q, want the recreated pod's", fresh.UID)
	}
}
