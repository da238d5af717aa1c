// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// ErrPodDeleted is returned by a wait when the pod it waits for is deleted
// (or replaced by a pod with another UID) before the wait is over.
var ErrPodDeleted = errors.New("pod was deleted")

// PodCondition decides on one observed state of a watched pod; pod is nil
// when the pod was deleted. Returning true ends the wait.
type PodCondition func(pod *corev1.Pod) (done bool, err error)

// WatchPod waits until cond is true for the pod namespace/name. It lists and
// watches that one pod (field selector metadata.name) through an informer,
// which re-lists from the last resourceVersion when the watch closes; it
// never polls. It returns the pod state that satisfied cond (nil if that
// was a deletion), or context.Cause(ctx) when ctx ends first.
func (c *Client) WatchPod(ctx context.Context, namespace, name string, cond PodCondition) (*corev1.Pod, error) {
	lw := restrictedListWatch(c.cs.CoreV1().Pods(namespace), byName(name))
	var last *corev1.Pod
	// A pod that is already gone when the first list completes produces no
	// event at all: tell cond at once rather than wait for the deadline.
	goneAtStart := func(store cache.Store) (bool, error) {
		_, exists, err := store.GetByKey(namespace + "/" + name)
		if err != nil || exists {
			return false, err
		}
		return cond(nil)
	}
	// The wrapper tells the reflector whether the clientset supports
	// streaming lists (client-go's fake does not).
	_, err := watchtools.UntilWithSync(ctx, cache.ToListWatcherWithWatchListSemantics(lw, c.cs), &corev1.Pod{}, goneAtStart, func(ev watch.Event) (bool, error) {
		pod := podOf(ev.Object)
		if pod == nil || pod.Name != name {
			return false, nil // not ours (a server or fake that ignores the field selector)
		}
		if ev.Type == watch.Deleted {
			last = nil
			return cond(nil)
		}
		last = pod
		return cond(pod)
	})
	if err != nil {
		if ctx.Err() != nil {
			return last, fmt.Errorf("watching pod %s/%s: %w", namespace, name, context.Cause(ctx))
		}
		return last, fmt.Errorf("watching pod %s/%s: %w", namespace, name, err)
	}
	return last, nil
}

// podOf returns the pod of a watch event (the informer watcher already
// unwraps cache.DeletedFinalStateUnknown).
func podOf(obj runtime.Object) *corev1.Pod {
	pod, _ := obj.(*corev1.Pod)
	return pod
}

// PodFinished reports whether a pod reached a terminal phase.
func PodFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// PodReady reports whether a pod's Ready condition is true.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitPodFinished waits by watch until the pod with the given UID (any UID
// when uid is empty) reaches phase Succeeded or Failed. A deletion or a
// replacement of the pod ends the wait with ErrPodDeleted.
func (c *Client) WaitPodFinished(ctx context.Context, namespace, name string, uid types.UID) (*corev1.Pod, error) {
	return c.WatchPod(ctx, namespace, name, func(pod *corev1.Pod) (bool, error) {
		if pod == nil || (uid != "" && pod.UID != uid) {
			return false, fmt.Errorf("waiting for pod %s/%s to finish: %w", namespace, name, ErrPodDeleted)
		}
		return PodFinished(pod), nil
	})
}

// WaitPodReplaced waits by watch for a pod of the same name with a UID other
// than oldUID (the one a StatefulSet or StrimziPodSet recreates) and returns
// it once settled says it has settled (for example Ready, or crashing).
func (c *Client) WaitPodReplaced(ctx context.Context, namespace, name string, oldUID types.UID, settled func(*corev1.Pod) bool) (*corev1.Pod, error) {
	return c.WatchPod(ctx, namespace, name, func(pod *corev1.Pod) (bool, error) {
		if pod == nil || pod.UID == oldUID {
			return false, nil
		}
		return settled(pod), nil
	})
}
