// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// framings rewrite a log the way a tool shows it. Each works line by line
// on the log's own lines; the formats are those of the tools (k9s box,
// kubectl --prefix / --timestamps, the CRI log file kubelet writes, Docker
// Compose v2 with and without colour, journald and rsyslog, Docker's
// json-file driver, ECS-style structured logging).
var framings = map[string]func(string) string{
	"k9s box, wrapped at 100 columns": func(log string) string {
		const width = 100
		var b strings.Builder
		for _, line := range logLines(log) {
			runes := []rune(line)
			for {
				n := min(len(runes), width)
				b.WriteString("│ " + string(runes[:n]) + strings.Repeat(" ", width-n) + " │\n")
				runes = runes[n:]
				if len(runes) == 0 {
					break
				}
			}
		}
		return b.String()
	},
	"kubectl logs --prefix": perLine(func(l string) string { return "[pod/kafka-broker-0/kafka] " + l }),
	"kubectl logs --timestamps": perLine(func(l string) string {
		return "2025-04-28T08:22:01.792345678Z " + l
	}),
	"CRI log file with partial lines": func(log string) string {
		const split = 120
		var b strings.Builder
		for _, line := range logLines(log) {
			for len(line) > split {
				cut := split
				for cut > 0 && !utf8.RuneStart(line[cut]) {
					cut--
				}
				b.WriteString("2025-04-28T08:22:01.792345678Z stdout P " + line[:cut] + "\n")
				line = line[cut:]
			}
			b.WriteString("2025-04-28T08:22:01.792345678Z stdout F " + line + "\n")
		}
		return b.String()
	},
	"docker compose":        perLine(func(l string) string { return "kafka-1  | " + l }),
	"docker compose colour": perLine(func(l string) string { return "\x1b[36mkafka-1  |\x1b[0m " + l }),
	"journald":              perLine(func(l string) string { return "Nov 19 04:07:11 node-3 kafka-server-start.sh[4865]: " + l }),
	"rsyslog with #011 tabs": perLine(func(l string) string {
		return "Nov 19 04:07:11 node-3 kafka[4865]: " + strings.ReplaceAll(l, "\t", "#011")
	}),
	"docker json-file": perLine(func(l string) string {
		b, _ := json.Marshal(map[string]string{"log": l + "\n", "stream": "stdout", "time": "2025-04-28T08:22:01.792345678Z"})
		return string(b)
	}),
	"structured JSON": perLine(func(l string) string {
		b, _ := json.Marshal(map[string]string{"@timestamp": "2025-04-28T08:22:01.792Z", "message": l, "service.name": "kafka"})
		return string(b)
	}),
}

