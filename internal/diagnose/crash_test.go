// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

// TestVersionHint: a stack frame in the throwing class whose line is where
// some releases start the throw names those releases; frames of other
// classes, lines the catalogue does not know, and lines beyond the
// statement's span name none. The template is written for the test.
func TestVersionHint(t *testing.T) {
	tp := &catalog.Template{
		Text:     "First control record is not a snapshot header ({})",
		Thrower:  "org.apache.kafka.snapshot.RecordsSnapshotReader",
		Versions: []string{"3.7.2", "3.9.2", "4.0.2", "4.3.0", "4.4.0"},
		Lines:    []int{131, 138, 138, 141, 0},
	}
	frame := func(method string, line int) frameSite {
		return frameSite{frame: "org.apache.kafka.snapshot." + method, file: "RecordsSnapshotReader.java", line: line}
	}
	tests := []struct {
		name  string
		sites []frameSite
		want  string // releases named, "" for no hint
	}{
		{"the statement's first line", []frameSite{frame("RecordsSnapshotReader.nextBatch", 138)}, "3.9.2, 4.0.2"},
		{"the constructor call two lines below the throw", []frameSite{frame("RecordsSnapshotReader.nextBatch", 140)}, "3.9.2, 4.0.2"},
		{"a line two releases share the span of", []frameSite{frame("RecordsSnapshotReader.nextBatch", 142)}, "3.9.2, 4.0.2, 4.3.0"},
		{"a nested class of the thrower", []frameSite{frame("RecordsSnapshotReader$Iter.next", 132)}, "3.7.2"},
		{"above every release's throw", []frameSite{frame("RecordsSnapshotReader.nextBatch", 120)}, ""},
		{"beyond the statement's span", []frameSite{frame("RecordsSnapshotReader.nextBatch", 150)}, ""},
		{"a frame of another class at a fitting line", []frameSite{{frame: "org.apache.kafka.raft.KafkaRaftClient.initialize", file: "KafkaRaftClient.java", line: 138}}, ""},
		{"the first fitting frame of the thrower counts",
			[]frameSite{{frame: "org.apache.kafka.raft.KafkaRaftClient.initialize", file: "KafkaRaftClient.java", line: 999}, frame("RecordsSnapshotReader.hasNext", 133)}, "3.7.2"},
		{"no frames", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := versionHint(tp, tc.sites)
			if tc.want == "" {
				if got != "" {
					t.Errorf("hint %q, want none", got)
				}
				return
			}
			if !strings.Contains(got, "is where Kafka "+tc.want+" throws this message") {
				t.Errorf("hint %q, want releases %s", got, tc.want)
			}
			// 4.4.0 has the template without a known line: it may fit too.
			if !strings.Contains(got, "its line in Kafka 4.4.0 is not known") {
				t.Errorf("hint %q does not say 4.4.0's line is not known", got)
			}
		})
	}
}

// TestFrameSitesRead: the reader keeps the file and line of the Kafka
// frames that name them (a frame without a line, as "Kafka.scala)", has
// none).
func TestFrameSitesRead(t *testing.T) {
	lines := strings.Split("[2025-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n"+
		"java.lang.IllegalStateException: First control record is not a snapshot header (LEADER_CHANGE)\n"+
		"\tat org.apache.kafka.snapshot.RecordsSnapshotReader.nextBatch(RecordsSnapshotReader.java:141)\n"+
		"\tat org.apache.kafka.raft.internals.KRaftControlRecordStateMachine.maybeLoadSnapshot(KRaftControlRecordStateMachine.java:286)\n"+
		"\tat kafka.Kafka.main(Kafka.scala)", "\n")
	ev, _ := readEvent(lines, []int{1, 2, 3, 4, 5}, 0, "kafka")
	got := ev.sites
	want := []frameSite{
		{frame: "org.apache.kafka.snapshot.RecordsSnapshotReader.nextBatch", file: "RecordsSnapshotReader.java", line: 141},
		{frame: "org.apache.kafka.raft.internals.KRaftControlRecordStateMachine.maybeLoadSnapshot", file: "KRaftControlRecordStateMachine.java", line: 286},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("frame sites %+v, want %+v", got, want)
	}
}

// TestSameFaultCascade: a later fault the LoggingFaultHandler reports with
// the same kind as an earlier one is that one's consequence; any other
// error record is not.
func TestSameFaultCascade(t *testing.T) {
	rec := func(msg, logger string) *terminalEvent {
		line := "[2025-01-01 00:00:00,000] ERROR " + msg + " (" + logger + ")"
		return &terminalEvent{text: line, joined: line}
	}
	const lfh = "org.apache.kafka.server.fault.LoggingFaultHandler"
	loading := rec("Encountered metadata loading fault: Unhandled fault in MetadataLoader#handleLoadSnapshot. Snapshot offset was 119", lfh)
	tests := []struct {
		name        string
		first       *terminalEvent
		next        *terminalEvent
		consequence bool
	}{
		{"the same kind of fault after it", loading, rec("Encountered metadata loading fault: Unhandled error initializing new publishers", lfh), true},
		{"another kind of fault", loading, rec("Encountered metadata publishing fault: Error applying topics delta in MetadataDelta up to 189", lfh), false},
		{"the same words from another logger", loading, rec("Encountered metadata loading fault: x", "kafka.server.BrokerServer"), false},
		{"a first error of another logger", rec("Encountered metadata loading fault: x", "kafka.server.BrokerServer"), rec("Encountered metadata loading fault: y", lfh), false},
		{"no earlier error", nil, loading, false},
	}
	for _, tc := range tests {
		if got := tc.first.sameFaultCascade(tc.next); got != tc.consequence {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.consequence)
		}
	}
}

// TestEveryReleasesBannerStartsARun: the log4j controller registration
// each release prints first (4.4.0 puts the MBean's name in backquotes)
// begins a run, so of two runs of the lab's recordings one after the
// other, the second is the one read (its first line is its only banner).
func TestEveryReleasesBannerStartsARun(t *testing.T) {
	for _, v := range []string{"3.7.2", "3.9.2", "4.0.2", "4.4.0"} {
		t.Run(v, func(t *testing.T) {
			first := readLog(t, "testdata/faultlab/"+v+"/corrupt-recovery-checkpoint.log")
			second := readLog(t, "testdata/faultlab/"+v+"/torn-recovery-checkpoint.log")
			lines := strings.Split(strings.TrimSuffix(first, "\n")+"\n"+second, "\n")
			var tail logTail
			for i, l := range lines {
				tail.add(i+1, []byte(l))
			}
			want := strings.Count(strings.TrimSuffix(first, "\n"), "\n") + 2
			if got := tail.readCrash().runStart; got != want {
				t.Errorf("the last run starts at line %d, want %d (the second recording's first line: %s)", got, want, lines[want-1])
			}
		})
	}
}
