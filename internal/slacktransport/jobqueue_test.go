// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

// heldQueue is a one-worker queue whose first job holds the worker until
// release is closed, and which records the order jobs ran in.
type heldQueue struct {
	q       *JobQueue
	wg      sync.WaitGroup
	mu      sync.Mutex
	ran     []string
	release chan struct{}
}

func newHeldQueue(t *testing.T, capacity int) *heldQueue {
	h := &heldQueue{release: make(chan struct{})}
	h.q = NewJobQueue(1, capacity, h.wg.Go)
	if _, ok := h.q.Admit(); !ok {
		t.Fatal("an empty queue refused")
	}
	h.q.Run("holder", func() { <-h.release })
	return h
}

func (h *heldQueue) job(name string) func() {
	return func() {
		h.mu.Lock()
		h.ran = append(h.ran, name)
		h.mu.Unlock()
	}
}

func (h *heldQueue) submit(t *testing.T, key, name string) {
	t.Helper()
	if _, ok := h.q.Admit(); !ok {
		t.Fatalf("queue refused %s", name)
	}
	h.q.Run(key, h.job(name))
}

func (h *heldQueue) finish() []string {
	close(h.release)
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ran
}

// TestQueueRoundRobinAcrossRequesters: one requester's burst does not go
// before everyone else's single request; urgent jobs (clicks) go first.
func TestQueueRoundRobinAcrossRequesters(t *testing.T) {
	h := newHeldQueue(t, 16)
	for _, j := range []struct{ key, name string }{
		{"alice", "a1"}, {"alice", "a2"}, {"alice", "a3"}, {"alice", "a4"},
		{"bob", "b1"}, {"carol", "c1"}, {"bob", "b2"},
	} {
		h.submit(t, j.key, j.name)
	}
	if _, ok := h.q.Admit(); !ok {
		t.Fatal("queue refused the click")
	}
	h.q.RunUrgent(h.job("click"))
	want := []string{"click", "a1", "b1", "c1", "a2", "b2", "a3", "a4"}
	if got := h.finish(); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	if running, waiting := h.q.Depth(); running != 0 || waiting != 0 {
		t.Errorf("after the queue drained: %d running, %d waiting; want none (no idle workers)", running, waiting)
	}
}

// TestQueueRefusesOnlyWhenFull: with the worker busy, capacity jobs wait;
// the next is refused with a retry time; a job owed to an admitted request
// is queued even then; a freed place admits again.
func TestQueueRefusesOnlyWhenFull(t *testing.T) {
	h := newHeldQueue(t, 2)
	h.submit(t, "alice", "a1")
	h.submit(t, "bob", "b1")
	retry, ok := h.q.Admit()
	if ok {
		t.Fatal("a full queue admitted a job")
	}
	if retry <= 0 {
		t.Errorf("refusal retry time %v, want a positive estimate", retry)
	}
	h.q.RunOwed("alice", h.job("owed"))
	if _, waiting := h.q.Depth(); waiting != 3 {
		t.Errorf("%d waiting, want 3 (the owed answer is never refused)", waiting)
	}
	if g := gaugeValue(t, metrics.QueueWaiting); g != 3 {
		t.Errorf("kafkabot_queue_waiting = %v, want 3", g)
	}
	got := h.finish()
	if want := []string{"a1", "b1", "owed"}; !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	if g := gaugeValue(t, metrics.QueueWaiting); g != 0 {
		t.Errorf("kafkabot_queue_waiting = %v after draining, want 0", g)
	}
	if _, ok := h.q.Admit(); !ok {
		t.Error("an empty queue refused after draining")
	}
}

// TestQueueWithoutWaiting: capacity 0 keeps the old behaviour: busy
// workers refuse at once.
func TestQueueWithoutWaiting(t *testing.T) {
	h := newHeldQueue(t, 0)
	if _, ok := h.q.Admit(); ok {
		t.Error("a queue of size 0 with its worker busy admitted a job")
	}
	h.finish()
}

// gaugeValue reads a gauge's current value.
func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
