// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkMatch measures Match on a mix of lines: messages that match a
// template, Kafka lines that match none, and exception lines.
func BenchmarkMatch(b *testing.B) {
	c := mustLoad(b)
	lines := []string{
		"kafka.common.InconsistentClusterIdException: The Cluster ID abc doesn't match stored clusterId Some(xyz) in meta.properties. The broker is trying to join the wrong cluster. Configured zookeeper.connect may be wrong.",
		"[ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error for partition orders-3 at offset 1234",
		"Started socket server acceptors and processors",
		"[Log partition=orders-3, dir=/var/lib/kafka] Loading producer state till offset 0 with message format version 2",
		"java.io.IOException: No space left on device",
		"Caused by: org.apache.kafka.common.KafkaException: Socket server failed to bind to 0.0.0.0:9092: Address already in use.",
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Match(lines[i%len(lines)])
	}
}

// BenchmarkMatchCrashLogLines runs Match on every line of the crash logs in
// internal/diagnose/testdata/crashlogs (as they are, prefixes and all), the
// worst case of a reader that would hand it every line; b.SetBytes makes
// the result comparable with grep's MB/s.
func BenchmarkMatchCrashLogLines(b *testing.B) {
	c := mustLoad(b)
	files, err := filepath.Glob("../testdata/crashlogs/*.log")
	if err != nil || len(files) == 0 {
		b.Fatalf("no crash logs: %v", err)
	}
	var lines []string
	size := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			lines = append(lines, l)
			size += len(l) + 1
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			c.Match(l)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
}
