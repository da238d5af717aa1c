// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// chunkBytes is the size of the blocks runChunks reads and classifies.
const chunkBytes = 1 << 20

// maxWorkers caps the goroutines that classify chunks: one classifies
// about 2 GB/s, so more would only hold more chunks in memory.
const maxWorkers = 4

// maxLongLine is the largest line reader buffer runChunks replicates; a
// caller's *bufio.Reader larger than that makes DiagnoseReader use
// runLines, so that memory stays bounded by a few chunks.
const maxLongLine = 8 << 20

// chunk is a block of whole lines of the log, with what the engine kept
// of the text before it.
type chunk struct {
	buf  []byte // the block's storage
	data []byte // whole lines; the log's last line may lack its '\n'
	// longLine is the line reader buffer size runLines would use.
	longLine int
	// context holds the last lineFilter.contextLen bytes the engine kept
	// of the lines before data (all of them when there are fewer).
	context []byte
	// prevLine is what the engine kept of the line before data.
	prevLine []byte

	// Set by classify.
	lines   int
	flagged []flaggedLine
	done    chan struct{}
}

// flaggedLine is a line of a chunk in which the automaton may report a
// keyword, with what processing it needs.
type flaggedLine struct {
	index              int   // 0-based line index in the chunk
	start, end         int   // bytes of data the engine keeps of the line
	prevStart, prevEnd int   // same for the line before (index > 0)
	state              int32 // automaton state at the line's start
}

// chunkReader cuts a log into chunks at line boundaries. A line too long
// for a chunk is cut to its first longLine bytes, which keeps what the
// engine keeps of it.
type chunkReader struct {
	r          io.Reader
	longLine   int
	contextLen int
	carry      []byte // start of the next line, in the last chunk's buffer
	context    []byte // context of the next chunk
	prevLine   []byte // prevLine of the next chunk
	err        error  // first error of r, io.EOF included
}

// chunkBufferBytes is the storage of one chunk for a line reader buffer
// of longLine bytes: room for the head of a long line and to skip its rest.
func chunkBufferBytes(longLine int) int { return max(chunkBytes, longLine+readBufferBytes) }

// next fills ch with the next lines. It returns false at the end of the
// log, and r's error if it has one.
func (cr *chunkReader) next(ch *chunk) (bool, error) {
	buf := ch.buf
	n := copy(buf, cr.carry)
	cr.carry = nil
	for empty := 0; n < len(buf) && cr.err == nil; {
		m, err := cr.r.Read(buf[n:])
		n += m
		switch {
		case err != nil:
			cr.err = err
		case m > 0:
			empty = 0
		default:
			if empty++; empty >= 100 {
				cr.err = io.ErrNoProgress
			}
		}
	}
	if cr.err != nil && !errors.Is(cr.err, io.EOF) {
		return false, cr.err
	}
	if n == 0 {
		return false, nil
	}
	data := buf[:n]
	if cr.err == nil {
		last := bytes.LastIndexByte(data, '\n')
		if last >= 0 {
			cr.carry = data[last+1:]
			data = data[:last+1]
		} else {
			var err error
			if data, err = cr.skipLongLine(buf); err != nil {
				return false, err
			}
		}
	}
	ch.data, ch.longLine = data, cr.longLine
	ch.context = append(ch.context[:0], cr.context...)
	ch.prevLine = append(ch.prevLine[:0], cr.prevLine...)
	cr.context = lastKept(cr.context[:0], ch.context, data, len(data), cr.contextLen, cr.longLine)
	if len(data) > 0 && data[len(data)-1] == '\n' {
		start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
		cr.prevLine = append(cr.prevLine[:0], keptLine(data[start:len(data)-1], cr.longLine)...)
	}
	return true, nil
}

// skipLongLine handles a buffer filled by a single line: it keeps the
// line's first longLine bytes (the engine keeps less) and reads on to the
// line's end.
func (cr *chunkReader) skipLongLine(buf []byte) ([]byte, error) {
	scratch := buf[cr.longLine+1:]
	for {
		m, err := cr.r.Read(scratch)
		if i := bytes.IndexByte(scratch[:m], '\n'); i >= 0 {
			cr.carry = scratch[i+1 : m]
			cr.err = err
			buf[cr.longLine] = '\n'
			return buf[:cr.longLine+1], nil
		}
		if err != nil {
			cr.err = err
			if errors.Is(err, io.EOF) {
				return buf[:cr.longLine], nil
			}
			return nil, err
		}
	}
}

