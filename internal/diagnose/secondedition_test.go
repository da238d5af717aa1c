// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"strings"
	"testing"
)

// The seven classes of failure-classes.md section G ship without a real
// log. These inputs are synthetic: each is built from the message format of
// the program that prints it (named in the case and next to the rule in
// rules.yaml), with made-up hosts, ids and paths. Negative cases check that
// a neighbouring class keeps its own key.
func TestSecondEditionClasses(t *testing.T) {
	cases := []struct {
		name, log, class string
	}{
		{"raft client gets CLUSTER_AUTHORIZATION_FAILED (KafkaRaftClient 3.0+)",
			"[2025-01-01 00:00:00,000] ERROR Encountered fatal fault: Unexpected error in raft IO thread (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n" +
				"org.apache.kafka.common.errors.ClusterAuthorizationException: Received cluster authorization error in response InboundResponse(correlationId=7, data=VoteResponseData(errorCode=31, topics=[]), sourceId=2)\n",
			"kraft-controller-authz-denied"},
		{"controller denies a VOTE request (ControllerApis + AuthHelper)",
			"[2025-01-01 00:00:00,000] ERROR [ControllerApis nodeId=1] Unexpected error handling request RequestHeader(apiKey=VOTE, apiVersion=0, clientId=raft-client-2, correlationId=7, headerVersion=2) -- VoteRequestData(clusterId='x') with context RequestContext(listenerName=CONTROLLER, securityProtocol=PLAINTEXT, principal=User:ANONYMOUS) (kafka.server.ControllerApis)\n" +
				"org.apache.kafka.common.errors.ClusterAuthorizationException: Request Request(processor=0, connectionId=x, session=Session(User:ANONYMOUS,/10.0.0.2), listenerName=ListenerName(CONTROLLER), securityProtocol=PLAINTEXT, buffer=null, envelope=None) is not authorized.\n",
			"kraft-controller-authz-denied"},
		{"launcher cannot find kafka.Kafka (English)",
			"Error: Could not find or load main class kafka.Kafka\nCaused by: java.lang.ClassNotFoundException: kafka.Kafka\n",
			"kafka-classpath-broken"},
		{"launcher cannot find kafka.Kafka (German locale: only the class names are keys)",
			"Fehler: Hauptklasse kafka.Kafka konnte nicht gefunden oder geladen werden\nUrsache: java.lang.ClassNotFoundException: kafka.Kafka\n",
			"kafka-classpath-broken"},
		{"scala library missing",
			"Exception in thread \"main\" java.lang.NoClassDefFoundError: scala/Product\n\tat java.base/java.lang.ClassLoader.defineClass1(Native Method)\n",
			"kafka-classpath-broken"},
		{"kafka-run-class.sh with no jars",
			"Classpath is empty. Please build the project first e.g. by running './gradlew jar -PscalaVersion=2.13.14'\n",
			"kafka-classpath-broken"},
		{"append fails, partition dir deleted under /tmp (UnifiedLog + LogDirFailureChannel)",
			"[2025-01-01 00:00:00,000] ERROR Error while appending records to orders-0 in dir /tmp/kafka-logs (org.apache.kafka.storage.internals.log.LogDirFailureChannel)\n" +
				"java.nio.file.NoSuchFileException: /tmp/kafka-logs/orders-0/00000000000000000000.log\n",
			"log-dir-deleted-externally"},
		{"checkpoint write fails with a localized OS text (class is the key)",
			"[2025-01-01 00:00:00,000] ERROR Error while writing to checkpoint file /var/kafka/replication-offset-checkpoint (kafka.server.LogDirFailureChannel)\n" +
				"java.io.FileNotFoundException: /var/kafka/replication-offset-checkpoint.tmp (Datei oder Verzeichnis nicht gefunden)\n",
			"log-dir-deleted-externally"},
		{"RemoteStorageManager class not found (RemoteLogManager 3.6+)",
			"[2025-01-01 00:00:00,000] ERROR [KafkaServer id=0] Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)\n" +
				"org.apache.kafka.common.KafkaException: java.lang.ClassNotFoundException: com.example.S3RemoteStorageManager\n" +
				"\tat kafka.log.remote.RemoteLogManager.createRemoteStorageManager(RemoteLogManager.java:180)\n",
			"tiered-storage-config-error"},
		{"own hostname does not resolve (InetAddress.getLocalHost)",
			"[2025-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)\n" +
				"java.net.UnknownHostException: kafka-0.kafka-headless: kafka-0.kafka-headless: Name or service not known\n" +
				"\tat java.base/java.net.InetAddress.getLocalHost(InetAddress.java:1670)\n",
			"local-hostname-unresolvable"},
		{"own hostname, resolver text localized",
			"java.net.UnknownHostException: broker-1: broker-1: 未知的名称或服务\n\tat java.base/java.net.InetAddress.getLocalHost(InetAddress.java:1642)\n",
			"local-hostname-unresolvable"},
		{"JDK 8 GC flag on Java 17 (HotSpot arguments.cpp)",
			"Unrecognized VM option 'PrintGCDateStamps'\nError: Could not create the Java Virtual Machine.\nError: A fatal exception has occurred. Program will exit.\n",
			"jvm-option-unsupported"},
		{"migration driver waits for ZK brokers (KRaftMigrationDriver 3.5+)",
			"[2025-01-01 00:00:00,000] INFO [KRaftMigrationDriver id=3000] No brokers are known to KRaft, waiting for brokers to register. (org.apache.kafka.metadata.migration.KRaftMigrationDriver)\n" +
				"[2025-01-01 00:00:10,000] INFO [KRaftMigrationDriver id=3000] No brokers are known to KRaft, waiting for brokers to register. (org.apache.kafka.metadata.migration.KRaftMigrationDriver)\n" +
				"[2025-01-01 00:00:20,000] INFO [KRaftMigrationDriver id=3000] Still waiting for ZK brokers [0, 1, 2] to register with KRaft. (org.apache.kafka.metadata.migration.KRaftMigrationDriver)\n",
			"zk-kraft-migration-stalled"},
		// Neighbours keep their own class.
		{"peer voter unresolvable is kraft-quorum-no-leader, not local-hostname",
			readLog(t, "testdata/crashlogs/76-kraft-voter-dns-unknownhost.log"), "kraft-quorum-no-leader"},
		{"log cleaner's .cleaned file on Azure Files stays unsupported-filesystem",
			readLog(t, "testdata/crashlogs/41-azure-files-logcleaner-nosuchfile.log"), "unsupported-filesystem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Default().Diagnose(Snapshot{Log: tc.log})
			if len(got) == 0 || got[0].Class != tc.class {
				t.Fatalf("first finding %v, want class %s", ruleIDs(got), tc.class)
			}
			if len(got[0].Evidence) == 0 {
				t.Errorf("no evidence quoted")
			}
		})
	}
}

