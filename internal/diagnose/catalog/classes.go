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
	Why       string
}

// The table. Reviewed by hand; see docs/CATALOGUE.md for how much of each
// release it covers.
var origins = []origin{
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
	{Thrower: "org.apache.kafka.common.security.plain", Class: "sasl-config-error",
		Why: "PLAIN login module and server callback handler"},
	{Thrower: "org.apache.kafka.common.security.scram", Class: "sasl-config-error",
		Why: "SCRAM login module and credentials"},
	{Thrower: "org.apache.kafka.common.security.oauthbearer", Class: "sasl-config-error",
		Why: "OAUTHBEARER login module, its JWKS and token endpoint configuration"},
	{Thrower: "org.apache.kafka.common.security.ssl", Class: "tls-config-error",
		Why: "SslFactory, DefaultSslEngineFactory, SslEngineBuilder: key and trust stores, protocols"},
	{Thrower: "org.apache.kafka.common.network.SslChannelBuilder", Class: "tls-config-error",
		Why: "SslChannelBuilder configures the SSL factory of a listener"},
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
	{Exception: "InvalidOffsetException", Thrower: "kafka.log", Class: "corrupt-log-segment",
		Why: "offsets in a segment are out of order"},
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

	// --- tiered storage
	{Thrower: "org.apache.kafka.server.log.remote", Class: "tiered-storage-config-error",
		Why: "remote log manager and its plugin configuration"},
	{Thrower: "kafka.log.remote", Class: "tiered-storage-config-error",
		Why: "RemoteLogManager (3.6-3.9) and its plugins"},

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
		if o.Text != "" || len(o.Kinds) > 0 {
			continue
		}
		if o.fits(exception, thrower) {
			return o.Class
		}
	}
	return ""
}

func (o *origin) fits(exception, thrower string) bool {
	if o.Thrower != "" && thrower != o.Thrower && !strings.HasPrefix(thrower, o.Thrower+".") && !strings.HasPrefix(thrower, o.Thrower+"$") {
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

func simpleName(qualified string) string {
	return qualified[strings.LastIndexByte(qualified, '.')+1:]
}

// classifyTemplate gives a template its class from its origin (or, for the
// hand-listed kinds, from the hand list), with the entry's reason.
func classifyTemplate(t *Template) (class, why string) {
	if hc, ok := handClasses[t.ID]; ok {
		return hc.Class, hc.Why
	}
	if cls, text := OSCause(t.Text); cls != "" && (t.Kind == KindOS || t.Kind == KindJVM) {
		return cls, "operating-system error text " + text
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
			return o.Class, o.Why
		}
	}
	return "", ""
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
type handClass struct{ Class, Why string }

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
	{"Read-only file system", "storage-io-error", "EROFS: the kernel remounts a filesystem read-only after I/O errors; a read-only mount by mistake shows the same text"},
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
// lost+found is the lost-and-found-dir class.
func refine(t *Template, values []string) string {
	if t.Class == "non-kafka-dir-in-log-dir" {
		for _, v := range values {
			if strings.Contains(v, "lost+found") {
				return "lost-and-found-dir"
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