// lastKept appends to dst the last n bytes of context followed by what the
// engine keeps of the lines of data[:end] (end is a line start).
func lastKept(dst, context, data []byte, end, n, longLine int) []byte {
	out := make([]byte, n)
	at := n
	for end > 0 && at > 0 {
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		kept := keptLine(data[start:end-1], longLine)
		c := min(len(kept), at)
		at -= copy(out[at-c:at], kept[len(kept)-c:])
		end = start
	}
	if at > 0 {
		c := min(len(context), at)
		at -= copy(out[at-c:at], context[len(context)-c:])
	}
	return append(dst, out[at:]...)
}

// keptSpan is where a kept line lies in a chunk's data.
type keptSpan struct{ start, end int }

// classify counts the lines of ch and flags those in which the automaton
// may report a keyword, with the automaton's state at their start.
func (e *Engine) classify(ch *chunk) {
	f, longLine, data := e.filter, ch.longLine, ch.data
	ch.lines, ch.flagged = 0, ch.flagged[:0]

	// recent holds the last kept non-empty lines, enough to hold the
	// contextLen bytes before a line.
	recent := make([]keptSpan, 1)
	for len(recent) < f.contextLen {
		recent = append(recent, recent...)
	}
	mask, seen := len(recent)-1, 0
	contextBuf := make([]byte, f.contextLen)

	last, haveLast := byte(0), len(ch.context) > 0
	if haveLast {
		last = ch.context[len(ch.context)-1]
	}
	prev := keptSpan{}
	// afterKeyword is true on the line after one the filter picked: a
	// pattern whose keyword was there is retried on the two lines joined
	// (see scan.pending). The first line of a chunk is taken as such,
	// since the filter's verdict on the chunk before is not known here;
	// processing a line the line reader would also process is harmless.
	afterKeyword := true
	for pos := 0; pos < len(data); {
		end, next := len(data), len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			end, next = pos+i, pos+i+1
		}
		kept := keptLine(data[pos:end], longLine)
		picked := false
		if len(kept) > 0 {
			picked = (haveLast && f.mayContinue(last, kept[0])) || f.mayContain(kept)
			if picked || afterKeyword {
				before := contextBefore(contextBuf, ch, recent, seen)
				ch.flagged = append(ch.flagged, flaggedLine{
					index: ch.lines, start: pos, end: pos + len(kept),
					prevStart: prev.start, prevEnd: prev.end,
					state: e.scanner.advance(0, before),
				})
			}
			last, haveLast = kept[len(kept)-1], true
			recent[seen&mask] = keptSpan{pos, pos + len(kept)}
			seen++
		}
		prev = keptSpan{pos, pos + len(kept)}
		afterKeyword = picked
		ch.lines++
		pos = next
	}
}

// contextBefore returns the last len(out) kept bytes before the current
// line, stored at the end of out: from the newest of the seen kept lines
// (recent is a ring), then from the chunk's context.
func contextBefore(out []byte, ch *chunk, recent []keptSpan, seen int) []byte {
	at := len(out)
	for i := seen - 1; i >= 0 && i >= seen-len(recent) && at > 0; i-- {
		s := recent[i&(len(recent)-1)]
		kept := ch.data[s.start:s.end]
		c := min(len(kept), at)
		at -= copy(out[at-c:at], kept[len(kept)-c:])
	}
	if at > 0 {
		c := min(len(ch.context), at)
		at -= copy(out[at-c:at], ch.context[len(ch.context)-c:])
	}
	return out[at:]
}

