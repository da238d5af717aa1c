// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package catalog

import (
	"sort"
	"strings"
)

// Match is a message recognised as a template.
type Match struct {
	Template *Template
	Values   []string // the text in place of each Placeholder, in order
	// Class is the failure class of this occurrence: an operating-system
	// cause named in the message (No space left on device...) wins over the
	// template's class; "" when neither gives one.
	Class string
	// Truncated is true when the message stops inside the template's text
	// (a log excerpt cut short, a line cut by a log shipper): at least
	// MinTruncatedLiteral bytes of literal text matched before the cut.
	Truncated bool
	// Cause says where Class came from: "template", "os: <text>" (an
	// operating-system error text in the message) or "nested: <id>" (the
	// message wraps another template's message).
	Cause string
}

// MinTruncatedLiteral is the least number of literal bytes a message cut
// short must match for a truncated match.
const MinTruncatedLiteral = 40

// MinLiteral is the least number of literal bytes a template needs to be
// matched on its own; shorter ones ("Error: {}") say nothing by themselves.
const MinLiteral = 8

// index finds candidate templates by one rare word (an anchor) of their
// literal text, so a message costs one map lookup per word plus a check of
// the few templates sharing its words.
type index struct {
	// maybe has a bit for the cheap hash of every anchor word: most words
	// of a message are ruled out without hashing them for the map.
	maybe     [1 << 16 / 64]uint64
	byWord    map[string][]int32
	templates []*Template
	second    []string // per template: a second anchor word the message must have ("" if none)
	unindexed int
}

var wordByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	return t
}()

func isWordByte(c byte) bool { return wordByte[c] }

// words calls f with each run of word bytes of s of length >= 3.
func words(s string, f func(w string)) {
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j-i >= 3 {
			f(s[i:j])
		}
		i = j
	}
}

// anchorWords lists the words of t that a matching message must contain
// exactly: words of literal parts that do not touch a placeholder (a value
// next to them could extend them).
func anchorWords(t *Template) []string {
	var out []string
	last := len(t.parts) - 1
	for k, p := range t.parts {
		for i := 0; i < len(p); {
			if !isWordByte(p[i]) {
				i++
				continue
			}
			j := i
			for j < len(p) && isWordByte(p[j]) {
				j++
			}
			gluedBefore := i == 0 && k > 0
			gluedAfter := j == len(p) && k < last
			if j-i >= 3 && !gluedBefore && !gluedAfter {
				out = append(out, p[i:j])
			}
			i = j
		}
	}
	return out
}

func buildIndex(ts []*Template) *index {
	ix := &index{byWord: map[string][]int32{}, templates: ts, second: make([]string, len(ts))}
	freq := map[string]int{}
	anchors := make([][]string, len(ts))
	for i, t := range ts {
		if literalLen(t.Text) < MinLiteral {
			continue
		}
		ws := anchorWords(t)
		anchors[i] = ws
		seen := map[string]bool{}
		for _, w := range ws {
			if !seen[w] {
				seen[w] = true
				freq[w]++
			}
		}
	}
	for i, ws := range anchors {
		if len(ws) == 0 {
			ix.unindexed++
			continue
		}
		rarer := func(a, b string) bool { return freq[a] < freq[b] || freq[a] == freq[b] && len(a) > len(b) }
		best := ws[0]
		for _, w := range ws[1:] {
			if rarer(w, best) {
				best = w
			}
		}
		second := ""
		for _, w := range ws {
			if w != best && (second == "" || rarer(w, second)) {
				second = w
			}
		}
		ix.byWord[best] = append(ix.byWord[best], int32(i))
		ix.second[i] = second
		h := quickHash(best)
		ix.maybe[h/64] |= 1 << (h % 64)
	}
	return ix
}