// A -Xlog option that is valid but whose file cannot be opened is not an
// unsupported option: the finding says so and changes the remedy.
func TestInvalidXlogBecauseOfLogFileIsExplained(t *testing.T) {
	log := "[0.001s][error][logging] Error opening log file '/opt/kafka/bin/../logs/kafkaServer-gc.log': Permission denied\n" +
		"Invalid -Xlog option '-Xlog:gc*:file=/opt/kafka/bin/../logs/kafkaServer-gc.log:time,tags:filecount=10,filesize=100M', see error log for details.\n" +
		"Error: Could not create the Java Virtual Machine.\n"
	got := Default().Diagnose(Snapshot{Log: log})
	if len(got) == 0 || got[0].Class != "jvm-option-unsupported" {
		t.Fatalf("first finding %v", ruleIDs(got))
	}
	if got[0].Remedy.Action != "fix-gc-log-dir" {
		t.Errorf("remedy %q, want fix-gc-log-dir", got[0].Remedy.Action)
	}
}

// Distributions fail in their own entrypoint scripts before Kafka starts.
// Synthetic lines in Bitnami's liblog.sh layout ("kafka HH:MM:SS.ss ERROR ==> "),
// with the messages of libkafka.sh kafka_validate.
func TestDistributionScriptErrors(t *testing.T) {
	cases := []struct{ line, class string }{
		{"kafka 08:30:57.87 ERROR ==> Kafka haven't been configured to work in either Raft or Zookeeper mode. Please make sure at least one of the modes is configured.", "config-error"},
		{"kafka 08:30:57.87 ERROR ==> KRaft mode requires an unique node.id, please set the environment variable KAFKA_CFG_NODE_ID", "config-error"},
		{"kafka 08:30:57.87 ERROR ==> Role 'controller' enabled but environment variable KAFKA_CFG_CONTROLLER_QUORUM_VOTERS was not provided.", "config-error"},
		{"kafka 08:30:57.87 ERROR ==> There are listeners bound to the same port", "config-error"},
		{"kafka 08:30:57.87 ERROR ==> In order to configure the TLS encryption for Kafka with JKS certs you must mount your kafka.keystore.jks and kafka.truststore.jks certs to the /bitnami/kafka/config/certs directory.", "tls-config-error"},
		{"kafka 08:30:57.87 ERROR ==> Specified SASL protocol but no SASL mechanisms provided in KAFKA_CFG_SASL_ENABLED_MECHANISMS", "sasl-config-error"},
	}
	for _, tc := range cases {
		got := Default().Diagnose(Snapshot{Log: tc.line + "\n"})
		if len(got) == 0 || got[0].Class != tc.class {
			t.Errorf("%q: first finding %v, want %s", tc.line, ruleIDs(got), tc.class)
		}
	}
}

