// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"strings"
)

// masked is a Java or Scala source file with its comments blanked out
// (newlines kept, so byte offsets still give line numbers) and a record of
// which bytes are inside string literals, so that site patterns found in the
// masked text can be checked to start in code.
type masked struct {
	src      string // comments replaced by spaces
	inString []bool // true for bytes inside a string literal (quotes included)
	lineAt   []int  // byte offset of the start of each line
}

// maskSource blanks the comments of a Java or Scala file. It knows "...",
// """...""" (Scala and Java text blocks), Scala interpolators (s"...", the
// ${...} inside them is left as string) and char literals.
func maskSource(text string) *masked {
	b := []byte(text)
	in := make([]bool, len(b))
	n := len(b)
	i := 0
	for i < n {
		c := b[i]
		switch {
		case c == '/' && i+1 < n && b[i+1] == '/':
			for i < n && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case c == '/' && i+1 < n && b[i+1] == '*':
			depth := 0
			for i < n {
				if b[i] == '/' && i+1 < n && b[i+1] == '*' {
					depth++
					b[i], b[i+1] = ' ', ' '
					i += 2
					continue
				}
				if b[i] == '*' && i+1 < n && b[i+1] == '/' {
					depth--
					b[i], b[i+1] = ' ', ' '
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				if b[i] != '\n' {
					b[i] = ' '
				}
				i++
			}
		case c == '"':
			end := skipString(text, i)
			for k := i; k < end && k < n; k++ {
				in[k] = true
			}
			i = end
		case c == '\'':
			// 'x', '\n', '\u0000': a char literal; anything else (a Scala
			// symbol) is left alone.
			j := i + 1
			if j < n && b[j] == '\\' {
				j++
				for j < n && j < i+8 && b[j] != '\'' {
					j++
				}
			} else {
				j++
			}
			if j < n && b[j] == '\'' {
				for k := i; k <= j; k++ {
					in[k] = true
				}
				i = j + 1
			} else {
				i++
			}
		default:
			i++
		}
	}
	lines := []int{0}
	for k, ch := range b {
		if ch == '\n' {
			lines = append(lines, k+1)
		}
	}
	return &masked{src: string(b), inString: in, lineAt: lines}
}

// line returns the 1-based line number of byte offset off.
func (m *masked) line(off int) int {
	lo, hi := 0, len(m.lineAt)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if m.lineAt[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// args splits the argument list that starts at the '(' at open into its
// top-level arguments (trimmed source text) and returns the offset just after
// the closing ')'. ok is false when the list does not close.
func (m *masked) args(open int) (list []string, end int, ok bool) {
	s := m.src
	depth := 0
	start := open + 1
	for i := open; i < len(s); i++ {
		if m.inString[i] {
			continue
		}
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				if a := strings.TrimSpace(s[start:i]); a != "" || len(list) > 0 {
					list = append(list, a)
				}
				return list, i + 1, true
			}
		case ',':
			if depth == 1 {
				list = append(list, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return nil, len(s), false
}
