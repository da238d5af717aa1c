// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// minKeywordLen is the shortest literal worth using as a prefilter key;
// shorter ones would let most lines through.
const minKeywordLen = 4

// requiredLiterals returns a set of literals of which at least one occurs
// in every text the regular expression matches, or nil when there is no
// such set of useful literals (the pattern then runs on every line).
func requiredLiterals(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits := literalsOf(re.Simplify())
	for _, l := range lits {
		if len(l) < minKeywordLen {
			return nil
		}
	}
	return lits
}

// literalsOf implements requiredLiterals on a parsed expression.
func literalsOf(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return literalsOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return literalsOf(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		// Any child's set will do; keep the one whose shortest literal is
		// longest (the most selective).
		var best []string
		for _, sub := range re.Sub {
			if cand := literalsOf(sub); cand != nil && shortest(cand) > shortest(best) {
				best = cand
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			cand := literalsOf(sub)
			if cand == nil {
				return nil
			}
			all = append(all, cand...)
		}
		return all
	}
	return nil
}

func shortest(lits []string) int {
	if len(lits) == 0 {
		return 0
	}
	n := len(lits[0])
	for _, l := range lits[1:] {
		n = min(n, len(l))
	}
	return n
}

// literalScanner finds many literal keywords in one pass over a line (an
// Aho-Corasick automaton compiled to a dense DFA over byte classes). Its
// state can carry over from one line to the next so that a keyword
// wrapped across two lines is still seen.
type literalScanner struct {
	class [256]uint8
	shift uint
	// trans[state<<shift|class] is the next state, bit-inverted (negative)
	// when some keyword ends in that state.
	trans []int32
	out   [][]int32
	lens  []int // keyword lengths
}

// newLiteralScanner builds a scanner for keywords (duplicates allowed;
// each index is reported separately).
func newLiteralScanner(keywords []string) *literalScanner {
	m := &literalScanner{lens: make([]int, len(keywords))}
	nclass := 1 // class 0: bytes in no keyword
	for i, k := range keywords {
		m.lens[i] = len(k)
		for j := 0; j < len(k); j++ {
			if m.class[k[j]] == 0 {
				m.class[k[j]] = uint8(nclass)
				nclass++
			}
		}
	}
	for 1<<m.shift < nclass {
		m.shift++
	}
	width := 1 << m.shift

	// Trie with -1 for "no edge".
	newState := func() int32 {
		for range width {
			m.trans = append(m.trans, -1)
		}
		m.out = append(m.out, nil)
		return int32(len(m.out) - 1)
	}
	newState()
	for i, k := range keywords {
		s := int32(0)
		for j := 0; j < len(k); j++ {
			at := int(s)<<m.shift | int(m.class[k[j]])
			if m.trans[at] < 0 {
				next := newState()
				m.trans[at] = next
			}
			s = m.trans[at]
		}
		m.out[s] = append(m.out[s], int32(i))
	}

	// Breadth-first: failure links, outputs along them, dense transitions.
	fail := make([]int32, len(m.out))
	queue := make([]int32, 0, len(m.out))
	for c := range width {
		if next := m.trans[c]; next > 0 {
			fail[next] = 0
			queue = append(queue, next)
		} else {
			m.trans[c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] = append(m.out[s], m.out[fail[s]]...)
		for c := range width {
			at := int(s)<<m.shift | c
			next := m.trans[at]
			fallback := m.trans[int(fail[s])<<m.shift|c]
			if next < 0 {
				m.trans[at] = fallback
				continue
			}
			fail[next] = fallback
			queue = append(queue, next)
		}
	}
	for at, next := range m.trans {
		if len(m.out[next]) > 0 {
			m.trans[at] = ^next
		}
	}
	return m
}

// scan feeds line to the automaton from state and calls hit for every
// keyword occurrence with the index of its last byte in line (a keyword
// whose length exceeds end+1 started on the previous line). It returns the
// state to carry into the next line.
func (m *literalScanner) scan(state int32, line []byte, hit func(keyword int, end int)) int32 {
	trans, class, shift := m.trans, &m.class, m.shift
	for i, c := range line {
		state = trans[int(state)<<shift|int(class[c])]
		if state < 0 {
			state = ^state
			for _, k := range m.out[state] {
				hit(int(k), i)
			}
		}
	}
	return state
}

// advance feeds text to the automaton from state and returns the state
// it ends in, reporting nothing.
func (m *literalScanner) advance(state int32, text []byte) int32 {
	trans, class, shift := m.trans, &m.class, m.shift
	for _, c := range text {
		state = trans[int(state)<<shift|int(class[c])]
		if state < 0 {
			state = ^state
		}
	}
	return state
}

// validUTF8 returns s, with invalid UTF-8 replaced by U+FFFD so that JSON
// and Slack show it instead of failing.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
