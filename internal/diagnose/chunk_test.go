// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkSetup is one way of running runChunks: the line reader size it
// replicates, the chunk storage and the number of workers.
type chunkSetup struct {
	longLine, bufBytes, workers int
}

func (c chunkSetup) String() string {
	return fmt.Sprintf("longLine=%d/buf=%d/workers=%d", c.longLine, c.bufBytes, c.workers)
}

// chunkSetups covers production sizes and tiny chunks, which put chunk
// boundaries (and long-line handling) all over small logs.
var chunkSetups = []chunkSetup{
	{readBufferBytes, chunkBufferBytes(readBufferBytes), 1},
	{readBufferBytes, chunkBufferBytes(readBufferBytes), 2},
	{MaxLineBytes + 1, MaxLineBytes + 3, 1},
	{MaxLineBytes + 1, MaxLineBytes + 3, 3},
	{5000, 9000, 2},
	{8192, 20000, 4},
}

// scanOutcome is everything a scan learned that findings depend on.
type scanOutcome struct {
	Rules    []ruleState
	Matched  []bool
	Role     roleMarks
	Tail     []string
	Lines    int
	Findings [2][]Finding // for an unknown role and for a broker
}

func outcomeOf(sc *scan) scanOutcome {
	return scanOutcome{
		Rules: sc.rules, Matched: sc.matched, Role: sc.role, Tail: sc.tail.lines(), Lines: sc.lineNo,
		Findings: [2][]Finding{sc.findings(&Snapshot{}), sc.findings(&Snapshot{Role: RoleBroker})},
	}
}

// referenceOutcome runs the line-by-line path on log.
func referenceOutcome(t *testing.T, e *Engine, log []byte, readerSize int) scanOutcome {
	t.Helper()
	sc := newScan(e)
	if err := sc.runLines(bytes.NewReader(log), readerSize); err != nil {
		t.Fatalf("runLines: %v", err)
	}
	return outcomeOf(sc)
}

// chunkedOutcome runs the chunked path on log, read through wrap.
func chunkedOutcome(t *testing.T, e *Engine, log []byte, setup chunkSetup, wrap func(io.Reader) io.Reader) scanOutcome {
	t.Helper()
	sc := newScan(e)
	if err := sc.runChunks(wrap(bytes.NewReader(log)), setup.longLine, setup.bufBytes, setup.workers); err != nil {
		t.Fatalf("runChunks(%v): %v", setup, err)
	}
	return outcomeOf(sc)
}

// assertChunksMatchLines checks that every chunk setup reaches the state of
// the line-by-line reference on log.
func assertChunksMatchLines(t *testing.T, e *Engine, log []byte, wraps map[string]func(io.Reader) io.Reader) {
	t.Helper()
	want := map[int]scanOutcome{}
	for _, setup := range chunkSetups {
		if _, ok := want[setup.longLine]; !ok {
			want[setup.longLine] = referenceOutcome(t, e, log, setup.longLine)
		}
		for name, wrap := range wraps {
			got := chunkedOutcome(t, e, log, setup, wrap)
			if !reflect.DeepEqual(got, want[setup.longLine]) {
				t.Fatalf("%v, %s reader: chunked scan differs from the line scan\n got: %s\nwant: %s",
					setup, name, describeOutcome(got), describeOutcome(want[setup.longLine]))
			}
		}
	}
}

func describeOutcome(o scanOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines, role %+v", o.Lines, o.Role)
	for i, st := range o.Rules {
		if st.specificity > 0 || st.lines > 0 {
			fmt.Fprintf(&b, "\n  rule %d: %+v", i, st)
		}
	}
	return b.String()
}

var plainReader = map[string]func(io.Reader) io.Reader{"plain": func(r io.Reader) io.Reader { return r }}

var allReaders = map[string]func(io.Reader) io.Reader{
	"plain": func(r io.Reader) io.Reader { return r },
	"half":  iotest.HalfReader,
	"one-byte, EOF with data": func(r io.Reader) io.Reader {
		return iotest.DataErrReader(iotest.OneByteReader(r))
	},
}

// testdataLogs returns every log under testdata/crashlogs and testdata/benign.
func testdataLogs(t *testing.T) map[string][]byte {
	t.Helper()
	logs := map[string][]byte{}
	for _, dir := range []string{"testdata/crashlogs", "testdata/benign"} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no logs in %s: %v", dir, err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			logs[p] = b
		}
	}
	return logs
}

