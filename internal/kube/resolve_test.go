// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// countPodLists counts the pod list requests of cs.
func countPodLists(cs *fake.Clientset) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

// TestResolvePodSharesRecentLists: calls within ResolveListTTL of a list's
// start share it (one request for many callers, at once or one after
// another); a later call lists again, and so does a call after a failed
// list (failures are not kept).
func TestResolvePodSharesRecentLists(t *testing.T) {
	cs := fake.NewClientset(inspSeedObjects()...)
	fail := true
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail {
			fail = false
			return true, nil, apierrors.NewServiceUnavailable("etcd is slow")
		}
		return false, nil, nil
	})
	c := New(cs, Options{Namespaces: []string{"kafka"}})
	now := time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c.lists.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()

	if _, _, err := c.ResolvePod(ctx, "", "broker-0"); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("first ResolvePod error = %v, want the list's failure", err)
	}
	var wg sync.WaitGroup
	uids := make([]string, 10)
	for i := range uids {
		wg.Go(func() {
			status, _, err := c.ResolvePod(ctx, "", "broker-0")
			if err != nil {
				t.Errorf("ResolvePod: %v", err)
			}
			uids[i] = status.UID
		})
	}
	wg.Wait()
	if got := countPodLists(cs); got != 2 {
		t.Errorf("%d pod lists, want 2: the failed one (not kept) and one for ten callers", got)
	}
	for _, u := range uids {
		if u != "uid-kafka-foobar-kafka-broker-0" {
			t.Errorf("resolved UID %q, want the seed broker's", u)
		}
	}
	advance(ResolveListTTL)
	if _, _, err := c.ResolvePod(ctx, "", "broker-0"); err != nil {
		t.Fatal(err)
	}
	if got := countPodLists(cs); got != 2 {
		t.Errorf("%d pod lists, want the list still shared at exactly its TTL", got)
	}
	advance(time.Millisecond)
	if _, _, err := c.ResolvePod(ctx, "", "broker-0"); err != nil {
		t.Fatal(err)
	}
	if got := countPodLists(cs); got != 3 {
		t.Errorf("%d pod lists, want a new one once the last is older than %s", got, ResolveListTTL)
	}
}

// TestResolvePodReadIsInspect: read returns what Inspect returns, with
// three requests (no pod get), and ResolvePod refuses like FindPod.
func TestResolvePodReadIsInspect(t *testing.T) {
	crash := inspReadCrashLog(t)
	cs := fake.NewClientset(inspSeedObjects()...)
	(&inspLogServer{previous: crash}).install(cs)
	c := New(cs, Options{Namespaces: []string{"kafka"}})
	ctx := context.Background()
	status, read, err := c.ResolvePod(ctx, "kafka", "broker-0")
	if err != nil {
		t.Fatal(err)
	}
	if k := status.Kafka(); status.Pod != "foobar-kafka-broker-0" || k == nil || k.RestartCount != 12 || status.Log != "" {
		t.Errorf("status = %+v, want the seed broker's status with 12 restarts and no log", status)
	}
	before := len(cs.Actions())
	got, err := read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reads := inspActionList(cs)[before:]
	if len(reads) != 3 || slices.Contains(reads, "get pods") {
		t.Errorf("read made %q, want the claim, events and log only", reads)
	}
	want, err := c.Snapshot(ctx, "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read = %+v\nwant Snapshot's %+v", got, want)
	}

	for _, tc := range []struct {
		ns, name string
		want     error
	}{
		{"kube-system", "broker-0", ErrNamespaceNotAllowed},
		{"kafka", "../x", ErrInvalidName},
		{"kafka", "broker-9", ErrPodNotFound},
		{"", "controller", ErrPodNotFound},
	} {
		if _, _, err := c.ResolvePod(ctx, tc.ns, tc.name); !errors.Is(err, tc.want) {
			t.Errorf("ResolvePod(%q, %q) error = %v, want %v", tc.ns, tc.name, err, tc.want)
		}
	}
}
