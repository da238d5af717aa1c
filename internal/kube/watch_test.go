// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func repairTestPod(name, uid string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kafka", UID: typesUID(uid)},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

func TestWaitPodFinishedSurvivesAWatchClose(t *testing.T) {
	cs := fake.NewClientset(repairTestPod("debug", "u1", corev1.PodPending), repairTestPod("other", "u2", corev1.PodSucceeded))
	first := watch.NewFake()
	opened := make(chan struct{})
	calls := 0
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		calls++
		if calls == 1 {
			close(opened)
			return true, first, nil
		}
		return false, nil, nil
	})
	c := New(cs, Options{})
	type result struct {
		pod *corev1.Pod
		err error
	}
	done := make(chan result)
	go func() {
		pod, err := c.WaitPodFinished(context.Background(), "kafka", "debug", "u1")
		done <- result{pod, err}
	}()
	<-opened
	// The pod finishes while the watch is broken; the watcher must recover.
	finished := repairTestPod("debug", "u1", corev1.PodSucceeded)
	if err := cs.Tracker().Update(podsResource, finished, "kafka"); err != nil {
		t.Fatal(err)
	}
	first.Stop()
	r := <-done
	if r.err != nil || r.pod == nil || r.pod.Status.Phase != corev1.PodSucceeded || r.pod.Name != "debug" {
		t.Fatalf("WaitPodFinished = %v, %v; want the succeeded debug pod", r.pod, r.err)
	}
	// The update was never sent on the first watch, so the waiter can only
	// have seen it by listing or watching again after the close. (Which of
	// the two comes first is up to the reflector: after a list that already
	// satisfies the wait, the new watch may not have started yet.)
	lists, watches := 0, 0
	for _, a := range cs.Actions() {
		switch a.GetVerb() {
		case "list":
			lists++
		case "watch":
			watches++
			if fs := a.(k8stesting.WatchAction).GetWatchRestrictions().Fields.String(); fs != "metadata.name=debug" {
				t.Errorf("watch field selector %q, want metadata.name=debug", fs)
			}
		}
	}
	if lists < 2 && watches < 2 {
		t.Errorf("%d lists and %d watches: the waiter never re-listed or re-watched after the close", lists, watches)
	}
}

func TestWaitPodFinishedDeleted(t *testing.T) {
	cs := fake.NewClientset(repairTestPod("debug", "u1", corev1.PodRunning))
	c := New(cs, Options{})
	go func() {
		// Delete once the list and the watch are open.
		for len(cs.Actions()) < 2 {
			time.Sleep(time.Millisecond)
		}
		_ = cs.Tracker().Delete(podsResource, "kafka", "debug")
	}()
	_, err := c.WaitPodFinished(context.Background(), "kafka", "debug", "u1")
	if !errors.Is(err, ErrPodDeleted) {
		t.Fatalf("err %v, want ErrPodDeleted", err)
	}
}

func TestWaitPodReplaced(t *testing.T) {
	cs := fake.NewClientset(repairTestPod("broker-0", "old", corev1.PodRunning))
	c := New(cs, Options{})
	go func() {
		for len(cs.Actions()) < 2 {
			time.Sleep(time.Millisecond)
		}
		_ = cs.Tracker().Delete(podsResource, "kafka", "broker-0")
		pending := repairTestPod("broker-0", "new", corev1.PodPending)
		_ = cs.Tracker().Create(podsResource, pending, "kafka")
		ready := pending.DeepCopy()
		ready.Status.Phase = corev1.PodRunning
		ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		_ = cs.Tracker().Update(podsResource, ready, "kafka")
	}()
	pod, err := c.WaitPodReplaced(context.Background(), "kafka", "broker-0", "old", PodReady)
	if err != nil || string(pod.UID) != "new" || !PodReady(pod) {
		t.Fatalf("WaitPodReplaced = %v, %v; want the new Ready pod", pod, err)
	}
}

func TestWatchPodEndsWithTheContextCause(t *testing.T) {
	cs := fake.NewClientset(repairTestPod("debug", "u1", corev1.PodRunning))
	c := New(cs, Options{})
	cause := errors.New("repair timeout")
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for len(cs.Actions()) < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel(cause)
	}()
	_, err := c.WaitPodFinished(ctx, "kafka", "debug", "u1")
	if !errors.Is(err, cause) {
		t.Fatalf("err %v, want the cause", err)
	}
}

var _ runtime.Object = (*corev1.Pod)(nil)
