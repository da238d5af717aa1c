// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// DataDir is where recordings live, relative to the repository root.
const DataDir = "internal/diagnose/testdata/faultlab"

// ManifestName is the manifest's file name in each version's directory
// of DataDir (one per version, so two releases can record at once).
const ManifestName = "manifest.json"

// Cut is a run of original lines left out of a recording (1-based, both
// ends included).
type Cut struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Entry is one recording: what was done, on which release, what Kafka
// printed and what class the fault belongs to.
type Entry struct {
	Version string `json:"version"`
	Recipe  string `json:"recipe"`
	// Class is the injected fault's failure class (from the recipe).
	Class string `json:"class"`
	// Role is the recorded node's role as a pod label would give it.
	Role  string `json:"role"`
	Fault string `json:"fault"`
	// Log is the recording's path relative to DataDir (version/recipe.log).
	Log   string   `json:"log"`
	Steps []string `json:"steps"`
	// ExitCode is the recorded process's exit status (137 when the lab
	// killed it with SIGKILL).
	ExitCode     int  `json:"exitCode"`
	StoppedByLab bool `json:"stoppedByLab"`
	// Expect is the recipe's pattern for the fault's own message and
	// ExpectLine the first line that matched it.
	Expect     string `json:"expect"`
	ExpectLine string `json:"expectLine"`
	// TerminalLine is the last ERROR/FATAL or JVM error line (else the last line).
	TerminalLine string `json:"terminalLine"`
	Recorded     string `json:"recorded"`
	Java         string `json:"java"`
	// Lines and Bytes are the size of what Kafka printed; Cuts the runs of
	// lines left out of the middle (never the end).
	Lines int   `json:"lines"`
	Bytes int   `json:"bytes"`
	Cuts  []Cut `json:"cuts,omitempty"`
}

// Manifest is the list of recordings, sorted by version then recipe.
type Manifest struct {
	Note    string  `json:"note"`
	Entries []Entry `json:"entries"`
}

// manifestNote heads the manifest.
const manifestNote = "Recorded by test/faultlab (FAULTLAB_RECORD=1 go test ./test/faultlab -run Live): real Apache Kafka processes given one fault each; see docs/FAULTLAB.md. class is the injected fault's class, not what the engine says."

// ReadManifest reads the manifest in dir (an empty one when absent).
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if os.IsNotExist(err) {
		return &Manifest{Note: manifestNote}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}

// ReadManifests reads every version's manifest under dir (DataDir) into one.
func ReadManifests(dir string) (*Manifest, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", ManifestName))
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	all := &Manifest{Note: manifestNote}
	for _, p := range paths {
		m, err := ReadManifest(filepath.Dir(p))
		if err != nil {
			return nil, err
		}
		all.Entries = append(all.Entries, m.Entries...)
	}
	sortEntries(all.Entries)
	return all, nil
}

// Put replaces or adds the entry for (version, recipe).
func (m *Manifest) Put(e Entry) {
	for i := range m.Entries {
		if m.Entries[i].Version == e.Version && m.Entries[i].Recipe == e.Recipe {
			m.Entries[i] = e
			return
		}
	}
	m.Entries = append(m.Entries, e)
}

// Write writes the manifest into dir, sorted.
func (m *Manifest) Write(dir string) error {
	m.Note = manifestNote
	sortEntries(m.Entries)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return nil
}

// sortEntries sorts by version, then recipe.
func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Version != b.Version {
			return versionLess(a.Version, b.Version)
		}
		return a.Recipe < b.Recipe
	})
}

// versionLess orders releases by their place in Versions (then by text).
func versionLess(a, b string) bool {
	ia, ib := indexOf(Versions, a), indexOf(Versions, b)
	if ia != ib {
		return ia < ib
	}
	return a < b
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return len(list)
}

// Trimming budget: a recording longer than maxUncut bytes keeps its first
// headLines lines, the fault's first message and the last line that says
// the process is dying, each with contextBefore lines before it and
// afterLines after it, and always its last tailLines lines. Outside the
// last lines, a stack trace keeps at most maxFrames frames in a row (its
// exception and "Caused by:" lines always stay). The rest of the middle is
// cut; the end is never cut.
const (
	maxUncut      = 8 << 10
	headLines     = 5
	contextBefore = 5
	afterLines    = 30
	tailLines     = 20
	maxFrames     = 6
)

// Trim cuts the middle of a long log (see the budget above) and returns
// the kept text and the cuts.
func Trim(log []byte, expect *regexp.Regexp) ([]byte, []Cut) {
	if len(log) <= maxUncut {
		return log, nil
	}
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	orig := make([]int, len(lines))
	for i := range orig {
		orig[i] = i + 1
	}
	return trimLines(lines, orig, len(lines), expect, strings.HasSuffix(string(log), "\n"))
}