// quickHash is a cheap 16-bit hash of a word: its length and its first
// three and last two bytes.
func quickHash(w string) uint32 {
	n := len(w)
	h := uint32(n)*0x9E37 ^ uint32(w[0])<<9 ^ uint32(w[1])<<5 ^ uint32(w[2]) ^ uint32(w[n-1])<<12 ^ uint32(w[n-2])<<2
	return (h ^ h>>16) & 0xFFFF
}

func literalLen(text string) int {
	return len(text) - strings.Count(text, Placeholder)*len(Placeholder)
}

// Unindexed counts the templates too short to be matched on their own.
func (c *Catalog) Unindexed() int { return c.index.unindexed }

// Match finds the template a message was printed from. message is a log
// message without Kafka's "[time] LEVEL " prefix and trailing " (logger)", or
// an exception line "pkg.ExceptionClass: message" (a "Caused by: " in front
// is fine). Of several matching templates the most specific (most literal
// text) wins. ok is false when no template matches.
func (c *Catalog) Match(message string) (Match, bool) {
	return c.match(message, 0)
}

func (c *Catalog) match(message string, depth int) (Match, bool) {
	msg := strings.TrimRight(message, " \t\r\n")
	var (
		best       *Template
		bestValues []string
		bestScore  int
		seen       [32]string // anchor words already looked up (a template has one)
		nSeen      int
		present    [16]uint64 // quickHash%1024 of the message's words, to rule out second anchors
		cand       [256]int32 // the templates looked at, for the truncated pass
		nCand      int
	)
	words(msg, func(w string) {
		h := quickHash(w) % 1024
		present[h/64] |= 1 << (h % 64)
	})
	words(msg, func(w string) {
		if h := quickHash(w); c.index.maybe[h/64]&(1<<(h%64)) == 0 {
			return
		}
		list, ok := c.index.byWord[w]
		if !ok {
			return
		}
		for _, x := range seen[:nSeen] {
			if x == w {
				return
			}
		}
		if nSeen < len(seen) {
			seen[nSeen] = w
			nSeen++
		}
		for _, ti := range list {
			if nCand < len(cand) {
				cand[nCand] = ti
				nCand++
			}
			if sw := c.index.second[ti]; sw != "" {
				if h := quickHash(sw) % 1024; present[h/64]&(1<<(h%64)) == 0 {
					continue
				}
			}
			t := c.index.templates[ti]
			values, ok := matchParts(t.parts, msg)
			if !ok {
				continue
			}
			score := score(t, msg)
			if best == nil || score > bestScore || score == bestScore && t.ID < best.ID {
				best, bestValues, bestScore = t, values, score
			}
		}
	})
	truncated := false
	if best == nil && len(msg) >= MinTruncatedLiteral {
		// A message cut short: the longest literal match before the cut.
		bestLit := 0
		tail := msg[len(msg)-8:]
		for _, ti := range cand[:nCand] {
			t := c.index.templates[ti]
			if !strings.Contains(t.Text, tail) {
				continue // the message's last bytes are not the template's
			}
			values, lit, ok := matchTruncated(t.parts, msg)
			if ok && (lit > bestLit || lit == bestLit && best != nil && t.ID < best.ID) {
				best, bestValues, bestLit = t, values, lit
			}
		}
		truncated = best != nil
	}
	if best == nil {
		return Match{}, false
	}
	m := Match{Template: best, Values: bestValues, Class: best.Class, Cause: "template", Truncated: truncated}
	if cls, text := OSCause(msg); cls != "" {
		m.Class, m.Cause = cls, "os: "+text
	} else if cls := refine(best, bestValues); cls != "" {
		m.Class = cls
	} else if m.Class == "" && depth < 2 {
		// A message that wraps another ("... during logs loading: x.Y: msg"):
		// the wrapped message's class is the class.
		for _, v := range bestValues {
			if len(v) < 16 {
				continue
			}
			if inner, ok := c.match(v, depth+1); ok && inner.Class != "" {
				m.Class, m.Cause = inner.Class, "nested: "+inner.Template.ID
				break
			}
		}
	}
	if m.Class == "" {
		m.Cause = ""
	}
	return m, true
}

