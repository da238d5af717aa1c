// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"slices"
)

// gramBytes is the length of the grams the line filter samples.
const gramBytes = 4

// maxGramStride caps the sampling stride: a longer stride needs more
// grams per keyword, which lets more ordinary text through.
const maxGramStride = 8

// lineFilter tells, cheaply and conservatively, which lines the keyword
// automaton could report a keyword in, so that the automaton and the
// regular expressions run on those lines only.
//
// A keyword can end in a line in two ways. It can lie inside the line:
// the filter samples the line every stride bytes and looks the 4-byte gram
// there up in the set of grams a keyword has at offsets 0..stride-1. Every
// occurrence of a keyword at least stride+3 bytes long covers exactly one
// sample at such an offset, so no occurrence is missed; a sampled gram that
// is in the set is then checked against the keywords it belongs to. Or it
// can start on an earlier line (the automaton's state carries over, see
// literalScanner.scan): then the last byte kept of the text before the
// line and the line's first byte are adjacent in the keyword, which the
// pair table rules out for most line starts.
type lineFilter struct {
	stride int
	// grams has a bit per hashed gram of the set; heads and entries hold
	// the grams of each hash (entries[heads[h]:heads[h+1]]).
	grams   [1 << 10]uint64
	heads   []int32
	entries []gramEntry
	// pairs has a bit per byte pair (a<<8|b) adjacent in some keyword.
	pairs [1 << 10]uint64
	// contextLen is how many kept bytes before a line determine the
	// automaton's state at its start: the longest keyword's length.
	contextLen int
}

// gramEntry is a gram that keyword kw has at offset off.
type gramEntry struct {
	hash uint32
	gram uint32
	off  int
	kw   string
}

// gramHash maps a gram to 16 bits.
func gramHash(g uint32) uint32 { return (g * 0x9E3779B1) >> 16 }

// newLineFilter builds the filter of keywords. It returns nil when a
// keyword is too short to sample (requiredLiterals never yields one).
func newLineFilter(keywords []string) *lineFilter {
	uniq := slices.Compact(slices.Sorted(slices.Values(keywords)))
	f := &lineFilter{stride: maxGramStride}
	for _, k := range uniq {
		if len(k) < gramBytes {
			return nil
		}
		f.stride = min(f.stride, len(k)-gramBytes+1)
		f.contextLen = max(f.contextLen, len(k))
		for i := 0; i+1 < len(k); i++ {
			setBit(&f.pairs, uint32(k[i])<<8|uint32(k[i+1]))
		}
	}
	for _, k := range uniq {
		for off := range f.stride {
			g := binary.LittleEndian.Uint32([]byte(k[off:]))
			h := gramHash(g)
			setBit(&f.grams, h)
			f.entries = append(f.entries, gramEntry{hash: h, gram: g, off: off, kw: k})
		}
	}
	slices.SortStableFunc(f.entries, func(a, b gramEntry) int { return int(a.hash) - int(b.hash) })
	f.heads = make([]int32, 1<<16+1)
	for _, e := range f.entries {
		f.heads[e.hash+1]++
	}
	for h := 1; h < len(f.heads); h++ {
		f.heads[h] += f.heads[h-1]
	}
	return f
}

func setBit(set *[1 << 10]uint64, i uint32) { set[i>>6] |= 1 << (i & 63) }

func hasBit(set *[1 << 10]uint64, i uint32) bool { return set[i>>6]&(1<<(i&63)) != 0 }

// mayContain reports whether some keyword may occur inside line. It never
// says no when one does.
func (f *lineFilter) mayContain(line []byte) bool {
	for q := 0; q+gramBytes <= len(line); q += f.stride {
		g := binary.LittleEndian.Uint32(line[q:])
		h := gramHash(g)
		if hasBit(&f.grams, h) && f.verify(line, q, g, h) {
			return true
		}
	}
	return false
}

// verify reports whether a keyword with gram g (hash h) at some offset
// occurs in line so that the gram lies at q.
func (f *lineFilter) verify(line []byte, q int, g, h uint32) bool {
	for _, e := range f.entries[f.heads[h]:f.heads[h+1]] {
		if e.gram != g {
			continue
		}
		p := q - e.off
		if p >= 0 && p+len(e.kw) <= len(line) && string(line[p:p+len(e.kw)]) == e.kw {
			return true
		}
	}
	return false
}

// mayContinue reports whether a keyword can run from text ending in byte
// last into a line starting with first.
func (f *lineFilter) mayContinue(last, first byte) bool {
	return hasBit(&f.pairs, uint32(last)<<8|uint32(first))
}

// keptLine returns what the engine keeps of a line whose content (without
// its '\n') is c, exactly as runLines does: one trailing '\r' goes, and at
// most MaxLineBytes stay. longLine is the line reader's buffer size: a line
// at least that long is cut first and then loses a trailing '\r'.
func keptLine(c []byte, longLine int) []byte {
	if len(c) >= longLine {
		return bytes.TrimSuffix(c[:MaxLineBytes], []byte{'\r'})
	}
	c = bytes.TrimSuffix(c, []byte{'\r'})
	if len(c) > MaxLineBytes {
		c = c[:MaxLineBytes]
	}
	return c
}

// longLineBytes is the buffer size of the line reader runLines uses for r:
// its own when r is a large enough *bufio.Reader (bufio.NewReaderSize
// returns it as is), else readBufferBytes.
func longLineBytes(r io.Reader) int {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= readBufferBytes {
		return br.Size()
	}
	return readBufferBytes
}