// siteEngine has site rules with 4-byte keywords (the sampling stride
// drops to 1) and a minLines rule, next to the built-in ones.
func siteEngine(t *testing.T) *Engine {
	t.Helper()
	rules, err := LoadRulesFile(writeRules(t, `
rules:
- id: site-short-keywords
  title: Short keywords
  severity: medium
  confidence: 0.5
  risk: none
  explanation: Exercises the filter with 4-byte keywords.
  match:
    all:
    - 'abcd\d+(?P<tail>efgh)'
    any:
    - 'wxyz'
    - 'Kafka'
    minLines: 3
  downgrades:
  - when: ['qrst']
    severity: low
    confidence: 0.2
    note: softened
  remedy:
    label: none
    steps: [nothing]
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(rules...)
	if err != nil {
		t.Fatal(err)
	}
	if e.filter == nil || e.filter.stride != 1 {
		t.Fatalf("site engine: filter %+v, want stride 1", e.filter)
	}
	return e
}

func TestChunkedScanMatchesLineScanOnTestdata(t *testing.T) {
	engines := map[string]*Engine{"default": Default(), "site": siteEngine(t)}
	for path, log := range testdataLogs(t) {
		variants := map[string][]byte{
			"as is":            log,
			"CRLF":             bytes.ReplaceAll(log, []byte("\n"), []byte("\r\n")),
			"no final newline": bytes.TrimRight(log, "\n"),
			// Lines cut in two at every 37th byte: wrapped messages and
			// keywords across line ends.
			"wrapped": wrapEvery(log, 37),
		}
		for vname, v := range variants {
			for ename, e := range engines {
				t.Run(filepath.Base(path)+"/"+vname+"/"+ename, func(t *testing.T) {
					assertChunksMatchLines(t, e, v, allReaders)
				})
			}
		}
	}
}

// wrapEvery inserts a newline after every n bytes of each line.
func wrapEvery(log []byte, n int) []byte {
	var out []byte
	for line := range bytes.SplitSeq(log, []byte("\n")) {
		for len(line) > n {
			out = append(append(out, line[:n]...), '\n')
			line = line[n:]
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// randomLog builds a log from pieces that stress the line logic: lines of
// real crash logs, keywords split across lines, empty lines, CRs, lines
// around MaxLineBytes and longLine (with a CR where the cut falls),
// invalid UTF-8, and sometimes no final newline.
func randomLog(rng *rand.Rand, e *Engine, corpus [][]byte, longLine int) []byte {
	var keywords []string
	for _, p := range e.patterns {
		keywords = append(keywords, p.keywords...)
	}
	var b []byte
	for range rng.IntN(200) {
		switch rng.IntN(12) {
		case 0, 1, 2:
			b = append(b, corpus[rng.IntN(len(corpus))]...)
			b = append(b, '\n')
		case 3: // a real line cut in two anywhere
			line := corpus[rng.IntN(len(corpus))]
			cut := rng.IntN(len(line) + 1)
			b = append(append(append(b, line[:cut]...), '\n'), line[cut:]...)
			b = append(b, '\n')
		case 4: // a keyword, possibly across two or three lines
			k := keywords[rng.IntN(len(keywords))]
			b = append(b, "x "[rng.IntN(2):]...)
			for _, c := range []byte(k) {
				b = append(b, c)
				if rng.IntN(len(k)) == 0 {
					b = append(b, "\n\r\n\n"[rng.IntN(3):][:1+rng.IntN(2)]...)
				}
			}
		case 5:
			b = append(b, "\n\n\r\n\r"[rng.IntN(4):]...)
		case 6: // around MaxLineBytes, a keyword across the cut
			k := keywords[rng.IntN(len(keywords))]
			pad := MaxLineBytes - rng.IntN(len(k)+1)
			b = append(b, bytes.Repeat([]byte{'p'}, pad)...)
			b = append(b, k...)
			b = append(b, "\r\n\n"[rng.IntN(3):]...)
		case 7: // at least longLine long, a CR where the head is cut
			n := longLine + rng.IntN(3) - 1
			if rng.IntN(3) == 0 { // longer than the smaller chunks
				n = 3*longLine + rng.IntN(3)
			}
			line := bytes.Repeat([]byte{'L'}, n)
			line[MaxLineBytes-1] = '\r'
			if rng.IntN(2) == 0 {
				line[MaxLineBytes-2] = '\r'
			}
			copy(line, corpus[rng.IntN(len(corpus))])
			b = append(append(b, line...), "\r\n\n"[rng.IntN(2):]...)
		case 8:
			b = append(b, "\xff\xfe\xc3(\x00\n"[rng.IntN(5):]...)
		case 9: // process.roles and role markers
			b = append(b, []string{"process.roles = [broker]\n", "[BrokerServer id=1] x\n", "[KafkaServer id=3]\n", "KAFKA_CFG_PROCESS_ROLES=controller,broker\n"}[rng.IntN(4)]...)
		default:
			b = append(b, []string{"wxyz", "abcd12efgh", "qrst", "Kafka", "abcd"}[rng.IntN(5)]...)
			b = append(b, "\n \r\n"[rng.IntN(3):][:1]...)
		}
	}
	if rng.IntN(4) == 0 {
		b = bytes.TrimRight(b, "\n")
	}
	return b
}

// corpusLines returns the non-empty lines of the testdata logs.
func corpusLines(t *testing.T) [][]byte {
	var lines [][]byte
	for _, log := range testdataLogs(t) {
		for line := range bytes.SplitSeq(log, []byte("\n")) {
			if len(line) > 0 {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

func TestChunkedScanMatchesLineScanOnRandomLogs(t *testing.T) {
	corpus := corpusLines(t)
	engines := []*Engine{Default(), siteEngine(t)}
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 300
	if testing.Short() {
		runs = 30
	}
	for i := range runs {
		e := engines[i%len(engines)]
		setup := chunkSetups[rng.IntN(len(chunkSetups))]
		log := randomLog(rng, e, corpus, setup.longLine)
		want := referenceOutcome(t, e, log, setup.longLine)
		for name, wrap := range map[string]func(io.Reader) io.Reader{"plain": plainReader["plain"], "half": iotest.HalfReader} {
			if got := chunkedOutcome(t, e, log, setup, wrap); !reflect.DeepEqual(got, want) {
				path := filepath.Join(t.TempDir(), "log")
				_ = os.WriteFile(path, log, 0o600)
				t.Fatalf("run %d, %v, %s reader, log of %d bytes: chunked scan differs\n got: %s\nwant: %s",
					i, setup, name, len(log), describeOutcome(got), describeOutcome(want))
			}
		}
	}
}

// TestDiagnoseReaderMatchesLineScanForBufferedReaders checks the line
// reader size the chunked path replicates: a caller's *bufio.Reader of 1
// MiB (as benchreport and cmd/bot pass) makes runLines cut lines at 1 MiB.
func TestDiagnoseReaderMatchesLineScanForBufferedReaders(t *testing.T) {
	if Default().filter == nil {
		t.Fatal("the default engine has no line filter: every pattern should have a keyword")
	}
	for _, size := range []int{4 << 10, readBufferBytes, 1 << 20} {
		for name, log := range edgeCaseLogs(max(size, readBufferBytes)) {
			sc := newScan(Default())
			if err := sc.runLines(bufio.NewReaderSize(bytes.NewReader(log), size), readBufferBytes); err != nil {
				t.Fatal(err)
			}
			want := sc.findings(&Snapshot{})
			got, err := Default().DiagnoseReader(bufio.NewReaderSize(bytes.NewReader(log), size), Snapshot{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("bufio.Reader of %d bytes, %s: DiagnoseReader gives %v, the line scan %v", size, name, got, want)
			}
		}
	}
}

func TestPatternWithoutKeywordUsesLineScan(t *testing.T) {
	rules, err := LoadRulesFile(writeRules(t, `
rules:
- id: site-fold-case
  title: Case-insensitive pattern
  severity: low
  confidence: 0.5
  risk: none
  explanation: A pattern without a keyword runs on every line.
  match:
    all: ['(?i)disk full']
  remedy:
    label: none
    steps: [nothing]
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(rules...)
	if err != nil {
		t.Fatal(err)
	}
	if e.filter != nil {
		t.Fatal("an engine with a keyword-less pattern must not filter lines")
	}
	got := e.Diagnose(Snapshot{Log: "a\nDISK FULL on /data\n"})
	if len(got) != 1 || got[0].Rule != "site-fold-case" || got[0].Evidence[0] != "DISK FULL on /data" {
		t.Fatalf("got %v", got)
	}
}

func TestChunkedScanReturnsReaderErrors(t *testing.T) {
	log := bytes.Repeat([]byte(seedCrash), 2000) // several small chunks
	for _, setup := range chunkSetups {
		for _, failAt := range []int{0, 100, len(log) / 2} {
			sc := newScan(Default())
			r := io.MultiReader(bytes.NewReader(log[:failAt]), failingReader{io.ErrUnexpectedEOF})
			if err := sc.runChunks(r, setup.longLine, setup.bufBytes, setup.workers); err != io.ErrUnexpectedEOF {
				t.Errorf("%v, failing at %d: err = %v, want %v", setup, failAt, err, io.ErrUnexpectedEOF)
			}
		}
	}
}

// FuzzChunkedScanMatchesLineScan feeds arbitrary logs to both paths with
// tiny chunks, so that chunk boundaries fall everywhere.
func FuzzChunkedScanMatchesLineScan(f *testing.F) {
	f.Add([]byte(seedCrash), uint8(0))
	f.Add([]byte("Found dir\nectory /data/lost+found, 'lost+found' is not in the form of topic-partition\n"), uint8(1))
	f.Add([]byte("\tprocess.roles = [bro\r\nker]\n"+seedCrash), uint8(2))
	f.Add([]byte("First offset 5 is less than the next\n offset 9\r\nLog start offset = 3\n"), uint8(3))
	e := Default()
	f.Fuzz(func(t *testing.T, log []byte, pick uint8) {
		setup := chunkSetups[int(pick)%len(chunkSetups)]
		want := referenceOutcome(t, e, log, setup.longLine)
		if got := chunkedOutcome(t, e, log, setup, iotest.HalfReader); !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: chunked scan differs\n got: %s\nwant: %s", setup, describeOutcome(got), describeOutcome(want))
		}
	})
}

// edgeCaseLogs are logs whose lines sit at the limits of the line reader
// whose buffer is longLine bytes.
func edgeCaseLogs(longLine int) map[string][]byte {
	line := func(n int, crAt ...int) []byte {
		b := bytes.Repeat([]byte{'L'}, n)
		copy(b, "Found directory /data/lost+found, x")
		for _, i := range crAt {
			b[i] = '\r'
		}
		return b
	}
	logs := map[string][]byte{
		"empty":                        nil,
		"newlines only":                []byte("\n\n\r\n\n"),
		"keyword over three lines":     []byte("x Found dir\n\n\rectory /data/lost+found, y\nKafkaMetadataLog.append\n\nAsFollower\n"),
		"keyword after an empty start": []byte("\n\nNo space left on device\n"),
	}
	for _, n := range []int{MaxLineBytes - 1, MaxLineBytes, MaxLineBytes + 1, longLine - 1, longLine, longLine + 1, 3*longLine + 1} {
		for _, crAt := range [][]int{nil, {MaxLineBytes - 1}, {MaxLineBytes - 2, MaxLineBytes - 1}, {n - 1}} {
			if len(crAt) > 0 && crAt[len(crAt)-1] >= n {
				continue
			}
			l := line(n, crAt...)
			name := fmt.Sprintf("line of %d bytes, CR at %v", n, crAt)
			logs[name+", newline"] = append(append(slices.Clone(l), '\n'), seedCrash...)
			logs[name+", at the end"] = append([]byte(seedCrash), l...)
		}
	}
	return logs
}

func TestChunkedScanMatchesLineScanOnEdgeCases(t *testing.T) {
	e := Default()
	for _, setup := range chunkSetups {
		for name, log := range edgeCaseLogs(setup.longLine) {
			want := referenceOutcome(t, e, log, setup.longLine)
			for rname, wrap := range map[string]func(io.Reader) io.Reader{"plain": plainReader["plain"], "half": iotest.HalfReader} {
				if got := chunkedOutcome(t, e, log, setup, wrap); !reflect.DeepEqual(got, want) {
					t.Errorf("%v, %s, %s reader: chunked scan differs\n got: %s\nwant: %s", setup, name, rname, describeOutcome(got), describeOutcome(want))
				}
			}
		}
	}
}
