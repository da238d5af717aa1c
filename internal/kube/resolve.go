// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// ResolveListTTL is how old a pod list may be and still resolve the names
// of ResolvePod: requests that arrive while a list is read, or within
// this long after it started, share it. It is handoffTTL, the age a pod
// read by FindPod may have when Inspect uses it.
const ResolveListTTL = handoffTTL

// resolveListTimeout bounds a shared list: it runs on a context of its own
// so that one requester giving up does not fail the others.
const resolveListTimeout = 30 * time.Second

// sharedLists holds the recent Kafka pod lists by namespace ("" = every
// namespace in scope), one in flight at most per namespace.
type sharedLists struct {
	mu    sync.Mutex
	lists map[string]*sharedList
	now   func() time.Time
}

// sharedList is one pod list, read once for every caller that wants it.
type sharedList struct {
	done    chan struct{} // closed once pods and err are set
	started time.Time     // the list is at most this old
	pods    []corev1.Pod  // read-only once done
	err     error
}

func newSharedLists() *sharedLists {
	return &sharedLists{lists: map[string]*sharedList{}, now: time.Now}
}

// recentKafkaPods returns the Kafka pods of namespace (as listKafkaPods)
// from a list started at most ResolveListTTL ago, reading one when there
// is none. Failed lists are not kept. The pods are shared: read only.
func (c *Client) recentKafkaPods(ctx context.Context, namespace string) ([]corev1.Pod, error) {
	sl := c.lists
	sl.mu.Lock()
	now := sl.now()
	for k, l := range sl.lists { // forget the expired lists (and bound the map)
		if isDone(l.done) && now.Sub(l.started) > ResolveListTTL {
			delete(sl.lists, k)
		}
	}
	l, ok := sl.lists[namespace]
	if !ok {
		l = &sharedList{done: make(chan struct{}), started: now}
		sl.lists[namespace] = l
		go func() {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveListTimeout)
			defer cancel()
			pods, err := c.listKafkaPods(lctx, namespace)
			sl.mu.Lock()
			defer sl.mu.Unlock()
			l.pods, l.err = pods, err
			if err != nil && sl.lists[namespace] == l {
				delete(sl.lists, namespace)
			}
			close(l.done)
		}()
	}
	sl.mu.Unlock()
	select {
	case <-l.done:
		return l.pods, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// ResolvePod resolves what a person typed like FindPod, and returns the
// pod's status (its UID and restart counts tell one crash from the next)
// and read, which reads the rest of what a diagnosis needs (claims, events,
// log tail: Inspect without the pod get) from that same pod.
//
// Unlike FindPod it answers from a pod list shared by the calls that
// arrive within ResolveListTTL (2 s) of each other, so that a burst of
// commands costs one list, not one each; the pod is then at most that old,
// as with FindPod's hand-over to Inspect. Use FindPod where the pod must
// be read now (repair gates). Errors are FindPod's; read's are Inspect's.
func (c *Client) ResolvePod(ctx context.Context, namespace, name string) (diagnose.Snapshot, func(context.Context) (diagnose.Snapshot, error), error) {
	if err := c.checkTarget(namespace, name); err != nil {
		return diagnose.Snapshot{}, nil, err
	}
	pods, err := c.recentKafkaPods(ctx, namespace)
	if err != nil {
		return diagnose.Snapshot{}, nil, err
	}
	shared, err := c.matchPod(ctx, pods, namespace, name)
	if err != nil {
		return diagnose.Snapshot{}, nil, err
	}
	p := shared.DeepCopy()
	status, _ := statusSnapshot(p)
	read := func(ctx context.Context) (diagnose.Snapshot, error) {
		in, err := c.inspectPod(ctx, p)
		return in.Snapshot, err
	}
	return status, read, nil
}
