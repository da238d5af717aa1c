// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"regexp"
	"strconv"
	"strings"
)

// Placeholder stands for an interpolated value in a template's text. It is the
// same marker as the catalogue's (catalog.Placeholder).
const Placeholder = "{}"

// tmpl is a message template being built: literal text with Placeholder for
// every value the code puts in at run time.
type tmpl struct {
	b strings.Builder
}

func (t *tmpl) lit(s string) {
	// A literal "{}" in the code would read as a placeholder; so be it (slf4j
	// formats treat it as one too).
	t.b.WriteString(s)
}

func (t *tmpl) hole() {
	if !strings.HasSuffix(t.b.String(), Placeholder) {
		t.b.WriteString(Placeholder)
	}
}

func (t *tmpl) String() string { return t.b.String() }

// literalLen counts the template's literal bytes.
func literalLen(text string) int {
	return len(strings.ReplaceAll(text, Placeholder, ""))
}

// splitTop splits expr at top-level occurrences of sep (outside strings,
// parentheses, brackets and braces).
func splitTop(expr string, sep byte) []string {
	var out []string
	depth := 0
	start := 0
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '"' {
			i = skipString(expr, i) - 1
			continue
		}
		if c == '\'' && i+2 < len(expr) {
			if j := strings.IndexByte(expr[i+1:], '\''); j >= 0 && j <= 6 {
				i += j + 1
				continue
			}
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		default:
			if c == sep && depth == 0 {
				out = append(out, expr[start:i])
				start = i + 1
			}
		}
	}
	return append(out, expr[start:])
}

// skipString returns the offset just after the string literal starting at
// the quote at i (plain or triple-quoted). A Scala interpolated string (an
// identifier right before the quote) may hold ${...} with quotes of its own.
func skipString(s string, i int) int {
	return skipStringAs(s, i, i > 0 && isIdentByte(s[i-1]))
}

// skipStringAs is skipString with the interpolation said by the caller.
func skipStringAs(s string, i int, interp bool) int {
	triple := strings.HasPrefix(s[i:], `"""`)
	j := i + 1
	if triple {
		j = i + 3
	}
	for j < len(s) {
		c := s[j]
		switch {
		case interp && c == '$' && j+1 < len(s) && s[j+1] == '{':
			j = skipBraces(s, j+1)
			continue
		case !triple && c == '\\':
			j += 2
			continue
		case !triple && c == '\n':
			return j // unterminated: stop at the line end
		case c == '"':
			if !triple {
				return j + 1
			}
			if strings.HasPrefix(s[j:], `"""`) {
				j += 3
				for j < len(s) && s[j] == '"' {
					j++
				}
				return j
			}
		}
		j++
	}
	return len(s)
}

// skipBraces returns the offset just after the brace closing the one at i,
// skipping strings inside.
func skipBraces(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			j = skipString(s, j) - 1
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// unescape decodes Java/Scala escapes in a plain string literal's body.
func unescape(body string) string {
	if !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'u':
			j := i + 1
			for j < len(body) && body[j] == 'u' {
				j++
			}
			if j+4 <= len(body) {
				if r, err := strconv.ParseUint(body[j:j+4], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i = j + 3
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(body[i])
		}
	}
	return b.String()
}

var (
	formatVerb = regexp.MustCompile(`%(?:\d+\$)?[-#+ 0,(]*\d*(?:\.\d+)?[a-zA-Z%]`)
	identRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)
)

// formatString writes a printf-style format string: %s, %d... become
// placeholders, %% is a percent sign, %n a newline.
func formatString(t *tmpl, f string) {
	last := 0
	for _, loc := range formatVerb.FindAllStringIndex(f, -1) {
		t.lit(f[last:loc[0]])
		switch f[loc[1]-1] {
		case '%':
			t.lit("%")
		case 'n':
			t.lit("\n")
		default:
			t.hole()
		}
		last = loc[1]
	}
	t.lit(f[last:])
}

// slf4jString writes an slf4j format: "{}" is a placeholder already.
func slf4jString(t *tmpl, f string) {
	parts := strings.Split(f, "{}")
	for i, p := range parts {
		if i > 0 {
			t.hole()
		}
		t.lit(p)
	}
}

