// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package catalog

import (
	"strings"
)

// origin maps where a message comes from to a failure class (the ids of
// internal/diagnose/rules.yaml). Entries are tried in order; the first that
// fits wins, so specific entries come before general ones.
//
//   - Thrower: a package or class prefix of the throwing/logging class
//     ("kafka.zk" covers kafka.zk.KafkaZkClient); "" is any.
//   - Exception: the exception's simple or qualified name; "" is any.
//   - Text: a literal of the template that singles out one site of a class
//     that throws for several reasons (for example MetaPropertiesEnsemble,
//     which throws RuntimeException for a missing, a foreign and a mismatched
//     meta.properties); "" is every site. ClassFor ignores entries with Text.
//   - Kinds: template kinds the entry is for; empty is all.
//
// Every entry says why in Why.
type origin struct {
	Thrower   string
	Exception string
	Text      string
	Kinds     []string
	Class     string
	// Defers marks a terminal event whose class is its cause's ("Fatal
	// error during KafkaServer startup"): Class stays "" on purpose.
	Defers bool
	Why    string
}

// The table. Reviewed by hand; see docs/CATALOGUE.md for how much of each
// release it covers.
var origins = []origin{
	// --- terminal events: the process is going down; the cause decides
	{Thrower: "kafka.Kafka", Kinds: []string{KindLogFatal, KindLogError}, Defers: true,
		Why: "kafka.Kafka's last words (Exiting Kafka due to fatal exception...); the exception logged with it is the cause"},
	{Thrower: "kafka.server.KafkaServer", Text: "Fatal error during", Defers: true,
		Why: "KafkaServer.startup's catch-all; the exception logged with it is the cause"},
	{Thrower: "kafka.server.KafkaServerStartable", Text: "Fatal error during", Defers: true,
		Why: "KafkaServerStartable.startup's catch-all (before 2.8); the exception logged with it is the cause"},
	{Thrower: "kafka.server.BrokerServer", Text: "Fatal error during", Defers: true,
		Why: "BrokerServer.startup's catch-all (KRaft); the exception logged with it is the cause"},
	{Thrower: "kafka.server.ControllerServer", Text: "Fatal error during", Defers: true,
		Why: "ControllerServer.startup's catch-all (KRaft); the exception logged with it is the cause"},
	{Thrower: "kafka.server.KafkaRaftServer", Text: "Fatal error during", Defers: true,
		Why: "KafkaRaftServer.startup's catch-all; the exception logged with it is the cause"},
	{Thrower: "kafka.server.SharedServer", Text: "Got exception while starting SharedServer", Defers: true,
		Why: "SharedServer.start's catch-all (KRaft); the exception logged with it is the cause"},
	{Thrower: "kafka.raft", Text: "Unexpected error in raft IO thread", Defers: true,
		Why: "the raft IO thread's fatal fault (3.4+); the exception is the cause"},
	{Thrower: "org.apache.kafka.raft", Text: "Unexpected error in raft IO thread", Defers: true,
		Why: "the raft IO thread's fatal fault (4.x); the exception is the cause"},
	{Thrower: "org.apache.kafka.server.util.ShutdownableThread", Text: "fatal error", Defers: true,
		Why: "a server thread stopped on a fatal error; the exception is the cause"},
	{Thrower: "kafka.utils.ShutdownableThread", Text: "fatal error", Defers: true,
		Why: "a server thread stopped on a fatal error; the exception is the cause"},
	{Thrower: "org.apache.kafka.storage.internals.log.RemoteStorageThreadPool", Defers: true,
		Why: "the remote storage thread pool stops the server on a fatal error; the exception is the cause"},
	{Thrower: "kafka.log.LogManager", Text: "There was an error in one of the threads during logs loading", Defers: true,
		Why: "LogManager.loadLogs wraps the loading thread's exception; that exception is the cause"},
	{Thrower: "kafka.server.KafkaServerStartable", Text: "Exiting Kafka", Defers: true,
		Why: "KafkaServerStartable's last line (before 2.8); the exception logged before is the cause"},
	{Thrower: "org.apache.zookeeper.server", Text: "Severe unrecoverable error", Defers: true,
		Why: "a ZooKeeper server thread's fatal error; the exception logged with it is the cause"},
	{Thrower: "org.apache.zookeeper.server", Text: "Unexpected exception, exiting abnormally", Defers: true,
		Why: "ZooKeeperServerMain/QuorumPeerMain's catch-all; the exception logged with it is the cause"},
	{Thrower: "org.apache.zookeeper.util.ServiceUtils", Defers: true,
		Why: "ZooKeeper's exit helper; the line before says why"},
	{Thrower: "org.apache.kafka.server.fault.ProcessTerminatingFaultHandler", Defers: true,
		Why: "the fault handler's own line; the fault message and exception are the cause"},
	{Thrower: "org.apache.kafka.server.fault.LoggingFaultHandler", Defers: true,
		Why: "the fault handler's own line; the fault message and exception are the cause"},

	// --- identity and formatting (meta.properties)
	{Exception: "InconsistentClusterIdException", Class: "cluster-id-mismatch",
		Why: "thrown only when meta.properties' cluster.id differs from ZooKeeper's /cluster/id"},
	{Exception: "InconsistentBrokerIdException", Class: "node-id-mismatch",
		Why: "thrown only when meta.properties' broker.id differs from the configured one"},
	{Exception: "InconsistentNodeIdException", Class: "node-id-mismatch",
		Why: "thrown only when meta.properties' node.id differs from the configured one"},
	{Thrower: "org.apache.kafka.metadata.properties", Text: "cluster.id", Class: "cluster-id-mismatch",
		Why: "MetaPropertiesEnsemble.verify: the stored cluster.id differs from the expected one (3.7+)"},
	{Thrower: "org.apache.kafka.metadata.properties", Text: "node id", Class: "node-id-mismatch",
		Why: "MetaPropertiesEnsemble.verify: the stored node id differs from the configured one (3.7+)"},
	{Thrower: "org.apache.kafka.metadata.properties", Text: "No readable meta.properties", Class: "storage-not-formatted",
		Why: "MetaPropertiesEnsemble.verify: no log dir was formatted (3.7+)"},
	{Thrower: "org.apache.kafka.metadata.properties", Text: "not formatted", Class: "storage-not-formatted",
		Why: "MetaPropertiesEnsemble: a log dir has no meta.properties"},
	{Thrower: "kafka.server.KafkaRaftServer", Text: "meta.properties", Class: "storage-not-formatted",
		Why: "KafkaRaftServer.initializeLogDirs (3.0-3.6): log dirs without a readable meta.properties"},
	{Thrower: "kafka.server.BrokerMetadataCheckpoint", Text: "cluster.id", Class: "cluster-id-mismatch",
		Why: "BrokerMetadataCheckpoint: meta.properties of the log dirs disagree on the cluster id"},
	{Thrower: "kafka.server.BrokerMetadataCheckpoint", Text: "node.id", Class: "node-id-mismatch",
		Why: "BrokerMetadataCheckpoint: meta.properties of the log dirs disagree on the node id"},
	{Thrower: "kafka.server.BrokerMetadataCheckpoint", Text: "broker.id", Class: "node-id-mismatch",
		Why: "BrokerMetadataCheckpoint: meta.properties of the log dirs disagree on the broker id"},

	// --- KRaft
	{Exception: "UnexpectedAppendOffsetException", Class: "metadata-log-offset-mismatch",
		Why: "a follower cannot append a batch below its log end; fatal in the raft IO thread (KafkaMetadataLog)"},
	{Thrower: "org.apache.kafka.raft.QuorumState", Text: "voter set", Class: "kraft-voter-set-mismatch",
		Why: "QuorumState.initialize: configured voters differ from the quorum-state file"},
	{Thrower: "org.apache.kafka.raft.QuorumConfig", Class: "config-error",
		Why: "QuorumConfig parses controller.quorum.* settings"},
	{Thrower: "org.apache.kafka.raft.RaftConfig", Class: "config-error",
		Why: "RaftConfig parses controller.quorum.* settings (before QuorumConfig)"},
	{Thrower: "org.apache.kafka.snapshot", Class: "metadata-snapshot-unreadable",
		Why: "snapshot readers and writers of __cluster_metadata-0/*.checkpoint"},
	{Thrower: "org.apache.kafka.server.common.MetadataVersion", Class: "metadata-version-unsupported",
		Why: "MetadataVersion: a metadata.version level this binary does not know"},
	{Thrower: "org.apache.kafka.image.loader", Class: "metadata-log-replay-fault",
		Why: "MetadataLoader replays the metadata log into the image; its faults are replay faults"},
	{Thrower: "org.apache.kafka.image", Class: "metadata-log-replay-fault",
		Why: "metadata image deltas fail when a record does not apply to the image"},
	{Thrower: "org.apache.kafka.controller.FeatureControlManager", Text: "only supports versions", Class: "metadata-version-unsupported",
		Why: "FeatureControlManager replays a FeatureLevelRecord above what this controller supports (a binary downgrade)"},
	{Thrower: "org.apache.kafka.controller.ClusterControlManager", Text: "finalized version", Class: "metadata-version-unsupported",
		Why: "ClusterControlManager refuses a broker that does not support the finalized metadata.version"},
	{Thrower: "org.apache.kafka.controller.FeatureControlManager", Text: "metadata.version", Class: "metadata-version-unsupported",
		Why: "FeatureControlManager rejects a metadata.version outside the supported range"},
	{Thrower: "org.apache.kafka.controller", Kinds: []string{KindFault}, Class: "metadata-log-replay-fault",
		Why: "QuorumController's fault handler calls: records that fail to replay on the active or standby controller"},
	{Thrower: "kafka.server.metadata", Kinds: []string{KindFault}, Class: "metadata-log-replay-fault",
		Why: "broker metadata publishers' fault handler calls: a metadata delta that fails to apply"},
	{Thrower: "kafka.raft.KafkaMetadataLog", Class: "metadata-log-offset-mismatch",
		Why: "KafkaMetadataLog: the local __cluster_metadata-0 does not fit what the leader sends"},

	// --- ZooKeeper
	{Thrower: "kafka.zk.KafkaZkClient", Exception: "NodeExistsException", Class: "zk-broker-id-already-registered",
		Why: "registering the broker's ephemeral znode found one already there"},
	{Thrower: "kafka.zk", Text: "already exists", Class: "zk-broker-id-already-registered",
		Why: "KafkaZkClient/ZkData: creating the broker's ephemeral znode found an existing one"},
	{Exception: "ZooKeeperClientTimeoutException", Class: "zookeeper-unreachable",
		Why: "the ZooKeeper session could not be established in zookeeper.connection.timeout.ms"},
	{Exception: "ZooKeeperClientAuthFailedException", Class: "sasl-config-error",
		Why: "the ZooKeeper client's SASL authentication failed"},
	{Thrower: "kafka.zookeeper", Class: "zookeeper-unreachable",
		Why: "ZooKeeperClient: the session to ZooKeeper"},
	{Thrower: "org.apache.jute", Text: "Unreasonable length", Class: "zookeeper-data-corrupt",
		Why: "jute refuses a record length past jute.maxbuffer: a corrupt transaction log or snapshot when ZooKeeper loads its data"},
	{Exception: "NodeExistsException", Thrower: "kafka.zk", Class: "zk-broker-id-already-registered",
		Why: "a znode Kafka creates at registration (/brokers/ids/N) already exists"},
	{Thrower: "org.apache.zookeeper.server.persistence", Class: "zookeeper-data-corrupt",
		Why: "ZooKeeper server's transaction log and snapshot files"},
	{Thrower: "org.apache.zookeeper.server.quorum.QuorumPeer", Text: "snapshot", Class: "zookeeper-data-corrupt",
		Why: "QuorumPeer loading its data tree from disk"},
	{Thrower: "org.apache.zookeeper.client", Class: "zookeeper-unreachable",
		Why: "ZooKeeper client connection and host resolution"},
	{Thrower: "org.apache.zookeeper.ClientCnxn", Class: "zookeeper-unreachable",
		Why: "ZooKeeper client connection"},
	{Thrower: "org.apache.zookeeper.common.X509Util", Class: "tls-config-error",
		Why: "ZooKeeper's TLS key and trust stores"},
	{Thrower: "org.apache.zookeeper.common", Text: "KeyStore", Class: "tls-config-error",
		Why: "ZooKeeper's key/trust store loaders"},
	{Thrower: "org.apache.zookeeper.Login", Class: "sasl-config-error",
		Why: "ZooKeeper client's JAAS login"},
	{Thrower: "org.apache.zookeeper.SaslClient", Class: "sasl-config-error",
		Why: "ZooKeeper client's SASL setup"},
	{Thrower: "org.apache.zookeeper.client.ZooKeeperSaslClient", Class: "sasl-config-error",
		Why: "ZooKeeper client's SASL setup"},
	{Thrower: "kafka.zk.KafkaZkClient", Text: "cluster id", Class: "cluster-id-mismatch",
		Why: "KafkaZkClient reading /cluster/id"},
	{Thrower: "kafka.common.ZkNodeChangeNotificationListener", Text: "zookeeper", Class: "zookeeper-unreachable",
		Why: "no ZooKeeper session could be established"},
	{Thrower: "kafka.server.KafkaHealthcheck", Text: "zookeeper", Class: "zookeeper-unreachable",
		Why: "no ZooKeeper session could be established (before 2.0)"},
	{Thrower: "org.apache.zookeeper.server", Text: "datadir", Class: "zookeeper-data-corrupt",
		Why: "ZooKeeperServerMain/QuorumPeerMain cannot load its data dir (an operating-system text in the cause wins)"},
	{Thrower: "org.apache.zookeeper.server.quorum.QuorumPeerMain", Text: "Invalid config", Class: "config-error",
		Why: "the ZooKeeper server's zoo.cfg is invalid"},
	{Thrower: "org.apache.zookeeper.server.ZooKeeperServerMain", Text: "Invalid arguments", Class: "config-error",
		Why: "the ZooKeeper server's command line or zoo.cfg is invalid"},
	{Thrower: "org.apache.zookeeper.server.ZooKeeperServerMain", Text: "Invalid config", Class: "config-error",
		Why: "the ZooKeeper server's zoo.cfg is invalid"},
	{Thrower: "kafka.server.KafkaServer", Text: "KRaft metadata log", Class: "zk-kraft-migration-stalled",
		Why: "a ZooKeeper-mode broker in migration waits for the KRaft metadata log"},
	{Thrower: "kafka.zk.migration", Class: "zk-kraft-migration-stalled",
		Why: "the ZooKeeper side of the ZK to KRaft migration"},
	{Thrower: "org.apache.kafka.metadata.migration", Class: "zk-kraft-migration-stalled",
		Why: "KRaftMigrationDriver: the ZK to KRaft migration"},

	// --- security
	{Thrower: "org.apache.kafka.common.security.JaasContext", Class: "sasl-config-error",
		Why: "JaasContext loads the JAAS configuration of a listener"},
	{Thrower: "org.apache.kafka.common.security.JaasUtils", Class: "sasl-config-error",
		Why: "JaasUtils reads java.security.auth.login.config"},
	{Thrower: "org.apache.kafka.common.security.JaasConfig", Class: "sasl-config-error",
		Why: "JaasConfig parses sasl.jaas.config"},
	{Thrower: "org.apache.kafka.common.security.authenticator.LoginManager", Class: "sasl-config-error",
		Why: "LoginManager performs the JAAS login of a listener"},
	{Thrower: "org.apache.kafka.common.security.authenticator.AbstractLogin", Class: "sasl-config-error",
		Why: "AbstractLogin: the JAAS login context"},
	{Thrower: "org.apache.kafka.common.security.kerberos", Class: "sasl-config-error",
		Why: "Kerberos login (keytab, principal)"},
	// PLAIN, SCRAM and OAUTHBEARER: the broker's own login modules and their
	// configuration; their SASL servers' "authentication failed" texts are
	// one client's bad credentials, not the broker's configuration, so the
	// packages are not mapped as a whole.
	{Thrower: "org.apache.kafka.common.security.plain.PlainLoginModule", Class: "sasl-config-error",
		Why: "the PLAIN login module of a listener's JAAS configuration"},
	{Thrower: "org.apache.kafka.common.security.scram.ScramLoginModule", Class: "sasl-config-error",
		Why: "the SCRAM login module of a listener's JAAS configuration"},
	{Thrower: "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", Class: "sasl-config-error",
		Why: "the OAUTHBEARER login module of a listener's JAAS configuration"},
	{Thrower: "org.apache.kafka.common.security.oauthbearer.internals.secured.ConfigurationUtils", Class: "sasl-config-error",
		Why: "OAUTHBEARER's checks of its sasl.oauthbearer.* settings"},
	{Thrower: "org.apache.kafka.common.security.ssl", Class: "tls-config-error",
		Why: "SslFactory, DefaultSslEngineFactory, SslEngineBuilder: key and trust stores, protocols"},
	{Thrower: "org.apache.kafka.common.network.SslChannelBuilder", Class: "tls-config-error",
		Why: "SslChannelBuilder configures the SSL factory of a listener"},
	{Thrower: "org.apache.kafka.common.security", Exception: "ConfigException", Class: "sasl-config-error",
		Why: "a ConfigException from the (non-SSL, matched above) security code: a SASL/JAAS setting is invalid"},
	{Thrower: "org.apache.kafka.common.network.SaslChannelBuilder", Class: "sasl-config-error",
		Why: "SaslChannelBuilder sets up a listener's SASL mechanisms and JAAS login"},
	{Thrower: "org.apache.kafka.common.security.authenticator.SaslServerCallbackHandler", Class: "sasl-config-error",
		Why: "the SASL server callback handler's configuration"},
	{Thrower: "org.apache.kafka.common.security.authenticator.SaslClientCallbackHandler", Class: "sasl-config-error",
		Why: "the SASL client callback handler's configuration"},
	{Thrower: "kafka.security.authorizer", Exception: "ConfigException", Class: "config-error",
		Why: "authorizer configuration"},
	{Exception: "ClusterAuthorizationException", Thrower: "kafka.server", Class: "kraft-controller-authz-denied",
		Why: "the broker's own requests to the controller were denied (principal missing from super.users)"},

	// --- log layer
	{Exception: "InvalidOffsetException", Thrower: "kafka.log", Class: "corrupt-log-segment",
		Why: "offsets in a segment are out of order (thrown by the index while recovering the segment, so before the index entries)"},
	{Thrower: "kafka.log", Text: "Could not read file", Class: "data-dir-permission-denied",
		Why: "Log/LogLoader check File.canRead on the files of a log dir (a __cluster_metadata-0 snapshot is refined by value)"},
	{Thrower: "org.apache.kafka.storage.internals.log", Text: "Could not read file", Class: "data-dir-permission-denied",
		Why: "LogLoader (3.6+) checks File.canRead on the files of a log dir (a __cluster_metadata-0 snapshot is refined by value)"},
	{Thrower: "kafka.server", Text: "No `meta.properties` found", Class: "storage-not-formatted",
		Why: "KafkaRaftServer/BrokerMetadataCheckpoint (3.0-3.6): a log dir was never formatted"},
	{Exception: "AccessDeniedException", Class: "data-dir-permission-denied",
		Why: "java.nio.file.AccessDeniedException: the process may not read or write a path"},
	{Thrower: "kafka.log", Text: "Corrupt index found", Class: "corrupt-index",
		Why: "index sanity check at load (OffsetIndex/TimeIndex sanityCheck)"},
	{Thrower: "org.apache.kafka.storage.internals.log", Text: "Corrupt index found", Class: "corrupt-index",
		Why: "index sanity check at load (3.6+)"},
	{Thrower: "kafka.log.OffsetIndex", Class: "corrupt-index", Why: "OffsetIndex reads and checks the .index file"},
	{Thrower: "kafka.log.TimeIndex", Class: "corrupt-index", Why: "TimeIndex reads and checks the .timeindex file"},
	{Thrower: "kafka.log.AbstractIndex", Class: "corrupt-index", Why: "AbstractIndex maps and resizes index files"},
	{Thrower: "kafka.log.TransactionIndex", Class: "corrupt-index", Why: "TransactionIndex reads the .txnindex file"},
	{Thrower: "org.apache.kafka.storage.internals.log.OffsetIndex", Class: "corrupt-index", Why: "OffsetIndex (3.6+)"},
	{Thrower: "org.apache.kafka.storage.internals.log.TimeIndex", Class: "corrupt-index", Why: "TimeIndex (3.6+)"},
	{Thrower: "org.apache.kafka.storage.internals.log.AbstractIndex", Class: "corrupt-index", Why: "AbstractIndex (3.6+)"},
	{Thrower: "org.apache.kafka.storage.internals.log.TransactionIndex", Class: "corrupt-index", Why: "TransactionIndex (3.6+)"},
	{Thrower: "kafka.server.ReplicaManager", Text: "offline", Class: "log-dir-offline",
		Why: "ReplicaManager halts or stops serving when a log dir goes offline"},
	{Thrower: "kafka.server.ReplicaManager", Text: "directory failure", Class: "log-dir-offline",
		Why: "ReplicaManager cannot propagate a log dir failure and halts"},
	{Thrower: "kafka.server.ReplicaManager", Text: "highwatermark file", Class: "log-dir-offline",
		Why: "ReplicaManager halts when the high-watermark checkpoint cannot be written (disk error)"},
	{Thrower: "kafka.cluster.Partition", Text: "Error deleting the log", Class: "log-dir-offline",
		Why: "Partition halts when a log cannot be deleted (disk error)"},
	{Thrower: "kafka.server.OffsetCheckpoint", Class: "log-dir-offline",
		Why: "OffsetCheckpoint halts when the checkpoint's filesystem is inaccessible (0.10)"},
	{Thrower: "kafka.server", Text: "Disk error", Class: "log-dir-offline",
		Why: "KafkaApis/ReplicaFetcherThread: a disk error takes the log dir offline"},
	{Exception: "CorruptIndexException", Class: "corrupt-index",
		Why: "index sanity checks (OffsetIndex, TimeIndex) failed"},
	{Thrower: "kafka.log.LogManager", Text: "is not in the form of topic-partition", Class: "non-kafka-dir-in-log-dir",
		Why: "LogManager.loadLogs: a log dir holds a directory that is not a partition (lost+found is refined by value)"},
	{Thrower: "kafka.log.Log", Text: "is not in the form of topic-partition", Class: "non-kafka-dir-in-log-dir",
		Why: "Log.parseTopicPartitionName: a directory in a log dir is not a partition"},
	{Thrower: "kafka.log.UnifiedLog", Text: "is not in the form of topic-partition", Class: "non-kafka-dir-in-log-dir",
		Why: "UnifiedLog.parseTopicPartitionName: a directory in a log dir is not a partition"},
	{Thrower: "kafka.log.LocalLog", Text: "is not in the form of topic-partition", Class: "non-kafka-dir-in-log-dir",
		Why: "LocalLog.parseTopicPartitionName: a directory in a log dir is not a partition"},
	{Thrower: "org.apache.kafka.storage.internals.log", Text: "is not in the form of topic-partition", Class: "non-kafka-dir-in-log-dir",
		Why: "LocalLog.parseTopicPartitionName (4.x): a directory in a log dir is not a partition"},
	{Thrower: "kafka.utils.FileLock", Class: "log-dir-lock-held",
		Why: "FileLock: the .lock of a log dir"},
	{Thrower: "kafka.log.LogManager", Text: "lock", Class: "log-dir-lock-held",
		Why: "LogManager.lockLogDirs: another process holds the log dir's .lock"},
	{Thrower: "kafka.log.LogManager", Text: "all log dirs", Class: "log-dir-offline",
		Why: "LogManager: every log dir failed, the broker shuts down"},
	{Thrower: "kafka.log.LogManager", Text: "is offline", Class: "log-dir-offline",
		Why: "LogManager: a log dir went offline and the broker halts"},
	{Thrower: "kafka.log.LogManager", Text: "log dir", Class: "log-dir-offline",
		Why: "LogManager: log dirs failing or failing to be created"},
	{Thrower: "kafka.server.ReplicaManager", Text: "log dir", Class: "log-dir-offline",
		Why: "ReplicaManager.handleLogDirFailure: partitions of a failed log dir are taken offline"},
	{Thrower: "kafka.server.LogDirFailureChannel", Class: "log-dir-offline",
		Why: "LogDirFailureChannel reports a log dir that failed"},
	{Thrower: "org.apache.kafka.storage.internals.log.LogDirFailureChannel", Class: "log-dir-offline",
		Why: "LogDirFailureChannel reports a log dir that failed (4.x)"},
	{Exception: "KafkaStorageException", Class: "log-dir-offline",
		Why: "KafkaStorageException: an I/O error took a log dir offline; the root cause (OS text) decides when present"},
	{Exception: "LogDirNotFoundException", Class: "log-dir-offline",
		Why: "a log dir is not (or no longer) there"},
	{Exception: "CorruptRecordException", Class: "corrupt-log-segment",
		Why: "a record batch of a segment fails its checks"},
	{Exception: "InvalidRecordException", Thrower: "kafka.log", Class: "corrupt-log-segment",
		Why: "a segment's records are invalid while the log reads them"},
	{Thrower: "kafka.log.LogSegment", Class: "corrupt-log-segment",
		Why: "LogSegment reads and recovers segment files"},
	{Thrower: "org.apache.kafka.storage.internals.log.LogSegment", Class: "corrupt-log-segment",
		Why: "LogSegment reads and recovers segment files (3.6+)"},
	{Thrower: "kafka.server.checkpoints", Class: "corrupt-checkpoint-file",
		Why: "checkpoint files (replication-offset-checkpoint, recovery-point-offset-checkpoint...)"},
	{Thrower: "org.apache.kafka.server.common.CheckpointFile", Class: "corrupt-checkpoint-file",
		Why: "CheckpointFile reads and writes checkpoint files"},
	{Thrower: "org.apache.kafka.storage.internals.checkpoint", Class: "corrupt-checkpoint-file",
		Why: "checkpoint files (3.6+)"},
	{Thrower: "kafka.server.checkpoints.LeaderEpochCheckpointFile", Class: "corrupt-checkpoint-file",
		Why: "leader-epoch-checkpoint"},
	{Thrower: "kafka.server.ReplicaFetcherThread", Text: "truncation", Class: "replica-log-divergence-fatal",
		Why: "a replica would truncate below the high watermark with unclean election off; the broker exits"},
	{Thrower: "kafka.log.LogCleaner", Exception: "NoSuchFileException", Class: "unsupported-filesystem",
		Why: "the cleaner's .cleaned files vanish on filesystems without POSIX rename semantics"},
	{Thrower: "kafka.log.Cleaner", Exception: "NoSuchFileException", Class: "unsupported-filesystem",
		Why: "Cleaner (in LogCleaner.scala): its .cleaned files vanish on filesystems without POSIX rename semantics"},
	{Thrower: "org.apache.kafka.storage.internals.log.Cleaner", Exception: "NoSuchFileException", Class: "unsupported-filesystem",
		Why: "Cleaner (4.x): its .cleaned files vanish on filesystems without POSIX rename semantics"},

	// --- tiered storage
	// Tiered storage: its configuration and the start of its metadata
	// manager; the remote log manager's runtime errors (one segment, one
	// fetch) are not a configuration class, so the packages are not mapped
	// as a whole.
	{Thrower: "org.apache.kafka.server.log.remote", Exception: "ConfigException", Class: "tiered-storage-config-error",
		Why: "a remote.log.* / rlmm setting is invalid"},
	{Thrower: "org.apache.kafka.server.log.remote.storage.RemoteLogManagerConfig", Class: "tiered-storage-config-error",
		Why: "RemoteLogManagerConfig validates the remote.log.* settings"},
	{Thrower: "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManagerConfig", Class: "tiered-storage-config-error",
		Why: "the topic-based remote log metadata manager's settings"},
	{Thrower: "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager", Text: "initializ", Class: "tiered-storage-config-error",
		Why: "the remote log metadata manager could not start (its topic, producer or consumer): configuration or ACLs"},
	{Thrower: "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager", Text: "creating", Class: "tiered-storage-config-error",
		Why: "the remote log metadata topic could not be created: configuration or ACLs"},
	{Thrower: "org.apache.kafka.server.log.remote.storage.ClassLoaderAwareRemoteStorageManager", Class: "tiered-storage-config-error",
		Why: "loads and configures the remote storage plugin: what it throws at the top is the plugin's configuration failing"},
	{Thrower: "org.apache.kafka.server.log.remote.storage.ClassLoaderAwareRemoteLogMetadataManager", Class: "tiered-storage-config-error",
		Why: "loads and configures the remote log metadata plugin"},
	{Thrower: "kafka.log.remote.RemoteLogManager", Text: "not configured", Class: "tiered-storage-config-error",
		Why: "remote storage is enabled without a RemoteLogManager (3.6-3.9)"},
	{Thrower: "org.apache.kafka.server.log.remote.storage.RemoteLogManager", Text: "not configured", Class: "tiered-storage-config-error",
		Why: "remote storage is enabled without a RemoteLogManager"},

	// --- network and listeners
	{Thrower: "kafka.network.SocketServer", Text: "bind", Class: "port-in-use",
		Why: "SocketServer could not bind a listener port (the OS text refines to a bad address)"},
	{Thrower: "kafka.network.Acceptor", Text: "bind", Class: "port-in-use",
		Why: "Acceptor could not bind a listener port"},
	{Thrower: "kafka.network", Text: "Too many open files", Class: "fd-limit",
		Why: "the acceptor loop failed on EMFILE"},
	{Thrower: "kafka.zk.KafkaZkClient", Text: "advertised", Class: "advertised-listener-conflict",
		Why: "another broker registered the same advertised endpoints"},
	{Thrower: "kafka.server.KafkaServer", Text: "are already registered by broker", Class: "advertised-listener-conflict",
		Why: "KafkaServer.checkpointBrokerMetadata...: advertised endpoints already registered by another broker"},
	{Thrower: "kafka.server.KafkaServer", Text: "already registered", Class: "advertised-listener-conflict",
		Why: "KafkaServer: advertised endpoints already registered by another broker"},

	// --- configuration
	{Exception: "ConfigException", Class: "config-error",
		Why: "ConfigException is thrown by ConfigDef validation, KafkaConfig and every config parser"},
	{Thrower: "org.apache.kafka.common.config", Class: "config-error",
		Why: "ConfigDef, AbstractConfig and the validators"},
	{Thrower: "kafka.server.KafkaConfig", Class: "config-error",
		Why: "KafkaConfig validation (require(...) and its own checks)"},
	{Thrower: "org.apache.kafka.server.config", Class: "config-error",
		Why: "the broker's config classes (3.7+)"},
	{Thrower: "kafka.server.DynamicBrokerConfig", Class: "config-error",
		Why: "DynamicBrokerConfig validates dynamic broker configs"},
	{Thrower: "kafka.utils.CoreUtils", Text: "listener", Class: "config-error",
		Why: "CoreUtils.listenerListToEndPoints parses listeners"},
	{Thrower: "kafka.cluster.EndPoint", Class: "config-error",
		Why: "EndPoint parses listener strings"},
	{Exception: "InvalidConfigurationException", Class: "config-error",
		Why: "InvalidConfigurationException: a config value is not acceptable"},
	{Thrower: "kafka.Kafka", Kinds: []string{KindStderr}, Class: "config-error",
		Why: "kafka.Kafka's usage message: the properties file argument is missing or wrong"},
	{Thrower: "kafka.docker", Class: "config-error",
		Why: "the official image's wrapper turns environment variables into server.properties"},
	{Thrower: "apache/kafka:bin/kafka-run-class.sh", Text: "Classpath is empty", Class: "kafka-classpath-broken",
		Why: "kafka-run-class.sh found no jars under libs/"},
	{Thrower: "apache/kafka:bin/kafka-run-class.sh", Text: "USAGE", Class: "config-error",
		Why: "kafka-run-class.sh's usage: called without a main class"},
	{Thrower: "kafka.utils.CommandLineUtils", Class: "config-error",
		Why: "the command line of kafka.Kafka or StorageTool is wrong (missing or conflicting arguments)"},
	{Thrower: "org.apache.kafka.server.util.CommandLineUtils", Class: "config-error",
		Why: "the command line of kafka.Kafka or StorageTool is wrong (4.x)"},
	{Thrower: "apache/kafka:bin/kafka-server-start.sh", Class: "config-error",
		Why: "kafka-server-start.sh's usage: no server.properties given"},
	{Thrower: "bitnami:", Kinds: []string{KindScript}, Text: "certificate", Class: "tls-config-error",
		Why: "Bitnami's validation of the TLS key/trust stores the listeners need"},
	{Thrower: "bitnami:", Kinds: []string{KindScript}, Text: "certs", Class: "tls-config-error",
		Why: "Bitnami's validation of the TLS key/trust stores the listeners need"},
	{Thrower: "bitnami:", Kinds: []string{KindScript}, Text: "SASL", Class: "sasl-config-error",
		Why: "Bitnami's validation of SASL users, passwords and mechanisms"},
	{Thrower: "bitnami:", Kinds: []string{KindScript}, Text: "ALLOW_PLAINTEXT_LISTENER", Class: "config-error",
		Why: "Bitnami refuses plaintext listeners unless ALLOW_PLAINTEXT_LISTENER=yes"},
	{Thrower: "bitnami:libkafka.sh", Kinds: []string{KindScript}, Class: "config-error",
		Why: "libkafka.sh's kafka_validate: the environment's configuration is inconsistent"},
	{Thrower: "strimzi:kafka_tls_prepare_certificates.sh", Class: "tls-config-error",
		Why: "Strimzi's script that builds the broker's key and trust stores"},
	{Thrower: "strimzi:kafka_config_generator.sh", Class: "config-error",
		Why: "Strimzi's script that writes server.properties"},
	{Thrower: "confluent:configure", Class: "config-error",
		Why: "Confluent's configure step checks the KAFKA_* environment"},
	{Thrower: "confluent:dub.py", Text: "is required", Class: "config-error",
		Why: "dub ensure: a required environment variable is missing"},
	{Thrower: "confluent:dub.py", Text: "does not exist", Class: "config-error",
		Why: "dub path: a configured path is missing"},
	{Thrower: "org.apache.kafka.metadata.properties.MetaPropertiesEnsemble", Text: "I/O error", Class: "storage-io-error",
		Why: "MetaPropertiesEnsemble: the metadata log dir could not be read (an operating-system text in the cause wins)"},
	{Thrower: "org.apache.kafka.metadata.storage.Formatter", Class: "storage-not-formatted",
		Why: "kafka-storage format (3.8+) failed, so the node starts with unformatted log dirs"},
	{Thrower: "kafka.tools.StorageTool", Kinds: []string{KindThrow, KindRequire, KindException, KindStderr}, Class: "storage-not-formatted",
		Why: "kafka-storage format failed (bad cluster id, node.id, release version, SCRAM or quorum arguments), so the node starts with unformatted log dirs"},
	{Thrower: "kafka.tools.StorageTool", Text: "already formatted", Class: "storage-not-formatted",
		Why: "StorageTool format: a log dir was already formatted (the format step failed)"},
	{Thrower: "kafka.tools.StorageTool", Text: "cluster", Class: "storage-not-formatted",
		Why: "StorageTool: the cluster id given to format is not valid"},
}

