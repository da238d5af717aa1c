// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
)

// Limits that keep a scan's memory bounded whatever the log looks like.
const (
	// MaxLineBytes is how much of one log line is kept; the rest of a
	// longer line is read and discarded.
	MaxLineBytes = 4 << 10
	// MaxEvidenceLines is how many log lines one finding quotes at most.
	MaxEvidenceLines = 6
	readBufferBytes  = 64 << 10
)

// evidenceLine is a quoted log line and its 1-based line number.
type evidenceLine struct {
	n    int
	text string
}

// ruleState is what one scan learned about one rule.
type ruleState struct {
	allHit       []bool
	anyHit       bool
	noneHit      bool
	downHit      []bool
	statusLogHit bool
	lines        int // lines that matched an All or Any pattern
	lastLine     int
	specificity  int // distinct patterns that matched
	captures     map[string]string
	evidence     []evidenceLine
	// offsets is the last offset set a metadata-offsets triage pattern
	// read (nil before the first); offsetSets counts how many times the
	// set changed from one match to the next (1: one set throughout).
	offsets    *[3]int64
	offsetSets int
	// offsetsLine is the line the last offset set was read from.
	offsetsLine int
	// For a rule with an automated remedy read from the log: lastTarget
	// is the target the last match named, targetLine its line, and
	// targetSets counts the distinct targets named in a row.
	lastTarget string
	targetLine int
	targetSets int
}

// scan is the state of one pass over one log.
type scan struct {
	e       *Engine
	rules   []ruleState
	matched []bool // per pattern: matched at least once
	queued  []int  // per pattern: line number it was last queued for
	cands   []int32
	lineNo  int
	ac      int32  // automaton state carried across lines
	prev    []byte // previous line (a copy), for lines wrapped in two
	cur     []byte
	joined  []byte
	role    roleMarks
	tail    logTail
	// pending lists the patterns whose keyword was on line pendingLine-1
	// but which did not match there: they are tried once more on line
	// pendingLine joined to it, for a message wrapped after its keyword.
	pending     []int32
	nextPending []int32
	pendingLine int
}

func newScan(e *Engine) *scan {
	sc := &scan{
		e:       e,
		rules:   make([]ruleState, len(e.rules)),
		matched: make([]bool, len(e.patterns)),
		queued:  make([]int, len(e.patterns)),
		prev:    make([]byte, 0, MaxLineBytes),
		cur:     make([]byte, 0, MaxLineBytes),
	}
	for i, r := range e.rules {
		sc.rules[i].allHit = make([]bool, len(r.Match.All))
		sc.rules[i].downHit = make([]bool, len(r.Downgrades))
	}
	return sc
}