// interpolated writes a Scala s"..." / f"..." body: $name and ${...} are
// placeholders ($$ is a dollar sign); in f"..." the format verb after a
// value is dropped.
func interpolated(t *tmpl, body string, escapes, fmtVerbs bool) {
	var lit strings.Builder
	flush := func() {
		s := lit.String()
		if escapes {
			s = unescape(s)
		}
		if fmtVerbs {
			s = strings.ReplaceAll(s, "%%", "%")
		}
		t.lit(s)
		lit.Reset()
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && escapes && i+1 < len(body) {
			lit.WriteByte(c)
			lit.WriteByte(body[i+1])
			i++
			continue
		}
		if c != '$' || i+1 >= len(body) {
			lit.WriteByte(c)
			continue
		}
		n := body[i+1]
		switch {
		case n == '$':
			lit.WriteByte('$')
			i++
			continue
		case n == '{':
			depth := 0
			j := i + 1
			for ; j < len(body); j++ {
				if body[j] == '{' {
					depth++
				} else if body[j] == '}' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			flush()
			t.hole()
			i = j
		default:
			m := identRe.FindString(body[i+1:])
			if m == "" {
				lit.WriteByte(c)
				continue
			}
			flush()
			t.hole()
			i += len(m)
		}
		if fmtVerbs && i+1 < len(body) && body[i+1] == '%' {
			if loc := formatVerb.FindStringIndex(body[i+1:]); loc != nil && loc[0] == 0 {
				i += loc[1]
			}
		}
	}
	flush()
}

// stringLiteral decodes a string literal piece (with an optional Scala
// interpolator in front). ok is false when piece is not one literal.
func stringLiteral(t *tmpl, piece string, slf4j bool) bool {
	prefix := ""
	if k := strings.IndexByte(piece, '"'); k > 0 {
		prefix = piece[:k]
		piece = piece[k:]
	}
	if !strings.HasPrefix(piece, `"`) || skipStringAs(piece, 0, prefix != "") != len(piece) {
		return false
	}
	triple := strings.HasPrefix(piece, `"""`) && len(piece) >= 6
	var body string
	if triple {
		body = piece[3 : len(piece)-3]
	} else {
		body = piece[1 : len(piece)-1]
	}
	switch prefix {
	case "":
		s := body
		if !triple {
			s = unescape(body)
		}
		if slf4j {
			slf4jString(t, s)
		} else {
			t.lit(s)
		}
	case "s":
		interpolated(t, body, !triple, false)
	case "f":
		interpolated(t, body, !triple, true)
	case "raw":
		interpolated(t, body, false, false)
	default:
		return false
	}
	return true
}

var (
	stripMarginRe = regexp.MustCompile(`\.stripMargin(?:\(\))?(\.replace(?:All)?\(\s*"\\n"\s*,\s*" "\s*\))?$`)
	marginRe      = regexp.MustCompile(`\n[ \t]*\|`)
	// "...".format(args) (Scala), "...".formatted(args) (Java 15+)
	dotFormat = regexp.MustCompile(`^(?s)(.*)\.(format|formatted)\s*\(`)
	// String.format("...", args), format("...", args)
	callFormat = regexp.MustCompile(`^(?:String\.)?format\s*\(`)
)

// exprTemplate turns a message expression (Java string concatenation, Scala
// interpolation, String.format...) into a template. slf4j says whether "{}"
// in literals are placeholders (log calls).
func exprTemplate(expr string, slf4j bool) string {
	var t tmpl
	writeExpr(&t, expr, slf4j, 0)
	return t.String()
}

func writeExpr(t *tmpl, expr string, slf4j bool, depth int) {
	expr = strings.TrimSpace(expr)
	if depth > 8 {
		t.hole()
		return
	}
	pieces := splitTop(expr, '+')
	if len(pieces) > 1 {
		for _, p := range pieces {
			writeExpr(t, p, slf4j, depth+1)
		}
		return
	}
	p := strings.TrimSpace(expr)
	// (a + b): parenthesised concatenation.
	if strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")") && len(splitTop(p[1:len(p)-1], ',')) == 1 && matchingClose(p) == len(p)-1 {
		writeExpr(t, p[1:len(p)-1], slf4j, depth+1)
		return
	}
	// Scala's """...""".stripMargin (optionally .replace("\n", " ")): strip
	// the margins (and join the lines).
	if m := stripMarginRe.FindStringSubmatchIndex(p); m != nil {
		var inner tmpl
		writeExpr(&inner, p[:m[0]], slf4j, depth+1)
		text := marginRe.ReplaceAllString(inner.String(), "\n")
		if m[2] >= 0 {
			text = strings.ReplaceAll(text, "\n", " ")
		}
		t.lit(text)
		return
	}
	// .trim and .toString on a literal do not change what matters here.
	for _, suffix := range []string{".trim", ".trim()", ".toString", ".toString()"} {
		p = strings.TrimSuffix(p, suffix)
	}
	if stringLiteral(t, p, slf4j) {
		return
	}
	if m := callFormat.FindStringIndex(p); m != nil {
		args := splitTop(insideParens(p, m[1]-1), ',')
		if len(args) > 0 {
			var f tmpl
			if stringLiteral(&f, strings.TrimSpace(args[0]), false) {
				formatString(t, f.String())
				return
			}
		}
	}
	if m := dotFormat.FindStringSubmatchIndex(p); m != nil {
		recv := strings.TrimSpace(p[m[2]:m[3]])
		var f tmpl
		if stringLiteral(&f, recv, false) && matchingClose(p[m[1]-1:]) == len(p)-m[1] {
			formatString(t, f.String())
			return
		}
	}
	t.hole()
}

// matchingClose returns the offset of the parenthesis closing the one at the
// start of s, or -1.
func matchingClose(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = skipString(s, i) - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// insideParens returns the text between the '(' at open and its match.
func insideParens(s string, open int) string {
	end := matchingClose(s[open:])
	if end < 0 {
		return s[open+1:]
	}
	return s[open+1 : open+end]
}
