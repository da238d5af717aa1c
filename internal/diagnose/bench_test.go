// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// noiseTemplates are everyday lines of a busy KRaft broker (synthetic, in
// the shape of real Kafka 3.x/4.x output), including several that share
// words with failure patterns (Truncating, checkpoint, snapshot, epoch,
// Connection to node, ERROR) so that the prefilter is exercised.
var noiseTemplates = []string{
	"[2025-04-28 08:%02d:%02d,%03d] INFO [MetadataLoader id=100] initializeNewPublishers: the loader is still catching up because we still don't know the high water mark yet. (org.apache.kafka.image.loader.MetadataLoader)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [UnifiedLog partition=orders-%d, dir=/bitnami/kafka/data] Incremented log start offset to 1234567 due to segment deletion (org.apache.kafka.storage.internals.log.UnifiedLog)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [LocalLog partition=payments-%d, dir=/bitnami/kafka/data] Rolled new log segment at offset 99812345 in 2 ms. (org.apache.kafka.storage.internals.log.LocalLog)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [ReplicaFetcher replicaId=100, leaderId=101, fetcherId=0] Truncating partition events-%d with TruncationState(offset=768982, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=1, leaderEpoch=5, endOffset=768982) (kafka.server.ReplicaFetcherThread)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [GroupCoordinator id=100] Dynamic member with unknown member id joins group billing-%d in Stable state. Created a new member id consumer-1-3b2f. (org.apache.kafka.coordinator.group.GroupMetadataManager)",
	"[2025-04-28 08:%02d:%02d,%03d] WARN [RaftManager id=100] Connection to node 2 (kafka-controller-2.kafka-controller-headless/10.1.2.%d:9093) could not be established. Node may not be available. (org.apache.kafka.clients.NetworkClient)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [SnapshotEmitter id=100] Successfully wrote snapshot 00000000000057%d-0000000012 (org.apache.kafka.image.publisher.SnapshotEmitter)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [Log partition=__consumer_offsets-%d, dir=/bitnami/kafka/data] Deleting segment files LogSegment(baseOffset=0, size=4096) (kafka.log.LocalLog$)",
	"[2025-04-28 08:%02d:%02d,%03d] ERROR [ReplicaManager broker=100] Error processing append operation on partition audit-%d (kafka.server.ReplicaManager)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [Partition inventory-%d broker=100] ISR updated to 100,101,102 and version updated to 18 (kafka.cluster.Partition)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO Sent auto-creation request for Set(clicks-%d) to the active controller. (kafka.server.DefaultAutoTopicCreationManager)",
	"[2025-04-28 08:%02d:%02d,%03d] INFO [BrokerLifecycleManager id=100] Successfully registered broker 100 with broker epoch %d (kafka.server.BrokerLifecycleManager)",
}

// benchLog builds about size bytes of noise followed by the seed crash.
func benchLog(size int) []byte {
	var buf bytes.Buffer
	buf.Grow(size + 4096)
	for i := 0; buf.Len() < size; i++ {
		fmt.Fprintf(&buf, noiseTemplates[i%len(noiseTemplates)], i/60000%60, i/1000%60, i%1000, i%64)
		buf.WriteByte('\n')
	}
	buf.WriteString("[2025-04-28 08:22:01,792] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n")
	buf.WriteString(seedCrash)
	return buf.Bytes()
}

func BenchmarkDiagnoseReader64MiB(b *testing.B) {
	log := benchLog(64 << 20)
	e := Default()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := e.DiagnoseReader(bytes.NewReader(log), Snapshot{Role: RoleBroker})
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 || got[0].Rule != "metadata-log-offset-mismatch" {
			b.Fatalf("crash at the end not found: %v", ruleIDs(got))
		}
	}
}

// TestBenchLogIsHealthyBeforeTheCrash guards the benchmark: its noise
// alone must raise no alarm, so the benchmark measures the real path.
func TestBenchLogIsHealthyBeforeTheCrash(t *testing.T) {
	log := benchLog(1 << 20)
	noise := log[:bytes.Index(log, []byte("[2025-04-28 08:22:01,792] ERROR Encountered"))]
	for _, f := range Default().Diagnose(Snapshot{Log: string(noise)}) {
		if severityRank(f.Severity) >= severityRank(SeverityHigh) {
			t.Errorf("noise raised %s: %q", f.Rule, f.Evidence)
		}
	}
}

// realLogCorpus is the given crash and benign logs, repeated to at least
// size bytes.
func realLogCorpus(b *testing.B, size int) []byte {
	var corpus []byte
	for _, dir := range []string{"testdata/crashlogs", "testdata/benign"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			corpus = append(corpus, data...)
		}
	}
	return bytes.Repeat(corpus, size/len(corpus)+1)
}

// BenchmarkDiagnoseReaderRealLogs64MiB is the whole diagnosis (scan,
// structural reading, findings) over 64 MiB of the given logs repeated:
// real crash logs, where many lines carry keywords, unlike broker noise.
// Compare with `LC_ALL=C grep -E -c -f patterns` over the same bytes (the
// patterns as test/bench/benchreport's classifier section writes them).
func BenchmarkDiagnoseReaderRealLogs64MiB(b *testing.B) {
	log := realLogCorpus(b, 64<<20)[:64<<20]
	e := Default()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		got, err := e.DiagnoseReader(bytes.NewReader(log), Snapshot{})
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 {
			b.Fatal("no finding on 64 MiB of crash logs")
		}
	}
}

// BenchmarkScanPathsOnRealLogs compares the line-by-line reference path
// with the chunked path on 16 MiB of the testdata logs repeated: real
// crash logs, where many more lines carry keywords than in broker noise.
func BenchmarkScanPathsOnRealLogs(b *testing.B) {
	log := realLogCorpus(b, 16<<20)
	e := Default()
	for _, path := range []struct {
		name string
		run  func(sc *scan, r io.Reader) error
	}{
		{"lines", func(sc *scan, r io.Reader) error { return sc.runLines(r, readBufferBytes) }},
		{"chunks", func(sc *scan, r io.Reader) error {
			return sc.runChunks(r, readBufferBytes, chunkBufferBytes(readBufferBytes), runtime.GOMAXPROCS(0))
		}},
	} {
		b.Run(path.name, func(b *testing.B) {
			b.SetBytes(int64(len(log)))
			for b.Loop() {
				if err := path.run(newScan(e), bytes.NewReader(log)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
