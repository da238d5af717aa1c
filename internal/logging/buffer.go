// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package logging

import (
	"strings"
	"sync"
)

// Buffer is an in-memory log sink that is safe for concurrent writes: a
// logger built on it can be shared by goroutines while a test (or a caller
// that shows the log only on failure) reads what was written.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
