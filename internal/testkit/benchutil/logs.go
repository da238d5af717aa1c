// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package benchutil

import (
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
)

// StoreLogs serves the logs of a kubesim LogStore, windowed as the kubelet
// windows them (tailLines, then limitBytes).
func StoreLogs(store *kubesim.LogStore) LogServer {
	return func(ns, pod string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
		text, ok := store.Get(ns, pod, o.Container, o.Previous)
		if !ok {
			return nil, fmt.Errorf("%w: %s/%s container %s (previous=%t)", ErrNoLog, ns, pod, o.Container, o.Previous)
		}
		return io.NopCloser(strings.NewReader(kubesim.Window(text, deref(o.TailLines, -1), deref(o.LimitBytes, -1)))), nil
	}
}

// TextLogs serves text as every container's log (previous and current),
// windowed as the kubelet windows it.
func TextLogs(text string) LogServer {
	return func(_, _ string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(kubesim.Window(text, deref(o.TailLines, -1), deref(o.LimitBytes, -1)))), nil
	}
}

func deref(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// GeneratedLog is a container log of NoiseLines fixed-width lines followed
// by Tail (the crash), produced on demand: a 1 GiB log costs no memory.
type GeneratedLog struct {
	// NoiseLines is how many noise lines precede Tail.
	NoiseLines int64
	// Tail ends the log (the crash lines), newline-terminated.
	Tail string
}

// noiseWidth is the length of every noise line, newline included.
const noiseWidth = 200

// noiseTemplates are everyday broker lines (synthetic), one per line index
// in turn; %09d is the line number, so no two lines are equal.
var noiseTemplates = []string{
	"[2026-11-29 08:00:00,000] INFO [LocalLog partition=orders-3, dir=/bitnami/kafka/data] Rolled new log segment at offset %09d in 1 ms. (kafka.log.LocalLog)",
	"[2026-11-29 08:00:00,000] INFO [Partition payments-7 broker=100] ISR updated to 100,101,102 and version updated to %09d (kafka.cluster.Partition)",
	"[2026-11-29 08:00:00,000] WARN [RaftManager id=100] Connection to node 2 could not be established, attempt %09d. (org.apache.kafka.clients.NetworkClient)",
	"[2026-11-29 08:00:00,000] INFO [GroupCoordinator id=100] Member consumer-%09d joined group billing in Stable state. (kafka.coordinator.group)",
}

// GeneratedLogOfSize returns a log of at least size bytes ending in tail.
func GeneratedLogOfSize(size int64, tail string) GeneratedLog {
	n := max(0, (size-int64(len(tail))+noiseWidth-1)/noiseWidth)
	return GeneratedLog{NoiseLines: n, Tail: tail}
}

// Size is the log's length in bytes.
func (g GeneratedLog) Size() int64 { return g.NoiseLines*noiseWidth + int64(len(g.Tail)) }

// Lines is the number of lines, the tail's included.
func (g GeneratedLog) Lines() int64 { return g.NoiseLines + int64(strings.Count(g.Tail, "\n")) }

// noiseLine writes noise line i (noiseWidth bytes) into buf.
func noiseLine(buf []byte, i int64) []byte {
	buf = fmt.Appendf(buf[:0], noiseTemplates[i%int64(len(noiseTemplates))], i)
	for len(buf) < noiseWidth-1 {
		buf = append(buf, ' ')
	}
	return append(buf[:noiseWidth-1], '\n')
}

// Reader returns the whole log.
func (g GeneratedLog) Reader() io.Reader { return g.from(0) }

// from returns the log from noise line first on (the tail always included).
func (g GeneratedLog) from(first int64) io.Reader {
	return io.MultiReader(&noiseReader{next: first, end: g.NoiseLines}, strings.NewReader(g.Tail))
}

// Window returns what the kubelet streams for tailLines and limitBytes
// (negative: no bound), read lazily: the last tailLines lines, then at most
// limitBytes bytes of them.
func (g GeneratedLog) Window(tailLines, limitBytes int64) io.Reader {
	var r io.Reader = g.Reader()
	if tailLines >= 0 {
		tailOnly := int64(strings.Count(g.Tail, "\n"))
		if tailLines < tailOnly {
			lines := strings.SplitAfter(g.Tail, "\n")
			r = strings.NewReader(strings.Join(lines[len(lines)-1-int(tailLines):], ""))
		} else {
			r = g.from(max(0, g.NoiseLines-(tailLines-tailOnly)))
		}
	}
	if limitBytes >= 0 {
		r = io.LimitReader(r, limitBytes)
	}
	return r
}

// Server serves the log to every pods/log request. When honourLimits is
// false it ignores tailLines and limitBytes and streams the whole log, as
// a misbehaving server or proxy might: the bot must bound its own read.
func (g GeneratedLog) Server(honourLimits bool) LogServer {
	return func(_, _ string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
		if !honourLimits {
			return io.NopCloser(g.Reader()), nil
		}
		return io.NopCloser(g.Window(deref(o.TailLines, -1), deref(o.LimitBytes, -1))), nil
	}
}

// noiseReader produces noise lines next..end-1.
type noiseReader struct {
	next, end int64
	line      []byte
	pending   []byte
}

func (r *noiseReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.pending) == 0 {
			if r.next >= r.end {
				break
			}
			r.line = noiseLine(r.line, r.next)
			r.pending = r.line
			r.next++
		}
		c := copy(p[n:], r.pending)
		r.pending = r.pending[c:]
		n += c
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
