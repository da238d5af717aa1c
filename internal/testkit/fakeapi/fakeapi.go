// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package fakeapi makes client-go's fake clientset behave like an API
// server in the ways the bot can tell: created objects get a UID, a
// creation time and a resourceVersion; new pods start Pending; an update
// gets a new resourceVersion, and one based on a stale resourceVersion is
// refused with 409 Conflict. The bot relies on UIDs (approvals name the
// pod's UID; a recreated broker is told from the old one by its UID) and
// the sweep on resourceVersions (its state is written with optimistic
// concurrency). The demo, the benchmarks and unit tests share it.
package fakeapi

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// New returns a fake clientset holding objs, with Install applied.
func New(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	Install(cs)
	return cs
}

// Install makes cs's creates and updates behave as described in the
// package comment.
func Install(cs *fake.Clientset) {
	react := Reaction(cs.Tracker())
	cs.PrependReactor("create", "*", react)
	cs.PrependReactor("update", "*", react)
}

// Reaction serves any action from tracker, with creates and updates
// behaving as described in the package comment; a clientset built by hand
// over a tracker (one that meters what it serves, say) uses it in place of
// k8stesting.ObjectReaction. The fake runs reactors under its lock, so the
// stale-version check and the write are one step, as in the API server.
func Reaction(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	objects := k8stesting.ObjectReaction(tracker)
	var seq, version atomic.Uint64
	nextVersion := func() string { return strconv.FormatUint(version.Add(1), 10) }
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		switch a := action.(type) {
		case k8stesting.CreateActionImpl:
			if a.GetSubresource() != "" || a.GetObject() == nil {
				break
			}
			obj := a.GetObject().DeepCopyObject() // never change the caller's object
			m, err := meta.Accessor(obj)
			if err != nil {
				break
			}
			if m.GetUID() == "" {
				m.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", seq.Add(1))))
			}
			m.SetResourceVersion(nextVersion())
			if ts := m.GetCreationTimestamp(); ts.IsZero() {
				m.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
			}
			if pod, ok := obj.(*corev1.Pod); ok && pod.Status.Phase == "" {
				pod.Status.Phase = corev1.PodPending
			}
			a.Object = obj
			return objects(a)
		case k8stesting.UpdateActionImpl:
			obj := a.GetObject().DeepCopyObject()
			m, err := meta.Accessor(obj)
			if err != nil {
				break
			}
			if rv := m.GetResourceVersion(); rv != "" {
				stored, err := tracker.Get(a.GetResource(), a.GetNamespace(), m.GetName())
				if err == nil {
					if sm, err := meta.Accessor(stored); err == nil && sm.GetResourceVersion() != rv {
						return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), m.GetName(),
							errors.New("the object has been modified; please apply your changes to the latest version and try again"))
					}
				}
			}
			m.SetResourceVersion(nextVersion())
			a.Object = obj
			return objects(a)
		}
		return objects(action)
	}
}