// ClassFor returns the failure class of an exception thrown by thrower (a
// fully qualified class, a frame's class), or "" when the mapping has none.
// Entries that single out a site by its text are not used.
func (c *Catalog) ClassFor(exception, thrower string) string {
	for _, o := range origins {
		if o.Text != "" || len(o.Kinds) > 0 || o.Defers {
			continue
		}
		if o.fits(exception, thrower) {
			return o.Class
		}
	}
	return ""
}

func (o *origin) fits(exception, thrower string) bool {
	if strings.HasSuffix(o.Thrower, ":") {
		if !strings.HasPrefix(thrower, o.Thrower) {
			return false
		}
	} else if o.Thrower != "" && thrower != o.Thrower && !strings.HasPrefix(thrower, o.Thrower+".") && !strings.HasPrefix(thrower, o.Thrower+"$") {
		// a class prefix also covers its inner and companion classes
		if !(strings.HasPrefix(thrower, o.Thrower) && len(thrower) > len(o.Thrower) && !isWordByte(thrower[len(o.Thrower)])) {
			return false
		}
	}
	if o.Exception != "" {
		if exception == "" {
			return false
		}
		if strings.Contains(o.Exception, ".") {
			if exception != o.Exception {
				return false
			}
		} else if simpleName(exception) != o.Exception {
			return false
		}
	}
	return true
}