// runLines reads r to the end, one line at a time, and feeds every line to
// the automaton. It is the reference path: runChunks must reach exactly the
// same state, and does unless the engine has patterns without a keyword
// (then DiagnoseReader uses runLines, since every line is a candidate).
//
// readerSize is the line reader's buffer size (readBufferBytes; tests use
// less, but more than MaxLineBytes).
func (sc *scan) runLines(r io.Reader, readerSize int) error {
	br := bufio.NewReaderSize(r, readerSize)
	for {
		chunk, err := br.ReadSlice('\n')
		line := chunk
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep its head, skip the rest.
			sc.cur = append(sc.cur[:0], chunk[:MaxLineBytes]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			line = sc.cur
		}
		if len(line) > 0 {
			sc.line(line)
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// line processes one raw line (possibly with its trailing newline).
func (sc *scan) line(raw []byte) {
	raw = bytes.TrimSuffix(raw, []byte{'\n'})
	raw = bytes.TrimSuffix(raw, []byte{'\r'})
	if len(raw) > MaxLineBytes {
		raw = raw[:MaxLineBytes]
	}
	sc.tail.add(sc.lineNo+1, raw)
	sc.process(raw)
}

// process runs the candidate patterns of one line, already cut to what the
// engine keeps of it (see keptLine). sc.lineNo, sc.prev and sc.ac must
// describe the line before it.
func (sc *scan) process(raw []byte) {
	sc.lineNo++
	sc.cands = sc.cands[:0]
	sc.ac = sc.e.scanner.scan(sc.ac, raw, sc.queue)
	for _, p := range sc.e.always {
		sc.queue1(p)
	}
	own := len(sc.cands)
	if sc.pendingLine == sc.lineNo {
		for _, p := range sc.pending {
			sc.queue1(p)
		}
	}
	sc.nextPending = sc.nextPending[:0]
	for i, p := range sc.cands {
		if !sc.try(p, raw) && i < own {
			sc.nextPending = append(sc.nextPending, p)
		}
	}
	sc.pending, sc.nextPending = sc.nextPending, sc.pending
	sc.pendingLine = sc.lineNo + 1
	// Keep a copy: raw may point into the reader's buffer.
	sc.prev = append(sc.prev[:0], raw...)
}

// queue marks the patterns of keyword k as candidates for this line. The
// keyword may have started on the previous line; try handles that case by
// retrying on the two lines joined.
func (sc *scan) queue(k int, _ int) {
	for _, p := range sc.e.byKeyword[k] {
		sc.queue1(p)
	}
}

func (sc *scan) queue1(p int32) {
	if sc.queued[p] == sc.lineNo || !sc.wants(p) {
		return
	}
	sc.queued[p] = sc.lineNo
	sc.cands = append(sc.cands, p)
}

// wants reports whether running pattern p can still teach us anything:
// after its first match only line counts (for MinLines) can change.
func (sc *scan) wants(p int32) bool {
	cp := sc.e.patterns[p]
	if !sc.matched[p] || cp.every {
		return true
	}
	if cp.rule < 0 || (cp.part != partAll && cp.part != partAny) {
		return false
	}
	st := &sc.rules[cp.rule]
	return st.lines < sc.e.rules[cp.rule].Match.MinLines && st.lastLine != sc.lineNo
}

// try runs pattern p on the line, and on the previous line joined to it
// when the line alone does not match (a message wrapped in two). It
// reports whether the pattern matched.
func (sc *scan) try(p int32, line []byte) bool {
	cp := sc.e.patterns[p]
	text, joined := line, false
	loc := sc.match(cp, text)
	if loc == nil && len(sc.prev) > 0 && sc.lineNo > 1 {
		sc.joined = append(append(sc.joined[:0], sc.prev...), line...)
		text, joined = sc.joined, true
		loc = sc.match(cp, text)
	}
	if loc == nil {
		return false
	}
	sc.record(p, cp, text, loc, line, joined)
	return true
}

// match returns the submatch indexes (or a non-nil empty slice for a
// match of a pattern without groups), nil when there is no match.
func (sc *scan) match(cp *compiledPattern, text []byte) []int {
	if cp.captures {
		return cp.re.FindSubmatchIndex(text)
	}
	if cp.re.Match(text) {
		return []int{}
	}
	return nil
}

// record notes a match of pattern p.
func (sc *scan) record(p int32, cp *compiledPattern, text []byte, loc []int, line []byte, joined bool) {
	first := !sc.matched[p]
	sc.matched[p] = true
	if cp.part == partRole {
		sc.role.note(cp.slot, cp.re, text, loc, line)
		return
	}
	st := &sc.rules[cp.rule]
	switch cp.part {
	case partAll:
		st.allHit[cp.slot] = true
	case partAny:
		st.anyHit = true
	case partNone:
		st.noneHit = true
		return
	case partDowngrade:
		st.downHit[cp.slot] = true
	case partStatusLog:
		st.statusLogHit = true
	}
	if (cp.part == partAll || cp.part == partAny) && st.lastLine != sc.lineNo {
		st.lines++
		st.lastLine = sc.lineNo
	}
	if cp.target >= 0 && loc[2*cp.target] >= 0 {
		st.noteTarget(text[loc[2*cp.target]:loc[2*cp.target+1]], sc.lineNo)
	}
	if cp.offsets {
		if st.noteOffsets(cp.re, text, loc) {
			st.offsetsLine = sc.lineNo
		}
		if !first {
			// The last occurrence is the one to act on: quote it too.
			if joined {
				st.addEvidence(sc.lineNo-1, sc.prev)
			}
			st.addEvidence(sc.lineNo, line)
		}
	}
	if !first {
		return
	}
	st.specificity++
	if cp.captures {
		for i, name := range cp.re.SubexpNames() {
			if name == "" || loc[2*i] < 0 {
				continue
			}
			if st.captures == nil {
				st.captures = make(map[string]string)
			}
			if _, ok := st.captures[name]; !ok {
				st.captures[name] = string(text[loc[2*i]:loc[2*i+1]])
			}
		}
	}
	if joined {
		st.addEvidence(sc.lineNo-1, sc.prev)
	}
	st.addEvidence(sc.lineNo, line)
}

// noteTarget records the automated remedy's target one match names (a
// string is made only when the target changes).
func (st *ruleState) noteTarget(target []byte, line int) {
	if st.targetLine == 0 || string(target) != st.lastTarget {
		st.targetSets++
		st.lastTarget = string(target)
	}
	st.targetLine = line
}

// noteOffsets records the offset set of one match of a triage pattern:
// the last set wins, and sets that differ are counted. It reports whether
// the match held a whole set.
func (st *ruleState) noteOffsets(re *regexp.Regexp, text []byte, loc []int) bool {
	var set [3]int64
	for i, g := range offsetGroups {
		j := re.SubexpIndex(g)
		if loc[2*j] < 0 {
			return false
		}
		v, err := strconv.ParseInt(string(text[loc[2*j]:loc[2*j+1]]), 10, 64)
		if err != nil {
			// Too large for int64: not an offset Kafka can write.
			return false
		}
		set[i] = v
	}
	if st.offsets == nil || *st.offsets != set {
		st.offsetSets++
	}
	st.offsets = &set
	return true
}

// addEvidence quotes a line unless it is quoted already or the quota is used.
func (st *ruleState) addEvidence(n int, line []byte) {
	if len(st.evidence) >= MaxEvidenceLines {
		return
	}
	for _, ev := range st.evidence {
		if ev.n == n {
			return
		}
	}
	st.evidence = append(st.evidence, evidenceLine{n: n, text: validUTF8(string(line))})
}
