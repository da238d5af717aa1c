// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package diagshare shares one diagnosis among the people who ask about
// the same pod.
//
// When a broker falls over, many people ask about it within seconds. A
// diagnosis is keyed by the pod's cluster, namespace, name, UID and
// restart count (from the pod list that resolved the name): requests with
// the same key that arrive while it runs, or within the share window after
// it finished, get its answer without a second set of Kubernetes reads. A
// new pod (a repair recreates it) or a new crash (restart count) is a new
// key, so it is diagnosed afresh. Failures are shared only with the
// requests that were waiting for them, never kept.
//
// Each requester is answered: in a channel where the diagnosis is not yet
// posted it is posted for them (Claim); in a channel where it is, they are
// shown a link to that message (Post).
package diagshare

import (
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// DefaultWindow is how long a finished diagnosis answers new requests.
const DefaultWindow = time.Minute

// maxShared bounds the diagnoses kept for sharing.
const maxShared = 64

// Key identifies one crash of one pod instance, in its Kubernetes cluster.
type Key struct {
	Cluster, Namespace, Pod, UID string
	Restarts                     int32
}

// KeyOf is the key of the pod status a name resolved to, in cluster: its
// Kafka container's restarts, or all its containers' when it has none.
func KeyOf(cluster string, status diagnose.Snapshot) Key {
	k := Key{Cluster: cluster, Namespace: status.Namespace, Pod: status.Pod, UID: status.UID}
	if c := status.Kafka(); c != nil {
		k.Restarts = c.RestartCount
	} else {
		for _, c := range status.Containers {
			k.Restarts += c.RestartCount
		}
	}
	return k
}

// Diagnosis is one diagnosis and who it answered; W is a request waiting
// for it.
type Diagnosis[W any] struct {
	Key  Key
	done chan struct{} // closed when the fields below are set
	// Set once done: the snapshot (without the log text, which findings
	// quote as evidence), the findings, or the error that ended it.
	Snapshot diagnose.Snapshot
	Findings []diagnose.Finding
	Err      error
	Finished time.Time
	// waiters joined while it ran (guarded by Sharer.mu, nil once done).
	waiters []W
	// posts are its messages, by channel (guarded by Sharer.mu).
	posts map[string]*Post
}

// Post is a diagnosis' message in one channel.
type Post struct {
	Channel string
	ready   chan struct{} // closed once the fields below are set
	// TS is the message, OK whether it was posted, Requester who it was
	// posted for.
	TS        string
	OK        bool
	Requester string
	At        time.Time
}

// Ready is closed once the post's outcome is known (Sharer.Posted).
func (p *Post) Ready() <-chan struct{} { return p.ready }

// Role says what a request does with the diagnosis Join returned.
type Role int

const (
	// Lead runs it (and answers the waiters after).
	Lead Role = iota
	// Wait: it runs; the leader answers this request.
	Wait
	// Shared: it is done; answer from it now.
	Shared
)

// Sharer holds the diagnoses running or recently finished. It is safe for
// concurrent use.
type Sharer[W any] struct {
	mu      sync.Mutex
	window  time.Duration // < 0: nothing is shared
	now     func() time.Time
	entries map[Key]*Diagnosis[W]
}

// New returns a Sharer whose finished diagnoses answer for window
// (negative: nothing is shared, every request leads its own).
func New[W any](window time.Duration, now func() time.Time) *Sharer[W] {
	return &Sharer[W]{window: window, now: now, entries: map[Key]*Diagnosis[W]{}}
}

// Join finds or starts the diagnosis for key on behalf of request w.
func (c *Sharer[W]) Join(key Key, w W) (*Diagnosis[W], Role) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := &Diagnosis[W]{Key: key, done: make(chan struct{}), posts: map[string]*Post{}}
	if c.window < 0 {
		return fresh, Lead
	}
	now := c.now()
	var oldest *Diagnosis[W]
	for k, d := range c.entries {
		if isClosed(d.done) && now.Sub(d.Finished) > c.window {
			delete(c.entries, k)
			continue
		}
		if isClosed(d.done) && (oldest == nil || d.Finished.Before(oldest.Finished)) {
			oldest = d
		}
	}
	if d, ok := c.entries[key]; ok {
		if !isClosed(d.done) {
			d.waiters = append(d.waiters, w)
			return d, Wait
		}
		return d, Shared
	}
	if len(c.entries) >= maxShared {
		if oldest == nil {
			return fresh, Lead // all running: this one is not shared
		}
		delete(c.entries, oldest.Key)
	}
	c.entries[key] = fresh
	return fresh, Lead
}

// Finish records the leader's result and returns the requests that waited
// for it. A failure is not kept for later requests.
func (c *Sharer[W]) Finish(d *Diagnosis[W], snap diagnose.Snapshot, findings []diagnose.Finding, err error) []W {
	snap.Log = "" // the findings quote what matters; the tail would pin up to LOG_TAIL_BYTES per entry
	c.mu.Lock()
	defer c.mu.Unlock()
	d.Snapshot, d.Findings, d.Err, d.Finished = snap, findings, err, c.now()
	if err != nil && c.entries[d.Key] == d {
		delete(c.entries, d.Key)
	}
	w := d.waiters
	d.waiters = nil
	close(d.done)
	return w
}

// Claim returns the diagnosis' message in channel and whether this caller
// must post it (the first to claim the channel), then call Posted.
func (c *Sharer[W]) Claim(d *Diagnosis[W], channel string) (*Post, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := d.posts[channel]; ok {
		return p, false
	}
	p := &Post{Channel: channel, ready: make(chan struct{})}
	d.posts[channel] = p
	return p, true
}

// Posted records the outcome of a claimed channel's post.
func (c *Sharer[W]) Posted(p *Post, ts string, ok bool, requester string) {
	c.mu.Lock()
	p.TS, p.OK, p.Requester, p.At = ts, ok, requester, c.now()
	c.mu.Unlock()
	close(p.ready)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
