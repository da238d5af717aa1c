package catalog

import (
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