// Wordings found by reading each message's source across the release
// tags (synthetic lines built from those format strings).
func TestMessageVariantsAcrossVersions(t *testing.T) {
	cases := []struct{ name, log, class string }{
		{"KRaft unformatted dir, 2.8 .. trunk wording",
			"[2025-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)\njava.lang.RuntimeException: No `meta.properties` found in /var/lib/kafka/data (have you run `kafka-storage.sh` to format the directory?)\n",
			"storage-not-formatted"},
		{"KRaft unformatted dir, 3.7+ wording",
			"java.lang.RuntimeException: No readable meta.properties files found.\n", "storage-not-formatted"},
		{"inconsistent voter set answered by a peer (KafkaRaftClient 2.8 .. 3.8)",
			"java.lang.IllegalStateException: Received error indicating inconsistent voter sets\n", "kraft-voter-set-mismatch"},
		{"node id, 3.7+ wording",
			"java.lang.RuntimeException: Stored node id 2 doesn't match previous node id 1 in /var/lib/kafka/data/meta.properties. If you moved your data, make sure your configured node id matches. If you intend to create a new node, you should remove all data in your data directories.\n",
			"node-id-mismatch"},
		{"metadata log dir failed (LogManager 3.7+)",
			"[2025-01-01 00:00:00,000] FATAL Shutdown broker because the metadata log dir /var/lib/kafka/meta has failed (kafka.log.LogManager)\n", "log-dir-offline"},
		{"no log dir can be created (LogManager)",
			"[2025-01-01 00:00:00,000] FATAL Shutdown broker because none of the specified log dirs from /data/a, /data/b can be created or validated (kafka.log.LogManager)\n", "log-dir-offline"},
		{"snapshot record replay fault (MetadataLoader 3.6+)",
			"[2025-01-01 00:00:00,000] ERROR Encountered fatal fault: Error loading metadata log record 12 in snapshot at offset 5000 (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)\n", "metadata-log-replay-fault"},
		{"kafka-storage format rejects the cluster id (StorageTool)",
			"Cluster ID string  does not appear to be a valid UUID: Input string with prefix `` is too short to be decoded as a base64 UUID\n", "storage-not-formatted"},
		{"snapshot file cannot be opened (FileRawSnapshotReader 3.3+)",
			"java.io.UncheckedIOException: Unable to Opens a snapshot file /var/lib/kafka/data/__cluster_metadata-0/00000000000000001000-0000000003.checkpoint\n", "metadata-snapshot-unreadable"},
		{"log dirs of different brokers (BrokerMetadataCheckpoint 2.8 .. 3.6)",
			"kafka.common.InconsistentBrokerMetadataException: BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers shared a log directory (log.dirs) or partial data was manually copied from another broker. Found:\n", "node-id-mismatch"},
		{"metadata dir cannot be loaded (KafkaRaftServer 3.3 .. 3.6)",
			"org.apache.kafka.common.KafkaException: Cannot start server since `meta.properties` could not be loaded from /var/lib/kafka/meta\n", "storage-not-formatted"},
		{"metadata dir moved (KafkaRaftServer 3.3+)",
			"org.apache.kafka.common.KafkaException: Found unexpected metadata location in data directory `/data/__cluster_metadata-0` (the configured metadata directory is /meta).\n", "config-error"},
		{"checkpoint, 3.3+ bracket wording",
			"java.io.IOException: Malformed line in checkpoint file [/var/lib/kafka/data/recovery-point-offset-checkpoint]: x\n", "corrupt-checkpoint-file"},
	}
	for _, tc := range cases {
		got := Default().Diagnose(Snapshot{Log: tc.log})
		if len(got) == 0 || got[0].Class != tc.class {
			t.Errorf("%s: first finding %v, want %s", tc.name, ruleIDs(got), tc.class)
		}
	}
}