// trimLines applies the budget to lines whose original line numbers are
// orig, in a log of total lines (lines may already be a trimmed log: the
// windows are counted in original line numbers, so trimming again with
// the same budget changes nothing).
func trimLines(lines []string, orig []int, total int, expect *regexp.Regexp, newline bool) ([]byte, []Cut) {
	keep := make([]bool, len(lines))
	window := func(from, to int) { // original line numbers, to excluded
		for i, n := range orig {
			if n >= from && n < to {
				keep[i] = true
			}
		}
	}
	window(1, headLines+1)
	for i, l := range lines {
		if expect != nil && expect.MatchString(l) {
			window(orig[i]-contextBefore, orig[i]+afterLines)
			break
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if terminalPattern.MatchString(lines[i]) {
			window(orig[i]-contextBefore, orig[i]+afterLines)
			break
		}
	}
	tailFrom := total - tailLines + 1
	windowed := slices.Clone(keep)
	frames := 0
	for i, l := range lines {
		contiguous := i > 0 && windowed[i-1] && orig[i-1] == orig[i]-1
		if !windowed[i] || !strings.HasPrefix(l, "\tat ") || !contiguous {
			frames = 0
			if windowed[i] && strings.HasPrefix(l, "\tat ") {
				frames = 1
			}
			continue
		}
		frames++
		if frames > maxFrames && orig[i] < tailFrom {
			keep[i] = false
		}
	}
	window(tailFrom, total+1)
	var b strings.Builder
	var cuts []Cut
	next := 1 // the next original line number expected
	for i, l := range lines {
		if !keep[i] {
			continue
		}
		if orig[i] > next {
			cuts = append(cuts, Cut{From: next, To: orig[i] - 1})
		}
		next = orig[i] + 1
		b.WriteString(l)
		b.WriteByte('\n')
	}
	out := b.String()
	if !newline {
		out = strings.TrimSuffix(out, "\n")
	}
	return []byte(out), cuts
}

// Retrim applies the current budget again to every recording of the
// manifest in vdir (a version's directory), using the cuts the manifest
// lists to number the kept lines, and rewrites the logs and the manifest.
func Retrim(vdir string) error {
	m, err := ReadManifest(vdir)
	if err != nil {
		return err
	}
	root := filepath.Dir(vdir)
	for i, e := range m.Entries {
		if e.Bytes <= maxUncut {
			continue
		}
		path := filepath.Join(root, e.Log)
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("retrim: %w", err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		var orig []int
		c := 0
		for n := 1; n <= e.Lines; n++ {
			for c < len(e.Cuts) && n > e.Cuts[c].To {
				c++
			}
			if c < len(e.Cuts) && n >= e.Cuts[c].From {
				continue
			}
			orig = append(orig, n)
		}
		if len(orig) != len(lines) {
			return fmt.Errorf("retrim %s: %d lines, the manifest's cuts leave %d", e.Log, len(lines), len(orig))
		}
		kept, cuts := trimLines(lines, orig, e.Lines, regexp.MustCompile(e.Expect), strings.HasSuffix(string(b), "\n"))
		if err := os.WriteFile(path, kept, 0o644); err != nil {
			return fmt.Errorf("retrim: %w", err)
		}
		m.Entries[i].Cuts = cuts
	}
	return m.Write(vdir)
}

// RefreshExpect replaces each entry's expected-message pattern in vdir's
// manifest by its recipe's current one (a recipe's pattern was made
// stricter) and finds the line it matches again; a recording that no
// longer shows the fault is an error (re-record it).
func RefreshExpect(vdir string) error {
	m, err := ReadManifest(vdir)
	if err != nil {
		return err
	}
	for i, e := range m.Entries {
		var r *Recipe
		for j := range Recipes {
			if Recipes[j].Name == e.Recipe {
				r = &Recipes[j]
			}
		}
		if r == nil || r.Expect == e.Expect {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(vdir), e.Log))
		if err != nil {
			return fmt.Errorf("refresh: %w", err)
		}
		re := regexp.MustCompile(r.Expect)
		line := ""
		for _, l := range strings.Split(string(b), "\n") {
			if re.MatchString(l) {
				line = l
				break
			}
		}
		if line == "" {
			return fmt.Errorf("refresh %s: no line matches %q", e.Log, r.Expect)
		}
		m.Entries[i].Expect, m.Entries[i].ExpectLine = r.Expect, line
	}
	return m.Write(vdir)
}

// terminalPattern matches the lines that say a process is dying: Kafka's
// ERROR and FATAL lines, and the JVM's and launcher's own error lines.
var terminalPattern = regexp.MustCompile(`^\[[^\]]*\] (ERROR|FATAL) |^Exception in thread |^Error: |^Error occurred|^Unrecognized VM option|^# There is insufficient memory|^Terminating due to java\.lang\.OutOfMemoryError`)

// TerminalLine is the last line of log that says the process is dying,
// else its last non-empty line.
func TerminalLine(log []byte) string {
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if terminalPattern.MatchString(lines[i]) {
			return lines[i]
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return lines[i]
		}
	}
	return ""
}

// countLines is the number of lines of log.
func countLines(log []byte) int {
	if len(log) == 0 {
		return 0
	}
	n := bytes.Count(log, []byte("\n"))
	if log[len(log)-1] != '\n' {
		n++
	}
	return n
}

// Record writes an outcome's (trimmed) log into dir/<version>/<recipe>.log
// and returns its manifest entry.
func Record(dir string, r Recipe, version, java, date string, out *Outcome) (Entry, error) {
	re := regexp.MustCompile(r.Expect)
	kept, cuts := Trim(out.Log, re)
	rel := filepath.Join(version, r.Name+".log")
	if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
		return Entry{}, fmt.Errorf("record: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), kept, 0o644); err != nil {
		return Entry{}, fmt.Errorf("record: %w", err)
	}
	return Entry{
		Version: version, Recipe: r.Name, Class: r.Class, Role: string(r.Role), Fault: r.Fault,
		Log: rel, Steps: out.Steps, ExitCode: out.ExitCode, StoppedByLab: out.StoppedByLab,
		Expect: r.Expect, ExpectLine: out.ExpectLine, TerminalLine: TerminalLine(out.Log),
		Recorded: date, Java: java, Lines: countLines(out.Log), Bytes: len(out.Log), Cuts: cuts,
	}, nil
}