// merge runs the flagged lines of ch through the line logic, in order.
// Lines that are not flagged would change nothing but the line count.
func (sc *scan) merge(ch *chunk, base int) {
	for _, fl := range ch.flagged {
		prev := ch.prevLine
		if fl.index > 0 {
			prev = ch.data[fl.prevStart:fl.prevEnd]
		}
		sc.lineNo = base + fl.index
		sc.prev = append(sc.prev[:0], prev...)
		sc.ac = fl.state
		sc.process(ch.data[fl.start:fl.end])
	}
	sc.lineNo = base + ch.lines
	// The log's last lines, as runLines keeps them (see logTail).
	end := len(ch.data)
	if end > 0 && ch.data[end-1] == '\n' {
		end--
	}
	start, pos := end, end
	for range maxTailLines {
		start = bytes.LastIndexByte(ch.data[:pos], '\n') + 1
		if start == 0 {
			break
		}
		pos = start - 1
	}
	// The kept lines are the chunk's last ones: number them back from its end.
	n := base + ch.lines - bytes.Count(ch.data[start:end], []byte{'\n'})
	for pos = start; pos <= end && pos < len(ch.data); {
		lineEnd, next := len(ch.data), len(ch.data)
		if i := bytes.IndexByte(ch.data[pos:], '\n'); i >= 0 {
			lineEnd, next = pos+i, pos+i+1
		}
		sc.tail.add(n, keptLine(ch.data[pos:lineEnd], ch.longLine))
		n++
		pos = next
	}
}

// chunkPool recycles chunks of the usual size across scans.
var chunkPool = sync.Pool{New: func() any { return &chunk{buf: make([]byte, chunkBufferBytes(readBufferBytes))} }}

func newChunk(size int) *chunk {
	if size != chunkBufferBytes(readBufferBytes) {
		return &chunk{buf: make([]byte, size)}
	}
	return chunkPool.Get().(*chunk)
}

func releaseChunk(ch *chunk) {
	if len(ch.buf) == chunkBufferBytes(readBufferBytes) {
		ch.data, ch.done = nil, nil
		chunkPool.Put(ch)
	}
}

// runChunks reads r in chunks of whole lines, classifies the chunks on
// workers goroutines and runs the flagged lines through the line logic in
// log order. It ends in the state runLines(r, longLine) ends in. Chunks
// take bufBytes each (at least chunkBufferBytes(longLine) in production;
// at least longLine+2 always), workers+2 of them at most.
func (sc *scan) runChunks(r io.Reader, longLine, bufBytes, workers int) error {
	e := sc.e
	cr := &chunkReader{r: r, longLine: longLine, contextLen: e.filter.contextLen}
	ch := newChunk(bufBytes)
	ok, err := cr.next(ch)
	if err != nil || !ok {
		releaseChunk(ch)
		return err
	}
	if cr.err != nil || workers < 2 {
		// A log that fits one chunk, or no parallelism: no goroutines.
		base := 0
		for {
			e.classify(ch)
			sc.merge(ch, base)
			base += ch.lines
			if ok, err = cr.next(ch); err != nil || !ok {
				releaseChunk(ch)
				return err
			}
		}
	}
	return sc.runPipeline(cr, ch, workers, bufBytes)
}

// runPipeline classifies chunks on workers goroutines while this one
// reads ahead and merges results in order. first is the chunk read already.
func (sc *scan) runPipeline(cr *chunkReader, first *chunk, workers, bufBytes int) error {
	e := sc.e
	// Chunks in flight: one per worker, one being read, one being merged.
	free := make(chan *chunk, workers+2)
	for range workers + 1 {
		free <- newChunk(bufBytes)
	}
	jobs := make(chan *chunk, workers)
	order := make(chan *chunk, workers+2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ch := range jobs {
				e.classify(ch)
				close(ch.done)
			}
		})
	}
	var readErr error
	wg.Go(func() {
		defer close(jobs)
		defer close(order)
		for ch := first; ; {
			ch.done = make(chan struct{})
			order <- ch
			jobs <- ch
			ch = <-free
			var ok bool
			if ok, readErr = cr.next(ch); readErr != nil || !ok {
				free <- ch
				return
			}
		}
	})
	base := 0
	for ch := range order {
		<-ch.done
		sc.merge(ch, base)
		base += ch.lines
		free <- ch
	}
	wg.Wait()
	close(free)
	for ch := range free {
		releaseChunk(ch)
	}
	return readErr
}
