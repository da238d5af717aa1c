// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Log framings. People paste logs the way their tools show them: a k9s
// box around every line, `kubectl logs --prefix` or `--timestamps`, the
// container runtime's own log file format (CRI), Docker Compose's
// `service  | ` column, the systemd journal's or syslog's prefix, or one JSON
// object per line (Docker's json-file driver, structured logging). The
// normalizer takes such framing off so that every rule sees the line Kafka
// wrote, and joins lines the framing split (CRI partial lines, lines
// wrapped at a k9s box's width).
//
// It costs nothing on an unframed log: normalizedReader looks at the
// first sniffBytes and, when no line there is framed, returns the input as
// it was (the chunked fast path then reads it directly).

const (
	// sniffBytes is how much of a log is looked at to decide whether it is framed.
	sniffBytes = 64 << 10
	// maxJSONLine is the longest JSON line decoded; a longer one is read
	// as plain text (cut like any long line). It bounds the normalizer's memory.
	maxJSONLine = 1 << 20
	// maxJoined bounds a line joined from CRI partial lines or box wraps.
	maxJoined = 4 * MaxLineBytes
)

var (
	// criPrefix is the CRI log file format: RFC 3339 time, stream, tag (F
	// full, P partial), e.g. "2025-04-28T08:22:01.792345678Z stdout F ".
	criPrefix = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) (?:stdout|stderr) ([FP]) `)
	// rfc3339Prefix is `kubectl logs --timestamps` (and `docker logs -t`).
	rfc3339Prefix = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) `)
	// kubectlPrefix is `kubectl logs --prefix`: "[pod/NAME/CONTAINER] ".
	kubectlPrefix = regexp.MustCompile(`^\[pod/[^/\] ]+/[^\] ]+\] `)
	// composePrefix is Docker Compose's service column: "kafka-1  | ",
	// "kafka_1 | " (v1), or "kafka-1  |" before an empty line.
	composePrefix = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*\s*\|(?: |$)`)
	// journalPrefix is journalctl's short format and syslog's
	// ("Nov 19 04:07:11 host unit[123]: "), and short-iso.
	journalPrefix = regexp.MustCompile(`^(?:[A-Z][a-z]{2} [ \d]?\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) [^\s:]+ [^\s:\[]+(?:\[\d+\])?: `)
	// ansiEscape is a terminal colour sequence (Compose colours its column).
	ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
)

// boxBorders are the vertical bars TUIs (k9s, Lens) draw around log lines.
var boxBorders = []string{"│", "┃", "║"}

// framed reports whether a line carries one of the framings.
func framed(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	for _, b := range boxBorders {
		if bytes.HasPrefix(line, []byte(b)) || bytes.HasSuffix(bytes.TrimRight(line, " \r"), []byte(b)) {
			return true
		}
	}
	if line[0] == '{' && bytes.HasSuffix(bytes.TrimRight(line, " \r"), []byte("}")) {
		return true
	}
	return criPrefix.Match(line) || rfc3339Prefix.Match(line) || kubectlPrefix.Match(line) ||
		composePrefix.Match(line) || journalPrefix.Match(line) || bytes.Contains(line, []byte("\x1b["))
}

// normalizedReader returns a reader of r's lines without their framing, or
// r itself (as a *bufio.Reader when it was one) when the start of the log
// is not framed.
func normalizedReader(r io.Reader) io.Reader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < readBufferBytes {
		br = bufio.NewReaderSize(r, readBufferBytes)
	}
	head, _ := br.Peek(min(sniffBytes, br.Size()))
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if framed(line) {
			return &normalizer{r: br}
		}
	}
	if !ok && br.Buffered() == 0 {
		return r // empty or failing: nothing was consumed
	}
	return br
}

// normalizer is an io.Reader of a framed log's lines without the framing.
// Its memory is bounded: lines are read in maxJSONLine at most, the rest of
// a longer line is skipped, and joined lines stop growing at maxJoined.
type normalizer struct {
	r    *bufio.Reader
	line []byte // the raw line being read
	out  []byte // normalized text; out[off:] is not yet returned
	off  int
	// pending is the start of a line split by the framing (a CRI partial
	// line, a line wrapped at a box's width).
	pending []byte
	// boxWidth is the widest box line seen (runes between the borders):
	// a TUI pads every line to it, so a line that fills it was wrapped.
	boxWidth int
	// boxMaybe is set when pending ends a full box line whose last
	// character is a space: a wrap, or a shorter line's one space of
	// padding. The next line decides (see continuesWrap).
	boxMaybe bool
	err      error
}

// Read implements io.Reader.
func (n *normalizer) Read(p []byte) (int, error) {
	for len(n.out) == n.off {
		if n.err != nil {
			if len(n.pending) > 0 {
				n.out = append(append(n.out, n.pending...), '\n')
				n.pending = n.pending[:0]
				continue
			}
			return 0, n.err
		}
		n.readLine()
	}
	c := copy(p, n.out[n.off:])
	n.off += c
	if n.off == len(n.out) {
		n.out, n.off = n.out[:0], 0 // all read: reuse the storage
	}
	return c, nil
}

// readLine reads one raw line and appends its normalized form to out.
func (n *normalizer) readLine() {
	n.line = n.line[:0]
	for {
		chunk, err := n.r.ReadSlice('\n')
		if room := maxJSONLine - len(n.line); room > 0 {
			n.line = append(n.line, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			n.err = err
		}
		break
	}
	if len(n.line) == 0 {
		return
	}
	line := bytes.TrimSuffix(bytes.TrimSuffix(n.line, []byte{'\n'}), []byte{'\r'})
	n.emit(line)
}

// emit strips the framing of one line and appends the result to out.
func (n *normalizer) emit(line []byte) {
	if bytes.Contains(line, []byte("\x1b[")) {
		line = ansiEscape.ReplaceAll(line, nil)
	}
	partial := false
	// Framings stack (Compose around journald, timestamps around a
	// prefix); a few rounds take them all off.
	for range 4 {
		before := len(line)
		// Cheap byte tests first: the regular expressions run only on
		// lines that can start with their framing.
		if maybeISOTime(line) {
			if m := criPrefix.FindSubmatchIndex(line); m != nil {
				partial = line[m[2]] == 'P'
				line = line[m[1]:]
			} else if m := rfc3339Prefix.FindIndex(line); m != nil {
				line = line[m[1]:]
			}
		}
		if bytes.HasPrefix(line, []byte("[pod/")) {
			if m := kubectlPrefix.FindIndex(line); m != nil {
				line = line[m[1]:]
			}
		}
		if i := bytes.IndexByte(line[:min(len(line), 80)], '|'); i > 0 {
			if m := composePrefix.FindIndex(line); m != nil {
				line = line[m[1]:]
			}
		}
		if maybeISOTime(line) || (len(line) > 16 && line[3] == ' ' && line[0] >= 'A' && line[0] <= 'Z') {
			if m := journalPrefix.FindIndex(line); m != nil {
				line = bytes.ReplaceAll(line[m[1]:], []byte("#011"), []byte("\t"))
			}
		}
		if box, ok := stripBox(line); ok {
			line = n.boxLine(box)
			partial = partial || n.boxMaybe || box.full(n.boxWidth)
		}
		if len(line) > 0 && line[0] == '{' {
			if text, ok := jsonLogText(line); ok {
				n.appendText(text, partial)
				return
			}
		}
		if len(line) == before {
			break
		}
	}
	n.appendText(string(line), partial)
}

// maybeISOTime reports whether line may start with an RFC 3339 time
// ("2025-04-28T...").
func maybeISOTime(line []byte) bool {
	return len(line) > 20 && line[4] == '-' && line[10] == 'T' && line[0] >= '0' && line[0] <= '9'
}

// boxLine decides what to do with a box line's text: it continues a
// possibly wrapped line before it or starts a new one. It returns the text
// to append.
func (n *normalizer) boxLine(box boxText) []byte {
	n.boxWidth = max(n.boxWidth, box.width)
	text := bytes.TrimRight(box.inner, " ")
	if n.boxMaybe {
		n.boxMaybe = false
		if continuesWrap(text) {
			n.pending = append(n.pending, ' ')
		} else {
			n.flushPending()
		}
	}
	if box.full(n.boxWidth) && len(text) < len(box.inner) {
		n.boxMaybe = true
	}
	return text
}

// continuesWrap reports whether a box line's text reads like the rest of
// a wrapped line rather than a line of its own: it does not start with
// white space, a timestamp or bracket, a stack frame or a cause.
func continuesWrap(text []byte) bool {
	if len(text) == 0 || text[0] == ' ' || text[0] == '\t' || text[0] == '[' || (text[0] >= '0' && text[0] <= '9') {
		return false
	}
	for _, p := range []string{"at ", "Caused by", "...", "Exception", "java.", "org.", "kafka."} {
		if bytes.HasPrefix(text, []byte(p)) {
			return false
		}
	}
	return true
}

// appendText adds normalized text (possibly several lines) to out; a
// partial text is held back and joined to what follows.
func (n *normalizer) appendText(text string, partial bool) {
	for i, l := range strings.Split(text, "\n") {
		if i > 0 {
			n.flushPending()
		}
		// Keep the head of an over-long line, as the scan would.
		room := max(0, maxJoined-len(n.pending))
		n.pending = append(n.pending, l[:min(len(l), room)]...)
	}
	if !partial {
		n.flushPending()
	}
}

func (n *normalizer) flushPending() {
	n.out = append(append(n.out, n.pending...), '\n')
	n.pending = n.pending[:0]
}

// boxText is what lies between a TUI's vertical borders.
type boxText struct {
	inner []byte // the text, with trailing padding
	width int    // its width in runes (padding included)
	right bool   // a right border was there
}

// full reports whether the text fills a box of the given width, so the
// TUI may have wrapped the line there: surely when it ends in a printing
// character, maybe when it ends in a space (boxMaybe).
func (b boxText) full(width int) bool {
	return b.right && b.width > 0 && b.width >= width
}

// stripBox takes off a TUI's vertical borders ("│ text   │"); ok is false
// when the line has none.
func stripBox(line []byte) (boxText, bool) {
	found := false
	for _, b := range boxBorders {
		if rest, ok := bytes.CutPrefix(line, []byte(b)); ok {
			line, found = bytes.TrimPrefix(rest, []byte(" ")), true
			break
		}
	}
	right := false
	trimmed := bytes.TrimRight(line, " \r")
	for _, b := range boxBorders {
		if rest, ok := bytes.CutSuffix(trimmed, []byte(b)); ok {
			found, right = true, true
			// One space of margin before the border belongs to the frame.
			line = bytes.TrimSuffix(rest, []byte(" "))
			break
		}
	}
	if !found {
		return boxText{}, false
	}
	return boxText{inner: line, width: utf8.RuneCount(line), right: right}, true
}

// jsonMessageKeys are the fields that hold the log line, in the order
// they are tried: Docker's json-file "log", then common structured-logging names.
var jsonMessageKeys = []string{"log", "message", "msg", "@message", "MESSAGE"}

// jsonExceptionKeys hold a stack trace in structured logging (ECS
// error.stack_trace, logstash-logback stack_trace, log4j2 JsonLayout thrown).
var jsonExceptionKeys = []string{"error.stack_trace", "stack_trace", "exception", "stacktrace", "throwable"}

// jsonLogText returns the log text of a JSON log line: the message (one
// line, its own newlines kept escaped), with the level in front when there
// is one, and the stack trace after it.
func jsonLogText(line []byte) (string, bool) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return "", false
	}
	msg, ok := "", false
	for _, k := range jsonMessageKeys {
		if s, isString := obj[k].(string); isString {
			msg, ok = s, true
			break
		}
	}
	if !ok {
		return "", false
	}
	// A message is one record: newlines inside it (a client-chosen name
	// quoted in it, say) stay escaped, as the JSON had them, so that they
	// cannot forge records of their own. Only a structured stack trace
	// below is split back into lines.
	msg = strings.TrimRight(msg, "\r\n")
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "\r", `\r`), "\n", `\n`)
	if k := firstString(obj, "level", "log.level", "severity", "levelname"); k != "" && !strings.Contains(msg, strings.ToUpper(k)) {
		msg = strings.ToUpper(k) + " " + msg
	}
	for _, k := range jsonExceptionKeys {
		switch v := obj[k].(type) {
		case string:
			msg += "\n" + strings.TrimRight(v, "\r\n")
		case map[string]any:
			if s := firstString(v, "extendedStackTrace", "stackTrace"); s != "" {
				msg += "\n" + strings.TrimRight(s, "\r\n")
			} else if name := firstString(v, "name"); name != "" {
				msg += "\n" + name + ": " + firstString(v, "message")
			}
		}
	}
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	return msg, true
}

func firstString(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
