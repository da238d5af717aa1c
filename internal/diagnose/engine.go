// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Engine matches Snapshots against a compiled knowledge base. It is
// immutable after NewEngine and safe for concurrent use.
type Engine struct {
	rules    []*compiledRule
	patterns []*compiledPattern
	scanner  *literalScanner
	// filter picks the lines the scanner needs to see; nil when every
	// line needs it (patterns without a keyword).
	filter *lineFilter
	// byKeyword[k] lists the patterns that keyword k lets through.
	byKeyword [][]int32
	// always lists patterns without a usable keyword: they run on every line.
	always []int32
}

// part says what a pattern contributes to its rule.
type part uint8

const (
	partAll part = iota
	partAny
	partNone
	partDowngrade
	partStatusLog
	partRole
)

// compiledPattern is one regular expression of one rule (or of the role
// detector), with the literals that must occur for it to match.
type compiledPattern struct {
	re       *regexp.Regexp
	keywords []string
	rule     int // index into Engine.rules; -1 for role markers
	part     part
	slot     int // index within the part (All, Downgrades) or role marker kind
	captures bool
	// every makes the pattern run on every line that may hold it, not only
	// until its first match: the offset triage keeps the last occurrence
	// and the role detector sees every process.roles line.
	every bool
	// offsets marks the pattern of a metadata-offsets triage that captures
	// first, next and logstart together.
	offsets bool
	// target is the index of the capture group that holds the rule's
	// automated target (remedy.automated.targetFrom), -1 when none.
	target int
}

// patternGroup is one list of a rule's patterns and what it contributes.
type patternGroup struct {
	list []string
	part part
}

// compiledRule is a validated Rule with its compiled status conditions.
type compiledRule struct {
	Rule
	events []*regexp.Regexp
}

// hasLog reports whether the rule has All or Any log patterns.
func (r *compiledRule) hasLog() bool { return len(r.Match.All)+len(r.Match.Any) > 0 }

// NewEngine compiles the embedded rules plus extra ones. An extra rule
// whose id matches an embedded rule replaces it (a site knows its own
// clusters better than our defaults); two extra rules with the same id are
// an error.
func NewEngine(extra ...Rule) (*Engine, error) {
	builtin, err := BuiltinRules()
	if err != nil {
		return nil, err
	}
	return newEngine(builtin, extra)
}

var (
	defaultOnce   sync.Once
	defaultEngine *Engine
)

// Default returns the engine of the embedded rules. It panics only if the
// embedded rules.yaml is broken, which the package's tests rule out.
func Default() *Engine {
	defaultOnce.Do(func() {
		e, err := NewEngine()
		if err != nil {
			panic(fmt.Sprintf("diagnose: embedded rules are broken: %v", err))
		}
		defaultEngine = e
	})
	return defaultEngine
}

