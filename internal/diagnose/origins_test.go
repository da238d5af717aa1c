// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import "testing"

// TestClassesFromOriginNotPath: the class of a crash comes from where its
// messages come from, for the shapes the fault lab's real recordings have
// (test/faultlab, internal/diagnose/testdata/faultlab): each input keeps
// Kafka's message format with made-up paths and hosts.
func TestClassesFromOriginNotPath(t *testing.T) {
	cases := []struct {
		name, log, class string
	}{
		{"a missing keystore under /tmp is TLS configuration, not a log dir (DefaultSslEngineFactory)",
			"[2025-01-01 00:00:00,000] ERROR Modification time of key store could not be obtained: /tmp/lab/secrets/kafka.keystore.jks (org.apache.kafka.common.security.ssl.DefaultSslEngineFactory)\n" +
				"java.nio.file.NoSuchFileException: /tmp/lab/secrets/kafka.keystore.jks\n" +
				"\tat java.base/sun.nio.fs.UnixException.translateToIOException(UnixException.java:92)\n" +
				"[2025-01-01 00:00:01,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
				"org.apache.kafka.common.KafkaException: Failed to load SSL keystore /tmp/lab/secrets/kafka.keystore.jks of type JKS\n" +
				"\tat org.apache.kafka.common.security.ssl.DefaultSslEngineFactory$FileBasedStore.load(DefaultSslEngineFactory.java:382)\n" +
				"\tat org.apache.kafka.common.security.ssl.SslFactory.configure(SslFactory.java:98)\n",
			"tls-config-error"},
		{"a partition's segment under /tmp gone is still log-dir-deleted-externally",
			"java.nio.file.NoSuchFileException: /tmp/kafka-logs/orders-0/00000000000000000000.index\n",
			"log-dir-deleted-externally"},
		{"a checkpoint under /tmp gone is still log-dir-deleted-externally",
			"java.io.FileNotFoundException: /tmp/kafka-logs/recovery-point-offset-checkpoint.tmp (No such file or directory)\n",
			"log-dir-deleted-externally"},
		{"3.7.2: the startup failure names the class, not the aborted shutdown's NullPointerException after it",
			"[2025-01-01 00:00:00,000] ERROR [BrokerServer id=1] Fatal error during broker startup. Prepare to shutdown (kafka.server.BrokerServer)\n" +
				"org.apache.kafka.common.KafkaException: Failed to acquire lock on file .lock in /var/lib/kafka/data. A Kafka instance in another process or thread is using this directory.\n" +
				"\tat kafka.log.LogManager.lockLogDirs(LogManager.scala:266)\n" +
				"[2025-01-01 00:00:01,000] ERROR [BrokerServer id=1] Fatal error during broker shutdown. (kafka.server.BrokerServer)\n" +
				"java.lang.NullPointerException: Cannot invoke \"kafka.server.BrokerLifecycleManager.beginControlledShutdown()\" because the return value of \"kafka.server.BrokerServer.lifecycleManager()\" is null\n" +
				"\tat kafka.server.BrokerServer.shutdown(BrokerServer.scala:644)\n" +
				"[2025-01-01 00:00:01,100] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
				"java.lang.NullPointerException: Cannot invoke \"kafka.server.BrokerLifecycleManager.beginControlledShutdown()\" because the return value of \"kafka.server.BrokerServer.lifecycleManager()\" is null\n" +
				"\tat kafka.server.BrokerServer.shutdown(BrokerServer.scala:644)\n",
			"log-dir-lock-held"},
		{"4.x RemoteLogManager (server.log.remote.storage) loading a plugin class by name",
			"[2025-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
				"org.apache.kafka.common.KafkaException: java.lang.ClassNotFoundException: com.example.S3RemoteStorageManager\n" +
				"\tat org.apache.kafka.server.log.remote.storage.RemoteLogManager.createDelegate(RemoteLogManager.java:388)\n" +
				"Caused by: java.lang.ClassNotFoundException: com.example.S3RemoteStorageManager\n",
			"tiered-storage-config-error"},
		{"invalid records found in a segment at recovery: the broker truncates and runs on",
			"[2025-01-01 00:00:00,000] WARN Found invalid messages in log segment /var/lib/kafka/data/orders-0/00000000000000000000.log at byte offset 81421. (org.apache.kafka.storage.internals.log.LogSegment)\n" +
				"org.apache.kafka.common.errors.CorruptRecordException: Record is corrupt (stored crc = 1, computed crc = 2)\n" +
				"[2025-01-01 00:00:00,100] WARN [LogLoader partition=orders-0, dir=/var/lib/kafka/data] Corruption found in segment 0, truncating to offset 739 (kafka.log.LogLoader)\n",
			"corrupt-log-segment"},
		{"the JVM cannot reserve its heap: the reason is the line after 'Error occurred during initialization of VM'",
			"Error occurred during initialization of VM\nCould not reserve enough space for 2097152KB object heap\n",
			"jvm-native-memory-insufficient"},
		{"the JAAS file named by java.security.auth.login.config is missing (the JDK's ConfigFile throws, no Kafka frame shown)",
			"[2025-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
				"java.lang.SecurityException: java.io.IOException: /etc/kafka/kafka_server_jaas.conf (No such file or directory)\n" +
				"\tat java.base/sun.security.provider.ConfigFile$Spi.<init>(ConfigFile.java:139)\n" +
				"\tat java.base/sun.security.provider.ConfigFile.<init>(ConfigFile.java:104)\n",
			"sasl-config-error"},
		{"garbage in an offset checkpoint's number: the checkpoint parser, not the metadata publishing fault that wraps it",
			"[2025-01-01 00:00:00,000] ERROR Encountered metadata publishing fault: Error applying topics delta in MetadataDelta up to 189 (org.apache.kafka.server.fault.LoggingFaultHandler)\n" +
				"java.lang.NumberFormatException: For input string: \"12@#\"\n" +
				"\tat java.base/java.lang.Long.parseLong(Long.java:711)\n" +
				"\tat org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile$Formatter.fromString(OffsetCheckpointFile.java:88)\n",
			"corrupt-checkpoint-file"},
		{"EROFS under a storage exception is the read-only data dir, not the generic I/O class (the root cause wins)",
			"[2025-01-01 00:00:00,000] ERROR Encountered fatal fault: caught exception (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
				"org.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /var/lib/kafka/data/__cluster_metadata-0/leader-epoch-checkpoint\n" +
				"\tat org.apache.kafka.storage.internals.checkpoint.CheckpointFileWithFailureHandler.write(CheckpointFileWithFailureHandler.java:52)\n" +
				"Caused by: java.nio.file.FileSystemException: /var/lib/kafka/data/__cluster_metadata-0/leader-epoch-checkpoint.tmp: Read-only file system\n" +
				"\tat java.base/sun.nio.fs.UnixException.translateToIOException(UnixException.java:100)\n",
			"data-dir-read-only"},
		{"EIO under the same storage exception stays the I/O class",
			"[2025-01-01 00:00:00,000] ERROR Encountered fatal fault: caught exception (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
				"org.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /var/lib/kafka/data/__cluster_metadata-0/leader-epoch-checkpoint\n" +
				"\tat org.apache.kafka.storage.internals.checkpoint.CheckpointFileWithFailureHandler.write(CheckpointFileWithFailureHandler.java:52)\n" +
				"Caused by: java.io.IOException: Input/output error\n" +
				"\tat java.base/sun.nio.ch.FileDispatcherImpl.force0(Native Method)\n",
			"storage-io-error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Log: tc.log})
			if len(got) == 0 || got[0].Class != tc.class {
				t.Fatalf("first finding %v, want class %s", ruleIDs(got), tc.class)
			}
		})
	}
}
