// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// renameWatch records, from the host, when an entry leaves a directory by
// rename(2): an inotify IN_MOVED_FROM event, timestamped by this process as
// it reads the event. It is the test's own observation of the moment of a
// move, independent of the script's word and of the moved directory's ctime
// (which the kubelet bumps again when it applies a pod's fsGroup to the
// volume: the recreated broker's mount re-owns every file, the backup too).
type renameWatch struct {
	fd   int
	name string

	mu    sync.Mutex
	at    time.Time
	count int
	err   error
	done  chan struct{}
}

// watchRename starts watching dir for name being renamed away. It stops
// when the test ends.
func watchRename(t *testing.T, dir, name string) *renameWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	wd, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_FROM)
	if err != nil {
		syscall.Close(fd)
		t.Fatalf("inotify watch on %s: %v", dir, err)
	}
	w := &renameWatch{fd: fd, name: name, done: make(chan struct{})}
	go w.read()
	t.Cleanup(func() {
		// Closing the descriptor does not wake a blocked read: removing
		// the watch does (the kernel queues IN_IGNORED), then it is closed.
		syscall.InotifyRmWatch(fd, uint32(wd))
		select {
		case <-w.done:
		case <-time.After(2 * time.Second):
		}
		syscall.Close(fd)
	})
	return w
}

func (w *renameWatch) read() {
	defer close(w.done)
	buf := make([]byte, 64*1024)
	for {
		n, err := syscall.Read(w.fd, buf)
		now := time.Now()
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			w.mu.Lock()
			w.err = fmt.Errorf("reading inotify events: %d bytes, %w", n, err)
			w.mu.Unlock()
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			var ev syscall.InotifyEvent
			if err := binary.Read(bytes.NewReader(buf[off:off+syscall.SizeofInotifyEvent]), binary.NativeEndian, &ev); err != nil {
				return
			}
			nameBytes := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&syscall.IN_IGNORED != 0 {
				return
			}
			if ev.Mask&syscall.IN_MOVED_FROM != 0 && string(bytes.TrimRight(nameBytes, "\x00")) == w.name {
				w.mu.Lock()
				if w.count == 0 {
					w.at = now
				}
				w.count++
				w.mu.Unlock()
			}
		}
	}
}

// renamed is when the entry was first renamed away and how many times it
// was; an error if the watch failed.
func (w *renameWatch) renamed() (time.Time, int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at, w.count, w.err
}
