// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

// This file measures the catalogue alone on crash logs: for each log, which
// failure class do the catalogue's templates and their origin mapping give,
// with no hand-written pattern? It is a rough reading (the structural crash
// reader in internal/diagnose is the real one): every ERROR/FATAL message and
// every exception line is matched; the class is taken from, in order, the
// last operating-system cause, the deepest matched cause of the last
// exception chain, the last fatal template, the last matched line.

var (
	// [2024-01-02 03:04:05,678] ERROR message (logger)
	kafkaLine = regexp.MustCompile(`^\[[^\]]*\d\] (FATAL|ERROR|WARN|INFO|DEBUG|TRACE) (.*?)(?: \([\w.$]+\))?$`)
	// other layouts: "... ERROR [...] message", "ERROR: message"
	levelWord = regexp.MustCompile(`\b(FATAL|ERROR)\b:?\s+(.*)$`)
	excLine   = regexp.MustCompile(`^\s*(?:Caused by: )?((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable|Fault)[\w$]*)(?::\s?(.*))?$`)
	framing   = []*regexp.Regexp{
		regexp.MustCompile(`^[\w.-]+\s+\| `),
		regexp.MustCompile(`^\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) `),
		regexp.MustCompile(`^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.-]+(?:\[\d+\])?: `),
		regexp.MustCompile(`^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+(?:\[\d+\])?: `),
	}
	jvmLine    = regexp.MustCompile(`^(?:#\s*|Error: |Exception in thread "[^"]*" )`)
	loggerTail = regexp.MustCompile(` \([\w.$]+\)(?: \[[^\]]*\])?$`)
	frameLine  = regexp.MustCompile(`^\s*at ((?:[\w$]+\.)+[\w$]+)\.[\w$<>]+\(`)
)

// logEvent is one line the measure looks at.
type logEvent struct {
	n       int
	text    string // message as handed to Match
	chain   int    // exception chain number (-1: a log message)
	isCause bool
	match   catalog.Match
	ok      bool
}

// assessment is what the catalogue alone says about a log.
type assessment struct {
	Class     string
	Line      string
	ID        string
	Matched   int // lines with a match (templates, OS texts, ClassFor)
	Templates int // lines matched by a template
}

func assess(c *catalog.Catalog, r io.Reader, withClassFor bool) assessment {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	var evs []logEvent
	chain := 0
	inChain := false
	for n, line := range lines {
		// Framing: Docker Compose's "service  | " column, kubectl's
		// --timestamps, a syslog/journald prefix.
		for _, re := range framing {
			if m := re.FindStringIndex(line); m != nil {
				line = line[m[1]:]
			}
		}
		var msg string
		lines[n] = line
		ev := logEvent{n: n, chain: -1}
		if m := excLine.FindStringSubmatch(line); m != nil {
			if !strings.HasPrefix(strings.TrimSpace(line), "Caused by:") || !inChain {
				if !strings.HasPrefix(strings.TrimSpace(line), "Caused by:") {
					chain++
				}
			}
			inChain = true
			ev.chain = chain
			ev.isCause = strings.Contains(line, "Caused by:")
			msg = strings.TrimSpace(line)
			msg = strings.TrimPrefix(msg, "Caused by: ")
		} else if m := kafkaLine.FindStringSubmatch(line); m != nil {
			inChain = false
			if m[1] != "FATAL" && m[1] != "ERROR" {
				continue
			}
			msg = m[2]
		} else if m := levelWord.FindStringSubmatch(line); m != nil {
			inChain = false
			// "... (logger)" and Strimzi's "... (logger) [thread]" after the message
			msg = loggerTail.ReplaceAllString(m[2], "")
		} else if jvmLine.MatchString(line) || strings.Contains(line, "OutOfMemoryError") {
			msg = strings.TrimSpace(strings.TrimLeft(line, "# "))
		} else {
			if !strings.HasPrefix(strings.TrimSpace(line), "at ") && !strings.HasPrefix(strings.TrimSpace(line), "...") {
				inChain = false
			}
			// A start script's or tool's own line: try it as is.
			msg = strings.TrimSpace(line)
			if len(msg) < 12 {
				continue
			}
		}
		ev.text = msg
		ev.match, ev.ok = c.Match(msg)
		if !ev.ok && ev.chain >= 0 && withClassFor {
			// An exception no template matched: the origin mapping on its
			// class and its top Kafka frame (ClassFor), counted apart.
			if cls := c.ClassFor(excLine.FindStringSubmatch(line)[1], topFrame(lines, n)); cls != "" {
				ev.match = catalog.Match{Template: &catalog.Template{ID: "classfor", Text: msg}, Class: cls, Cause: "classfor"}
				ev.ok = true
			}
		}
		if !ev.ok {
			// An operating-system text of the catalogue's hand list inside a
			// message no template matched.
			if cls, text := catalog.OSCause(msg); cls != "" {
				ev.match = catalog.Match{Template: &catalog.Template{ID: "os", Text: text}, Class: cls, Cause: "os: " + text}
				ev.ok = true
			}
		}
		if ev.ok {
			evs = append(evs, ev)
		}
	}
	a := assessment{Matched: len(evs)}
	for _, ev := range evs {
		if ev.match.Template != nil && ev.match.Template.ID != "os" && ev.match.Template.ID != "classfor" {
			a.Templates++
		}
	}
	pick := func(ev logEvent) assessment {
		a.Class, a.Line, a.ID = ev.match.Class, ev.text, ev.match.Template.ID
		return a
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if strings.HasPrefix(evs[i].match.Cause, "os:") {
			return pick(evs[i])
		}
	}
	lastChain := -1
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].chain >= 0 && evs[i].match.Class != "" {
			lastChain = evs[i].chain
			break
		}
	}
	if lastChain >= 0 {
		// The deepest cause of that chain with a class.
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].chain == lastChain && evs[i].match.Class != "" {
				return pick(evs[i])
			}
		}
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].match.Template.Fatal && evs[i].match.Class != "" {
			return pick(evs[i])
		}
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].match.Class != "" {
			return pick(evs[i])
		}
	}
	return a
}

