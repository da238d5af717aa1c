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
	jvmLine   = regexp.MustCompile(`^(?:#\s*|Error: |Exception in thread "[^"]*" )`)
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
	Class   string
	Line    string
	ID      string
	Matched int // lines matched by some template
}

func assess(c *catalog.Catalog, r io.Reader) assessment {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var evs []logEvent
	chain := 0
	inChain := false
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		var msg string
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
			msg = m[2]
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
		if ev.ok {
			evs = append(evs, ev)
		}
	}
	a := assessment{Matched: len(evs)}
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

// measureResult counts logs recognised by the catalogue alone.
type measureResult struct {
	Logs, Matched, Right int
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
	if col < 0 {
		return res, fmt.Errorf("measure: %s/INDEX.tsv has no failure_class column", dir)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) <= col {
			continue
		}
		file, want := f[0], f[col]
		fh, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			return res, fmt.Errorf("measure: %w", err)
		}
		a := assess(c, fh)
		fh.Close()
		res.Logs++
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