// score ranks matching templates: literal text first, then an exception
// class named in the message, then fatal ones, then the number of releases.
func score(t *Template, msg string) int {
	s := literalLen(t.Text) * 64
	if t.Exception != "" && namesException(msg, t.Exception) {
		s += 32
	}
	if t.Fatal {
		s += 16
	}
	return s + min(len(t.Versions), 15)
}

// namesException reports whether msg names exception as a whole class name
// followed by ":" (kafka.common.X is not org.apache.kafka.common.X).
func namesException(msg, exception string) bool {
	for from := 0; ; {
		i := strings.Index(msg[from:], exception+":")
		if i < 0 {
			return false
		}
		i += from
		if i == 0 || !(isWordByte(msg[i-1]) || msg[i-1] == '.') {
			return true
		}
		from = i + 1
	}
}

// matchParts matches msg against a template's literal parts (values in
// between). A template that starts with a literal may be preceded by what
// Kafka and Java put in front of a message: log identifiers "[X id=1] ",
// exception class names "pkg.X: ", "Caused by: ", a fault handler's
// "Encountered fatal fault: ". It allocates only for a match.
func matchParts(parts []string, msg string) ([]string, bool) {
	for _, p := range parts {
		if p != "" && !strings.Contains(msg, p) {
			return nil, false
		}
	}
	var stackBounds [2 * 16]int
	bounds := stackBounds[:0]
	if len(parts) > 16 {
		bounds = make([]int, 0, 2*len(parts))
	}
	ok := false
	if parts[0] == "" {
		bounds, ok = matchFrom(parts, 1, msg, 0, bounds)
	} else {
		p0 := parts[0]
		for from := 0; from <= len(msg)-len(p0); {
			i := strings.Index(msg[from:], p0)
			if i < 0 {
				break
			}
			i += from
			if prefixOK(msg[:i]) {
				if bounds, ok = matchFrom(parts, 1, msg, i+len(p0), bounds[:0]); ok {
					break
				}
			}
			from = i + 1
		}
	}
	if !ok {
		return nil, false
	}
	values := make([]string, 0, len(bounds)/2)
	for k := 0; k+1 < len(bounds); k += 2 {
		values = append(values, msg[bounds[k]:bounds[k+1]])
	}
	return values, true
}

// matchFrom matches parts[k:] at msg[pos:], where a value starts at pos;
// it appends each value's start and end to bounds.
func matchFrom(parts []string, k int, msg string, pos int, bounds []int) ([]int, bool) {
	if k == len(parts) {
		return bounds, pos == len(msg)
	}
	p := parts[k]
	if k == len(parts)-1 {
		// The last literal ends the message.
		if p == "" {
			return append(bounds, pos, len(msg)), true
		}
		if len(msg)-len(p) >= pos && strings.HasSuffix(msg, p) {
			return append(bounds, pos, len(msg)-len(p)), true
		}
		return bounds, false
	}
	if p == "" {
		// Two placeholders in a row cannot be told apart; the builder
		// merges them, so this is only a defensive path.
		return matchFrom(parts, k+1, msg, pos, bounds)
	}
	n := len(bounds)
	for from, tries := pos, 0; from <= len(msg)-len(p) && tries < 8; tries++ {
		i := strings.Index(msg[from:], p)
		if i < 0 {
			return bounds[:n], false
		}
		i += from
		if b, ok := matchFrom(parts, k+1, msg, i+len(p), append(bounds[:n], pos, i)); ok {
			return b, true
		}
		from = i + 1
	}
	return bounds[:n], false
}