// topFrame returns the class of the first Kafka or ZooKeeper frame of the
// stack trace after line n (or the first frame), "" when there is none.
func topFrame(lines []string, n int) string {
	first := ""
	for _, l := range lines[n+1 : min(len(lines), n+40)] {
		m := frameLine.FindStringSubmatch(l)
		if m == nil {
			if first != "" || !strings.Contains(l, "at ") {
				break
			}
			continue
		}
		cls := m[1]
		if first == "" {
			first = cls
		}
		if strings.HasPrefix(cls, "kafka.") || strings.HasPrefix(cls, "org.apache.kafka.") || strings.HasPrefix(cls, "org.apache.zookeeper.") {
			return cls
		}
	}
	return first
}

// measureResult counts logs recognised by the catalogue alone: by templates
// (and the operating-system texts), and with ClassFor on exceptions no
// template matched.
type measureResult struct {
	Logs, Matched, Right int
	AnyTemplate          int // logs with at least one ERROR/FATAL/exception line matched by a template
	RightWithClassFor    int
	Rows                 []string
}

// measure reads dir/INDEX.tsv (file, ..., failure_class column) and assesses
// every log in it.
func measure(c *catalog.Catalog, dir string) (measureResult, error) {
	var res measureResult
	idx, err := os.ReadFile(filepath.Join(dir, "INDEX.tsv"))
	if err != nil {
		return res, fmt.Errorf("measure: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(idx)), "\n")
	head := strings.Split(lines[0], "\t")
	col := -1
	for i, h := range head {
		if h == "failure_class" {
			col = i
		}
	}
	// Without a failure_class column the logs are benign: the right class
	// is none.
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) <= col || len(f) < 2 {
			continue
		}
		file, want := f[0], ""
		if col >= 0 {
			want = f[col]
		}
		fh, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			return res, fmt.Errorf("measure: %w", err)
		}
		a := assess(c, fh, false)
		if _, err := fh.Seek(0, io.SeekStart); err != nil {
			fh.Close()
			return res, err
		}
		b := assess(c, fh, true)
		fh.Close()
		if b.Class == want {
			res.RightWithClassFor++
		}
		res.Logs++
		if a.Templates > 0 {
			res.AnyTemplate++
		}
		mark := "  "
		if a.Class != "" {
			res.Matched++
		}
		if a.Class == want {
			res.Right++
			mark = "ok"
		}
		res.Rows = append(res.Rows, fmt.Sprintf("%s %-70s want %-34s got %-34s %s", mark, file, want, a.Class, trunc(a.Line, 120)))
	}
	sort.Strings(res.Rows)
	return res, nil
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