func newEngine(builtin, extra []Rule) (*Engine, error) {
	rules := slices.Clone(builtin)
	index := make(map[string]int, len(rules))
	for i, r := range rules {
		index[r.ID] = i
	}
	seenExtra := make(map[string]bool, len(extra))
	for _, r := range extra {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		if seenExtra[r.ID] {
			return nil, fmt.Errorf("rule %q is given twice", r.ID)
		}
		seenExtra[r.ID] = true
		if i, ok := index[r.ID]; ok {
			rules[i] = r
			continue
		}
		index[r.ID] = len(rules)
		rules = append(rules, r)
	}

	// The catalogue is read once per process, here rather than at the
	// first crash, so that a diagnosis never pays for it.
	kafkaCatalog()
	e := &Engine{}
	add := func(expr string, rule int, p part, slot int) error {
		re, err := regexp.Compile(expr)
		if err != nil {
			return fmt.Errorf("compiling %q: %w", expr, err)
		}
		cp := &compiledPattern{
			re: re, keywords: requiredLiterals(expr),
			rule: rule, part: p, slot: slot, captures: re.NumSubexp() > 0, target: -1,
		}
		if rule >= 0 && (p == partAll || p == partAny) {
			if auto := rules[rule].Remedy.Automated; auto != nil {
				// The line that names the repair must lie in the terminal
				// event's chain (see crash.go), and it may not be the first
				// occurrence: the patterns that name it are read on every
				// line that may hold them. That line is the target's (a rule
				// with targetFrom), the offsets' (the offsets triage), else
				// the last line any pattern of the rule matched; the other
				// patterns stop at their first match like any pattern.
				if auto.TargetFrom != "" {
					cp.target = re.SubexpIndex(auto.TargetFrom)
				}
				cp.every = rules[rule].Triage == "" && (auto.TargetFrom == "" || cp.target >= 0)
			}
		}
		if rule >= 0 && rules[rule].Triage == TriageMetadataOffsets && capturesOffsets(re) {
			cp.offsets, cp.every = true, true
		}
		if rule < 0 && slot == markProcessRoles {
			cp.every = true
		}
		e.patterns = append(e.patterns, cp)
		return nil
	}
	for ri, r := range rules {
		cr := &compiledRule{Rule: r}
		groups := []patternGroup{{r.Match.All, partAll}, {r.Match.Any, partAny}, {r.Match.None, partNone}}
		if r.Status != nil {
			groups = append(groups, patternGroup{r.Status.Log, partStatusLog})
			for _, ev := range r.Status.Events {
				re, err := regexp.Compile(ev)
				if err != nil {
					return nil, fmt.Errorf("rule %q: status.events: %w", r.ID, err)
				}
				cr.events = append(cr.events, re)
			}
		}
		for _, g := range groups {
			for slot, expr := range g.list {
				if err := add(expr, ri, g.part, slot); err != nil {
					return nil, fmt.Errorf("rule %q: %w", r.ID, err)
				}
			}
		}
		for slot, d := range r.Downgrades {
			for _, expr := range d.When {
				if err := add(expr, ri, partDowngrade, slot); err != nil {
					return nil, fmt.Errorf("rule %q: %w", r.ID, err)
				}
			}
		}
		e.rules = append(e.rules, cr)
	}
	for kind, expr := range roleMarkerPatterns {
		if err := add(expr, -1, partRole, kind); err != nil {
			return nil, err
		}
	}

	var keywords []string
	for pi, p := range e.patterns {
		if len(p.keywords) == 0 {
			e.always = append(e.always, int32(pi))
			continue
		}
		for _, k := range p.keywords {
			keywords = append(keywords, k)
			e.byKeyword = append(e.byKeyword, []int32{int32(pi)})
		}
	}
	e.scanner = newLiteralScanner(keywords)
	if len(e.always) == 0 {
		e.filter = newLineFilter(keywords)
	}
	return e, nil
}

// offsetGroups are the capture groups a metadata-offsets triage reads,
// all from one match.
var offsetGroups = [3]string{"first", "next", "logstart"}

// capturesOffsets reports whether re captures every offset group.
func capturesOffsets(re *regexp.Regexp) bool {
	for _, g := range offsetGroups {
		if re.SubexpIndex(g) < 0 {
			return false
		}
	}
	return true
}

// Rules returns the engine's rules (embedded ones, with site overrides
// applied, then site additions).
func (e *Engine) Rules() []Rule {
	out := make([]Rule, len(e.rules))
	for i, r := range e.rules {
		out[i] = r.Rule
	}
	return out
}

// Diagnose returns the findings for s, best first. It reads s.Log.
func (e *Engine) Diagnose(s Snapshot) []Finding {
	// A strings.Reader never fails, so neither does DiagnoseReader here.
	findings, _ := e.DiagnoseReader(strings.NewReader(s.Log), s)
	return findings
}

// DiagnoseReader reads a log from r line by line (s.Log is ignored) and
// returns the findings for it and s's pod status, best first: higher
// severity, then higher confidence, then more specific evidence. Memory
// stays bounded whatever the input: lines are cut at MaxLineBytes and
// each rule keeps at most MaxEvidenceLines lines. Its only error is r's.
func (e *Engine) DiagnoseReader(r io.Reader, s Snapshot) ([]Finding, error) {
	sc := newScan(e)
	if err := sc.run(normalizedReader(r)); err != nil {
		return nil, fmt.Errorf("reading log: %w", err)
	}
	return sc.findings(&s), nil
}

// run reads the whole log: in chunks when the engine has a line filter,
// else line by line. Both paths reach the same state.
func (sc *scan) run(r io.Reader) error {
	if longLine := longLineBytes(r); sc.e.filter != nil && longLine <= maxLongLine {
		return sc.runChunks(r, longLine, chunkBufferBytes(longLine), min(runtime.GOMAXPROCS(0), maxWorkers))
	}
	return sc.runLines(r, readBufferBytes)
}
