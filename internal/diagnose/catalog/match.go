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
	// Cause says where Class came from: "os: <text>" or "template".
	Cause string
}

// MinLiteral is the least number of literal bytes a template needs to be
// matched on its own; shorter ones ("Error: {}") say nothing by themselves.
const MinLiteral = 8

// index finds candidate templates by one rare word (an anchor) of their
// literal text, so a message costs one map lookup per word plus a check of
// the few templates sharing its words.
type index struct {
	byWord    map[string][]int32
	templates []*Template
	unindexed int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

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
	ix := &index{byWord: map[string][]int32{}, templates: ts}
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
		best := ws[0]
		for _, w := range ws[1:] {
			if freq[w] < freq[best] || freq[w] == freq[best] && len(w) > len(best) {
				best = w
			}
		}
		ix.byWord[best] = append(ix.byWord[best], int32(i))
	}
	return ix
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
	msg := strings.TrimRight(message, " \t\r\n")
	var (
		best       *Template
		bestValues []string
		bestScore  int
		tried      [16]int32
		nTried     int
		triedMore  map[int32]bool
	)
	words(msg, func(w string) {
		for _, ti := range c.index.byWord[w] {
			dup := false
			for _, x := range tried[:nTried] {
				if x == ti {
					dup = true
					break
				}
			}
			if !dup && triedMore != nil && triedMore[ti] {
				dup = true
			}
			if dup {
				continue
			}
			if nTried < len(tried) {
				tried[nTried] = ti
				nTried++
			} else {
				if triedMore == nil {
					triedMore = map[int32]bool{}
				}
				triedMore[ti] = true
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
	if best == nil {
		return Match{}, false
	}
	m := Match{Template: best, Values: bestValues, Class: best.Class, Cause: "template"}
	if cls, text := OSCause(msg); cls != "" {
		m.Class, m.Cause = cls, "os: "+text
	} else if cls := refine(best, bestValues); cls != "" {
		m.Class = cls
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
	if t.Exception != "" && strings.Contains(msg, t.Exception+":") {
		s += 32
	}
	if t.Fatal {
		s += 16
	}
	return s + min(len(t.Versions), 15)
}

// matchParts matches msg against a template's literal parts (values in
// between). A template that starts with a literal may be preceded by what
// Kafka and Java put in front of a message: log identifiers "[X id=1] ",
// exception class names "pkg.X: ", "Caused by: ", a fault handler's
// "Encountered fatal fault: ".
func matchParts(parts []string, msg string) ([]string, bool) {
	values := make([]string, 0, len(parts)-1)
	if parts[0] == "" {
		return matchFrom(parts, 1, msg, 0, 0, values)
	}
	p0 := parts[0]
	for from := 0; from <= len(msg)-len(p0); {
		i := strings.Index(msg[from:], p0)
		if i < 0 {
			return nil, false
		}
		i += from
		if prefixOK(msg[:i]) {
			if v, ok := matchFrom(parts, 1, msg, i+len(p0), -1, values); ok {
				return v, true
			}
		}
		from = i + 1
	}
	return nil, false
}

// matchFrom matches parts[k:] at msg[pos:]; the value before parts[k] starts
// at valueStart (-1 when parts[k-1] ended exactly at pos and a value starts
// there).
func matchFrom(parts []string, k int, msg string, pos, valueStart int, values []string) ([]string, bool) {
	if valueStart < 0 {
		valueStart = pos
	}
	if k == len(parts) {
		return values, pos == len(msg)
	}
	p := parts[k]
	if k == len(parts)-1 {
		// The last literal ends the message.
		if p == "" {
			return append(values, msg[valueStart:]), true
		}
		if len(msg)-len(p) >= pos && strings.HasSuffix(msg, p) {
			return append(values, msg[valueStart:len(msg)-len(p)]), true
		}
		return nil, false
	}
	if p == "" {
		// Two placeholders in a row cannot be told apart; the builder
		// merges them, so this is only a defensive path.
		return matchFrom(parts, k+1, msg, pos, valueStart, values)
	}
	for from, tries := pos, 0; from <= len(msg)-len(p) && tries < 8; tries++ {
		i := strings.Index(msg[from:], p)
		if i < 0 {
			return nil, false
		}
		i += from
		if v, ok := matchFrom(parts, k+1, msg, i+len(p), -1, append(values, msg[valueStart:i])); ok {
			return v, true
		}
		from = i + 1
	}
	return nil, false
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

// splitText splits a template's text at its placeholders.
func splitText(text string) []string { return strings.Split(text, Placeholder) }