// matchTruncated matches a message that stops inside the template's text:
// its literal parts in order (leftmost, no backtracking), the message ending
// in a literal part's first bytes (at least 8 of them), with at least
// MinTruncatedLiteral literal bytes matched in all. It returns the values up
// to the cut and the literal bytes matched.
func matchTruncated(parts []string, msg string) ([]string, int, bool) {
	pos, lit := 0, 0
	var values []string
	start := 1
	if parts[0] != "" {
		i := strings.Index(msg, parts[0])
		if i < 0 || !prefixOK(msg[:i]) {
			return nil, 0, false
		}
		pos, lit = i+len(parts[0]), len(parts[0])
	}
	for k := start; k < len(parts); k++ {
		p := parts[k]
		if p == "" {
			continue
		}
		if i := strings.Index(msg[pos:], p); i >= 0 {
			values = append(values, msg[pos:pos+i])
			pos += i + len(p)
			lit += len(p)
			continue
		}
		// The message must end inside p.
		for j := pos; j <= len(msg)-8; j++ {
			i := strings.IndexByte(msg[j:len(msg)-7], p[0])
			if i < 0 {
				break
			}
			j += i
			if strings.HasPrefix(p, msg[j:]) {
				values = append(values, msg[pos:j])
				lit += len(msg) - j
				return values, lit, lit >= MinTruncatedLiteral
			}
		}
		return nil, 0, false
	}
	return nil, 0, false // matched whole or with a tail: not a truncation
}

// prefixOK reports whether p is made only of what may precede a message:
// "[...] " groups, "Caused by: ", exception class names followed by ": ",
// "Encountered ... fault: ".
func prefixOK(p string) bool {
	for p != "" {
		switch {
		case p[0] == ' ' || p[0] == '\t':
			p = p[1:]
		case p[0] == '[':
			j := strings.IndexByte(p, ']')
			if j < 0 {
				return false
			}
			p = p[j+1:]
		case strings.HasPrefix(p, "Caused by: "):
			p = p[len("Caused by: "):]
		case strings.HasPrefix(p, "Exception in thread \""):
			// the JVM's uncaught exception handler: Exception in thread "main" x.Y: msg
			j := strings.Index(p[len("Exception in thread \""):], "\" ")
			if j < 0 {
				return false
			}
			p = p[len("Exception in thread \"")+j+2:]
		case strings.HasPrefix(p, "Error: "):
			// the java launcher's "Error: Could not find or load main class x"
			p = p[len("Error: "):]
		case strings.HasPrefix(p, "INFO: "):
			p = p[len("INFO: "):]
		case strings.Contains(p, "VM warning: "):
			// "OpenJDK 64-Bit Server VM warning: os::commit_memory(...) failed"
			j := strings.Index(p, "VM warning: ")
			if !strings.HasPrefix(p, "OpenJDK") && !strings.HasPrefix(p, "Java HotSpot") && !strings.HasPrefix(p, "Eclipse OpenJ9") {
				return false
			}
			p = p[j+len("VM warning: "):]
		case strings.HasPrefix(p, "==> "):
			// Bitnami's liblog: "kafka 10:00:00.00 ERROR ==> message"
			p = p[len("==> "):]
		case strings.HasPrefix(p, "Encountered "):
			j := strings.Index(p, "fault: ")
			if j < 0 || j > 40 {
				return false
			}
			p = p[j+len("fault: "):]
		default:
			// a class name, then ": "
			j := 0
			for j < len(p) && (isWordByte(p[j]) || p[j] == '.' || p[j] == '$') {
				j++
			}
			if j == 0 || !strings.HasPrefix(p[j:], ": ") || !strings.Contains(p[:j], ".") {
				return false
			}
			p = p[j+2:]
		}
	}
	return true
}

// Lookup returns the template with id, or nil.
func (c *Catalog) Lookup(id string) *Template {
	i := sort.Search(len(c.Templates), func(i int) bool { return c.Templates[i].ID >= id })
	if i < len(c.Templates) && c.Templates[i].ID == id {
		return c.Templates[i]
	}
	for _, t := range c.Templates {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// splitText splits a template's text at its placeholders. A message of
// several lines is matched on its first line: a log shows the rest as lines
// of their own.
func splitText(text string) []string {
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	return strings.Split(text, Placeholder)
}
