// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"container/list"
	"sync"
)

// LRU is a bounded map that forgets its least recently added entries. It
// remembers seen envelope IDs and decided approvals; it is safe for
// concurrent use.
type LRU[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of K, most recent at the front
	items map[K]lruItem[V]
}

type lruItem[V any] struct {
	value V
	elem  *list.Element
}

// NewLRU returns an LRU holding at most max entries.
func NewLRU[K comparable, V any](max int) *LRU[K, V] {
	return &LRU[K, V]{max: max, order: list.New(), items: map[K]lruItem[V]{}}
}

// AddIfAbsent stores v under k unless k is present, and reports whether it
// stored it; when k is present it returns the value already stored.
func (c *LRU[K, V]) AddIfAbsent(k K, v V) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.items[k]; ok {
		c.order.MoveToFront(it.elem)
		return it.value, false
	}
	c.items[k] = lruItem[V]{value: v, elem: c.order.PushFront(k)}
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(K))
	}
	return v, true
}

// Len returns the number of entries.
func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}
