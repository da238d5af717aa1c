// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// repeatReader yields line n times, then tail; it never holds more than
// one line, so tests can feed huge logs without huge memory.
type repeatReader struct {
	line []byte
	n    int
	tail []byte
	buf  []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.n > 0 {
		r.buf = append(r.buf, r.line...)
		r.n--
	}
	if len(r.buf) == 0 {
		if len(r.tail) == 0 {
			return 0, io.EOF
		}
		r.buf, r.tail = r.tail, nil
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// seedCrash is the fatal line of the seed incident, for the end of hostile logs.
const seedCrash = "kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 57876665 is less than the next offset 57876669. First 10 offsets in append: List(57876665), last offset in append: 57912402. Log start offset = 57054787\n"

func assertSeedFound(t *testing.T, got []Finding) {
	t.Helper()
	if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" || got[0].Offsets == nil || got[0].Offsets.NextOffset != 57876669 {
		t.Fatalf("crash after hostile input not found: %v", ruleIDs(got))
	}
	for _, f := range got {
		if len(f.Evidence) > MaxEvidenceLines+3 {
			t.Errorf("%s quotes %d lines", f.Rule, len(f.Evidence))
		}
		for _, ev := range f.Evidence {
			if len(ev) > MaxLineBytes*2 || !utf8.ValidString(ev) {
				t.Errorf("%s: evidence line of %d bytes (valid UTF-8: %v)", f.Rule, len(ev), utf8.ValidString(ev))
			}
		}
	}
}

func TestHostileInputs(t *testing.T) {
	cases := []struct {
		name string
		r    io.Reader
	}{
		{"10 MiB single line, then the crash", &repeatReader{line: []byte("x"), n: 10 << 20, tail: []byte("\n" + seedCrash)}},
		{"10 MiB single line made of a keyword", &repeatReader{line: []byte("Exception "), n: 1 << 20, tail: []byte("\n" + seedCrash)}},
		{"2 million short lines", &repeatReader{line: []byte("a\n"), n: 2_000_000, tail: []byte(seedCrash)}},
		{"invalid UTF-8 around the crash", strings.NewReader("\xff\xfe\xc3(\n" + strings.Replace(seedCrash, "last offset in append", "last\xc3\x28 offset\xff in append", 1) + "\x80\x81\n")},
		{"no trailing newline", strings.NewReader(strings.TrimSuffix(seedCrash, "\n"))},
		{"NUL bytes and CRs", strings.NewReader("\x00\x00\r\r\n" + seedCrash + "\r\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Default().DiagnoseReader(tc.r, Snapshot{Role: RoleBroker})
			if err != nil {
				t.Fatalf("DiagnoseReader: %v", err)
			}
			assertSeedFound(t, got)
		})
	}
}

func TestLongLineKeepsItsHeadAsEvidence(t *testing.T) {
	long := seedCrash[:len(seedCrash)-1] + strings.Repeat(" padding", 100_000) + "\n"
	got, err := Default().DiagnoseReader(strings.NewReader(long), Snapshot{})
	if err != nil {
		t.Fatal(err)
	}
	assertSeedFound(t, got)
	if ev := got[0].Evidence[0]; len(ev) != MaxLineBytes || !strings.HasPrefix(ev, "kafka.common.UnexpectedAppendOffsetException") {
		t.Errorf("evidence is %d bytes starting %q, want the line's first %d bytes", len(ev), ev[:40], MaxLineBytes)
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestReaderErrorIsReturned(t *testing.T) {
	_, err := Default().DiagnoseReader(io.MultiReader(strings.NewReader("line\n"), failingReader{io.ErrUnexpectedEOF}), Snapshot{})
	if err == nil || !strings.Contains(err.Error(), "reading log") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzDiagnoseReader(f *testing.F) {
	f.Add([]byte(seedCrash))
	f.Add([]byte(syntheticNextEqualsStart))
	f.Add([]byte("Found directory /data/lost+found, 'lost+found' is not in the form of topic-partition\n"))
	f.Add([]byte("\tprocess.roles = [broker]\n" + seedCrash))
	f.Add([]byte("Corrupt index found, index file (/a/b-0/1.index) has non-zero size\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Default().DiagnoseReader(bytes.NewReader(data), Snapshot{Role: RoleBroker})
		if err != nil {
			t.Fatalf("DiagnoseReader on bytes: %v", err)
		}
		for _, f := range got {
			if len(f.Evidence) > MaxEvidenceLines+3 {
				t.Fatalf("%s quotes %d lines", f.Rule, len(f.Evidence))
			}
			for _, ev := range f.Evidence {
				if !utf8.ValidString(ev) || len(ev) > 2*MaxLineBytes {
					t.Fatalf("%s: bad evidence line (%d bytes)", f.Rule, len(ev))
				}
			}
			if f.Remedy.Automated && f.Remedy.Target == "" {
				t.Fatalf("%s: automated remedy without target", f.Rule)
			}
			// Automated only with a local divergence (conflicting offset
			// sets may refuse it even then).
			if f.Offsets != nil && f.Remedy.Automated && !f.Offsets.LocalDivergence {
				t.Fatalf("%s: automated=%v with offsets %+v", f.Rule, f.Remedy.Automated, f.Offsets)
			}
		}
	})
}
