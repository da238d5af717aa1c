// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// brokerRun is one run of a broker's Kafka container; end is zero when none
// was reported (still running).
type brokerRun struct{ start, end time.Time }

func (r brokerRun) String() string {
	end := "-"
	if !r.end.IsZero() {
		end = r.end.Format(time.TimeOnly)
	}
	return r.start.Format(time.TimeOnly) + ".." + end
}

// overlaps says whether the run may have been in progress at t. The
// kubelet's times have 1 s resolution (truncated): a run reported as S..E
// ran within [S, E+1s).
func (r brokerRun) overlaps(t time.Time) bool {
	return !t.Before(r.start) && (r.end.IsZero() || t.Before(r.end.Add(time.Second)))
}

// checkMoveWindow checks the approved repair's move against the broker's
// real lifecycle: the moved entry left the log dir exactly once (inotify,
// from the host), while Kafka's container was stopped (no run the pod
// watch saw, from its startedAt to its finishedAt, spans the rename),
// after the run the approval came in had ended (the broker restarted by
// itself in the repair window: the debug pod got no go while it ran), and
// before the deadline of the last go the debug pod's annotation carried.
func checkMoveWindow(t *testing.T, a approval, runs []brokerRun, debug podRecord) {
	t.Helper()
	renamed, n, err := a.rename.renamed()
	switch {
	case err != nil:
		t.Fatalf("watching the log dir for the move: %v", err)
	case n != 1:
		t.Fatalf("%s left the log dir %d times, want 1", a.fault.moved, n)
	}
	var approvedIn *brokerRun
	for i, r := range runs {
		if r.overlaps(renamed) {
			t.Errorf("%s left the log dir at %s, while Kafka ran (%v; runs %v)", a.fault.moved, renamed.Format(time.RFC3339Nano), r, runs)
		}
		if r.start.Equal(a.running) {
			approvedIn = &runs[i]
		}
	}
	switch {
	case approvedIn == nil:
		t.Errorf("the pod watch saw no run started at %s, the one approved in (runs %v)", a.running.Format(time.TimeOnly), runs)
	case approvedIn.end.IsZero():
		t.Errorf("the pod watch never saw the run approved in end (%v), yet the move was made", *approvedIn)
	case !approvedIn.overlaps(a.at):
		t.Errorf("the approval at %s was not given while Kafka ran (run %v): not the repair-window case", a.at.Format(time.RFC3339Nano), *approvedIn)
	case len(debug.goSeen) > 0 && debug.goSeen[0].Before(approvedIn.end):
		t.Errorf("the debug pod had its go at %s, before the run approved in ended (%v)", debug.goSeen[0].Format(time.RFC3339Nano), *approvedIn)
	}
	var deadline time.Time
	for _, v := range debug.goValues {
		dot := strings.LastIndexByte(v, '.')
		sec, err := strconv.ParseInt(v[dot+1:], 10, 64)
		if dot < 0 || err != nil {
			t.Fatalf("the debug pod's go annotation %q is not <repair id>.<unix seconds>", v)
		}
		if d := time.Unix(sec, 0); d.After(deadline) {
			deadline = d
		}
	}
	switch {
	case deadline.IsZero():
		t.Errorf("no go annotation with a deadline on the debug pod")
	case !renamed.Before(deadline.Add(time.Second)):
		t.Errorf("%s left the log dir at %s, after the last go's deadline %s", a.fault.moved, renamed.Format(time.RFC3339Nano), deadline.Format(time.RFC3339))
	}
	var stoppedAt time.Time
	for _, r := range runs {
		if !r.end.IsZero() && r.end.Before(renamed) {
			stoppedAt = r.end
		}
	}
	t.Logf("WINDOW %s: approved at %s in run %v; go(s) %v seen at %v; %s left the log dir at %s (%s after Kafka's last stop, last deadline %s); runs %v",
		a.pod, a.at.Format("15:04:05.000"), approvedIn, debug.goValues, timesOf(debug.goSeen), a.fault.moved, renamed.Format("15:04:05.000"),
		renamed.Sub(stoppedAt).Round(100*time.Millisecond), deadline.Format(time.TimeOnly), runs)
}

func timesOf(ts []time.Time) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Format("15:04:05.000"))
	}
	return out
}