// logLines splits a log into its lines without line ends.
func logLines(log string) []string {
	log = strings.TrimSuffix(log, "\n")
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func perLine(f func(string) string) func(string) string {
	return func(log string) string {
		var b strings.Builder
		for _, l := range logLines(log) {
			b.WriteString(f(l) + "\n")
		}
		return b.String()
	}
}

// Every given log, in every framing, gives the same first finding as the
// plain log: its class for a crash log, nothing high or critical for a
// benign one.
func TestFramedCorpusGivesTheSameFirstFinding(t *testing.T) {
	classes := readIndex(t, "testdata/crashlogs/INDEX.tsv", "failure_class")
	kinds := readIndex(t, "testdata/benign/INDEX.tsv", "kind")
	for name, frame := range framings {
		t.Run(name, func(t *testing.T) {
			for file, class := range classes {
				log := readLog(t, filepath.Join("testdata/crashlogs", file))
				got := Default().Diagnose(Snapshot{Log: frame(log)})
				if len(got) == 0 || got[0].Class != class {
					t.Errorf("%s: first finding %v, want %s", file, ruleIDs(got), class)
					continue
				}
				plain := Default().Diagnose(Snapshot{Log: log})
				if got[0].Rule != plain[0].Rule {
					t.Errorf("%s: rule %s, the plain log gives %s", file, got[0].Rule, plain[0].Rule)
				}
			}
			for file := range kinds {
				log := readLog(t, filepath.Join("testdata/benign", file))
				for _, f := range Default().Diagnose(Snapshot{Log: frame(log)}) {
					if severityRank(f.Severity) >= severityRank(SeverityHigh) {
						t.Errorf("%s: healthy log raised %s (%s): %q", file, f.Rule, f.Severity, f.Evidence)
					}
				}
			}
		})
	}
}

// The offsets of the seed incident survive every framing (the triage reads
// them from one line, which a framing must not split for good).
func TestFramedSeedKeepsItsOffsets(t *testing.T) {
	log := seedLog(t)
	want := OffsetTriage{FirstOffset: 57876665, NextOffset: 57876669, LogStartOffset: 57054787, LocalDivergence: true}
	for name, frame := range framings {
		got := Default().Diagnose(Snapshot{Role: RoleBroker, Log: frame(log)})
		if len(got) == 0 || got[0].Offsets == nil || *got[0].Offsets != want {
			var off any
			if len(got) > 0 {
				off = got[0].Offsets
			}
			t.Errorf("%s: offsets %v, want %+v", name, off, want)
			continue
		}
		if !got[0].Remedy.Automated {
			t.Errorf("%s: the seed incident on a broker lost its automated remedy", name)
		}
		for _, ev := range got[0].Evidence {
			if strings.Contains(ev, "│") || strings.Contains(ev, "[pod/") || strings.HasPrefix(ev, "{") || strings.Contains(ev, "stdout F") {
				t.Errorf("%s: evidence keeps the framing: %q", name, ev)
			}
		}
	}
}

// Unit cases of the normalizer on single framed lines.
func TestNormalizerStripsFramings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"│ [2025] ERROR x │\n", "[2025] ERROR x\n"},
		{"[pod/kafka-0/kafka] [2025] ERROR x\n", "[2025] ERROR x\n"},
		{"kafka_1  | [2025] ERROR x\n", "[2025] ERROR x\n"},
		{"Feb 21 10:00:00 host kafka[123]: #011at kafka.Foo(Foo.scala:1)\n", "\tat kafka.Foo(Foo.scala:1)\n"},
		{"2025-01-01T00:00:00.1Z stdout P [2025] ERROR ab\n2025-01-01T00:00:00.2Z stdout F cd\n", "[2025] ERROR abcd\n"},
		{`{"log":"[2025] ERROR x\n","stream":"stderr"}` + "\n", "[2025] ERROR x\n"},
		{`{"level":"error","msg":"Fatal error during broker startup","stack_trace":"java.io.IOException: boom\n\tat kafka.Foo"}` + "\n",
			"ERROR Fatal error during broker startup\njava.io.IOException: boom\n\tat kafka.Foo\n"},
		{"{not json\n", "{not json\n"},
		{"kafka-1  | Nov 19 04:07:11 h kafka[1]: [pod/a/b] │ deep │\n", "deep\n"},
	}
	for _, tc := range cases {
		r := normalizedReader(strings.NewReader(tc.in))
		var b strings.Builder
		buf := make([]byte, 7) // small reads exercise Read's carry-over
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if b.String() != tc.want {
			t.Errorf("normalize(%q) = %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// An unframed log is handed to the scan as it is (no copy, no cost).
func TestUnframedLogIsNotRewritten(t *testing.T) {
	log := seedLog(t)
	if _, ok := normalizedReader(strings.NewReader(log)).(*normalizer); ok {
		t.Fatal("the seed log (unframed) went through the normalizer")
	}
	framed := framings["docker compose"](log)
	if _, ok := normalizedReader(strings.NewReader(framed)).(*normalizer); !ok {
		t.Fatal("a Compose-framed log was not normalized")
	}
}

// The normalizer never panics, never emits a line longer than maxJoined,
// and never emits much more than it read, whatever the input.
func FuzzNormalizer(f *testing.F) {
	f.Add([]byte("│ [2025] ERROR x │\n"))
	f.Add([]byte("2025-01-01T00:00:00.1Z stdout P ab\n2025-01-01T00:00:00.2Z stdout F cd\n"))
	f.Add([]byte(`{"log":"x\n","stream":"stderr"}` + "\n" + `{"message":"a\nb","level":"warn","exception":{"name":"E","message":"m"}}`))
	f.Add([]byte("kafka-1  | Nov 19 04:07:11 h kafka[1]: #011at x\n\x1b[36mk |\x1b[0m y"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if _, err := out.ReadFrom(&normalizer{r: bufio.NewReaderSize(bytes.NewReader(data), readBufferBytes)}); err != nil {
			t.Fatalf("read: %v", err)
		}
		if out.Len() > 2*len(data)+8 {
			t.Fatalf("%d bytes out of %d in", out.Len(), len(data))
		}
		for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(l) > maxJoined {
				t.Fatalf("line of %d bytes", len(l))
			}
		}
		// And the whole engine on the framed reading of the input.
		if _, err := Default().DiagnoseReader(bytes.NewReader(data), Snapshot{}); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkDiagnoseReaderFramed64MiB measures a 64 MiB log framed by
// Docker Compose: every line goes through the normalizer.
func BenchmarkDiagnoseReaderFramed64MiB(b *testing.B) {
	log := []byte(framings["docker compose"](string(benchLog(64 << 20))))
	b.SetBytes(int64(len(log)))
	b.ResetTimer()
	for range b.N {
		got, err := Default().DiagnoseReader(bytes.NewReader(log), Snapshot{})
		if err != nil || len(got) == 0 {
			b.Fatalf("findings %v, err %v", ruleIDs(got), err)
		}
	}
}