// The JVM prints OS errors in the node's locale; fd exhaustion at accept is
// recognised by the exception class and the accept frames or Kafka's
// acceptor line, whatever the words (synthetic lines).
func TestLocalizedOSErrors(t *testing.T) {
	cases := []struct{ name, log string }{
		{"German, accept frames", "java.io.IOException: Zu viele offene Dateien\n\tat java.base/sun.nio.ch.Net.accept(Native Method)\n\tat kafka.network.Acceptor.accept(SocketServer.scala:715)\n"},
		{"Chinese, JDK 8 frames", "java.io.IOException: 打开的文件过多\n\tat sun.nio.ch.ServerSocketChannelImpl.accept0(Native Method)\n"},
		{"Chinese, Kafka's acceptor line", "[2025-01-01 00:00:00,000] ERROR [SocketServer listenerType=BROKER, nodeId=1] Error while accepting connection (kafka.network.DataPlaneAcceptor)\njava.io.IOException: 打开的文件过多\n"},
		{"English", "java.io.IOException: Too many open files\n"},
	}
	for _, tc := range cases {
		got := Default().Diagnose(Snapshot{Log: tc.log})
		if len(got) == 0 || got[0].Class != "fd-limit" {
			t.Errorf("%s: first finding %v, want fd-limit", tc.name, ruleIDs(got))
		}
	}
}

// ZooKeeper's exception surfaces as KeeperException$NodeExistsException
// without a path; the registration frames identify it (synthetic lines in
// the shape of KafkaZkClient's stack).
func TestZooKeeperNodeExistsWithoutPath(t *testing.T) {
	log := "[2025-01-01 00:00:00,000] ERROR Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)\n" +
		"org.apache.zookeeper.KeeperException$NodeExistsException: KeeperErrorCode = NodeExists\n" +
		"\tat org.apache.zookeeper.KeeperException.create(KeeperException.java:126)\n" +
		"\tat kafka.zk.KafkaZkClient$CheckedEphemeral.getAfterNodeExists(KafkaZkClient.scala:1904)\n" +
		"\tat kafka.zk.KafkaZkClient.checkedEphemeralCreate(KafkaZkClient.scala:1842)\n" +
		"\tat kafka.zk.KafkaZkClient.registerBroker(KafkaZkClient.scala:96)\n"
	got := Default().Diagnose(Snapshot{Log: log})
	if len(got) == 0 || got[0].Class != "zk-broker-id-already-registered" {
		t.Fatalf("first finding %v", ruleIDs(got))
	}
}

// TestSourcesPerClass measures, per failure class, how many distinct log
// patterns the rules hold and how many of them cite the program text they
// were read from (rules.yaml "sources"); run it with -v to see the table.
// It fails if a source entry names no program file or the citations shrink
// below what the knowledge base has today.
func TestSourcesPerClass(t *testing.T) {
	patterns := map[string]map[string]bool{}
	sources := map[string]map[Source]bool{}
	for _, r := range Default().Rules() {
		c := r.ClassID()
		if patterns[c] == nil {
			patterns[c], sources[c] = map[string]bool{}, map[Source]bool{}
		}
		for _, p := range append(append([]string{}, r.Match.All...), r.Match.Any...) {
			patterns[c][p] = true
		}
		for _, s := range r.Sources {
			if !strings.Contains(s.From, "/") {
				t.Errorf("rule %s: source %q names no file", r.ID, s.From)
			}
			sources[c][s] = true
		}
	}
	ids := failureClassIDs(t)
	total := 0
	for _, c := range ids {
		t.Logf("| %s | %d patterns | %d cited sources |", c, len(patterns[c]), len(sources[c]))
		total += len(sources[c])
	}
	t.Logf("total cited sources: %d", total)
	if total < 96 {
		t.Errorf("only %d cited sources, the knowledge base had 96", total)
	}
}