// simpleName drops the package and any outer class (KeeperException$NodeExistsException).
func simpleName(qualified string) string {
	s := qualified[strings.LastIndexByte(qualified, '.')+1:]
	return s[strings.LastIndexByte(s, '$')+1:]
}

// classifyTemplate gives a template its class from its origin (or, for the
// hand-listed kinds, from the hand list), with the entry's reason; defers is
// true for a terminal event whose class is its cause's.
func classifyTemplate(t *Template) (class, why string, defers bool) {
	if hc, ok := handClasses[t.ID]; ok {
		t.Wanted = hc.Wanted
		return hc.Class, hc.Why, hc.Defers
	}
	for i := range origins {
		o := &origins[i]
		if len(o.Kinds) > 0 && !contains(o.Kinds, t.Kind) {
			continue
		}
		if o.Text != "" && !strings.Contains(t.Text, o.Text) {
			continue
		}
		if o.fits(t.Exception, t.Thrower) {
			return o.Class, o.Why, o.Defers
		}
	}
	return "", "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// handClass is the class of a hand-listed template (JVM, OS, scripts).
type handClass struct {
	Class, Why, Wanted string
	Defers             bool
}

// handClasses is filled from the hand lists at init (handlist.go).
var handClasses = map[string]handClass{}

// osCauses are operating-system error texts (glibc strerror, as Java puts
// them in IOException messages) that decide the class wherever they appear:
// the volume is full whatever Kafka was writing when it noticed.
var osCauses = []struct {
	Text  string
	Class string
	Why   string
}{
	{"No space left on device", "disk-full", "ENOSPC"},
	{"Disk quota exceeded", "disk-full", "EDQUOT"},
	{"Read-only file system", "data-dir-read-only", "EROFS: a filesystem the kernel remounted read-only after I/O errors, or one mounted read-only by mistake (the same text)"},
	{"Input/output error", "storage-io-error", "EIO"},
	{"Permission denied", "data-dir-permission-denied", "EACCES"},
	{"Operation not permitted", "data-dir-permission-denied", "EPERM"},
	{"Too many open files", "fd-limit", "EMFILE"},
	{"Map failed", "mmap-limit", "FileChannelImpl.map: mmap failed (vm.max_map_count)"},
	{"Cannot allocate memory", "jvm-native-memory-insufficient", "ENOMEM"},
	{"Address already in use", "port-in-use", "EADDRINUSE"},
	{"Cannot assign requested address", "listener-bind-address-invalid", "EADDRNOTAVAIL"},
	{"Stale file handle", "unsupported-filesystem", "ESTALE: an NFS file handle went stale"},
}

// OSCause returns the class of the first operating-system error text in
// message, and that text; "" when there is none.
func OSCause(message string) (class, text string) {
	for _, c := range osCauses {
		if strings.Contains(message, c.Text) {
			return c.Class, c.Text
		}
	}
	return "", ""
}

// refine narrows a template's class by a value of the occurrence where the
// class itself has a narrower member: a non-partition directory named
// lost+found is the lost-and-found-dir class; an unreadable file that is a
// KRaft snapshot is metadata-snapshot-unreadable; an OutOfMemoryError the
// JVM reports from an uncaught-exception handler is (most often) the heap.
func refine(t *Template, values []string) string {
	if t.Class == "non-kafka-dir-in-log-dir" {
		for _, v := range values {
			if strings.Contains(v, "lost+found") {
				return "lost-and-found-dir"
			}
		}
	}
	if t.Class == "data-dir-permission-denied" {
		for _, v := range values {
			if strings.Contains(v, "__cluster_metadata-0") && strings.HasSuffix(v, ".checkpoint") {
				return "metadata-snapshot-unreadable"
			}
		}
	}
	if t.Text == uncaughtHandlerText {
		for _, v := range values {
			if v == "java.lang.OutOfMemoryError" {
				return "heap-oom"
			}
		}
	}
	if t.Class == "port-in-use" {
		for _, v := range values {
			if strings.Contains(v, "Cannot assign requested address") {
				return "listener-bind-address-invalid"
			}
		}
	}
	return ""
}
