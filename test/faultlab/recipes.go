// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// exitTimeout bounds the wait for a node that should die of its fault.
const exitTimeout = 120 * time.Second

// zkOnly skips the ZooKeeper-mode recipes on releases without ZooKeeper mode.
func zkOnly(in Install) string {
	if in.ZooKeeperMode() {
		return ""
	}
	return "Kafka 4.x has no ZooKeeper mode (and ships no ZooKeeper server)"
}

// notNewest skips a recipe that needs a newer release than the one run.
func notNewest(in Install) string {
	if in.Version == NewestVersion {
		return "needs data written by a newer release than " + NewestVersion
	}
	return ""
}

// startFailing starts a Kafka node and waits for it to die of its fault.
func (s *Session) startFailing(name string, jvm JVM, props *Props) (*Proc, error) {
	p, err := s.StartKafka(name, jvm, props)
	if err != nil {
		return nil, err
	}
	return s.ended(p, exitTimeout), nil
}

// startBrokerAfterController starts the seeded controller, then the broker
// with props, and waits for the broker to die or to print one of texts.
func (s *Session) startBrokerAfterController(props *Props, jvm JVM, texts ...string) (*Proc, error) {
	if _, err := s.startController(false); err != nil {
		return nil, err
	}
	p, err := s.StartKafka("broker", jvm, props)
	if err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return s.ended(p, exitTimeout), nil
	}
	return s.endedAfter(p, exitTimeout, 5*time.Second, texts...)
}

// damagedBroker damages the seeded broker's data (stopped) with a shell
// script, then starts the controller and the broker, which runs until it
// ends or says it started (then the lab stops it).
func (s *Session) damagedBroker(script string) (*Proc, error) {
	if err := s.seeded(); err != nil {
		return nil, err
	}
	if err := s.Shell(script); err != nil {
		return nil, err
	}
	return s.startBrokerAfterController(brokerProps(s.Path("broker-data")), JVM{}, "Kafka Server started")
}

// Recipes is the lab: every fault a process can be given, once per
// release it applies to.
var Recipes = []Recipe{
	{
		Name: "unformatted-storage", Class: "storage-not-formatted", Role: diagnose.RoleCombined, Live: true,
		Fault:  "a KRaft node starts on a log dir that was never formatted",
		Expect: `meta\.properties`,
		Run: func(s *Session) (*Proc, error) {
			return s.startFailing("server", JVM{}, combinedProps(s.Path("data")))
		},
	},
	{
		Name: "meta-properties-missing", Class: "storage-not-formatted", Role: diagnose.RoleCombined,
		Fault:  "meta.properties is deleted from a formatted log dir (the metadata log stays)",
		Expect: `meta\.properties`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			if err := s.Shell("rm " + s.Path("data/meta.properties")); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "cluster-id-mismatch", Class: "cluster-id-mismatch", Role: diagnose.RoleCombined,
		Fault:  "two log dirs of one node are formatted with different cluster ids",
		Expect: `Invalid cluster\.id|InconsistentClusterIdException`,
		Run: func(s *Session) (*Proc, error) {
			a := combinedProps(s.Path("data-a"))
			b := combinedProps(s.Path("data-b"))
			if err := s.Format("format-a", a, clusterID); err != nil {
				return nil, err
			}
			if err := s.Format("format-b", b, otherClusterID); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, combinedProps(s.Path("data-a")+","+s.Path("data-b")))
		},
	},
	{
		Name: "node-id-mismatch", Class: "node-id-mismatch", Role: diagnose.RoleCombined,
		Fault:  "the log dir is formatted as node 1, the node starts as node 2",
		Expect: `Stored node id|InconsistentNodeIdException`,
		Run: func(s *Session) (*Proc, error) {
			if _, err := s.formattedCombined(); err != nil {
				return nil, err
			}
			props := combinedProps(s.Path("data")).Set("node.id", "2").Set("controller.quorum.voters", "2@"+controllerAddr)
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "lost-and-found", Class: "lost-and-found-dir", Role: diagnose.RoleCombined, Live: true,
		Fault:  "a lost+found directory (as mkfs.ext4 leaves at a volume's root) is in the log dir",
		Expect: `lost\+found`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			if err := s.Shell("mkdir -m 700 " + s.Path("data/lost+found")); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "foreign-dir", Class: "non-kafka-dir-in-log-dir", Role: diagnose.RoleCombined,
		Fault:  "another application's directory (backup/ with a file) is in the log dir",
		Expect: `Found directory`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			if err := s.Shell("mkdir " + s.Path("data/backup") + " && echo dump > " + s.Path("data/backup/db.dump")); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "lock-held", Class: "log-dir-lock-held", Role: diagnose.RoleCombined,
		Fault:  "a second node starts on the log dir of a running node (other ports)",
		Expect: `Failed to acquire lock`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			first, err := s.StartKafka("first", JVM{}, props)
			if err != nil {
				return nil, err
			}
			if err := s.Started(first, startTimeout); err != nil {
				return nil, err
			}
			second := combinedProps(s.Path("data")).
				Set("controller.quorum.voters", "1@127.0.0.1:19093").
				Set("listeners", "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093").
				Set("advertised.listeners", "PLAINTEXT://127.0.0.1:19092")
			return s.startFailing("server", JVM{}, second)
		},
	},
	{
		// Not in the live subset: on a loaded machine its broker can die first of
		// an OutOfMemoryError in the log cleaner (a 128 MiB dedupe buffer in a
		// 192 MiB heap), before it binds the held port (seen once in CI).
		Name: "port-in-use", Class: "port-in-use", Role: diagnose.RoleCombined,
		Fault:  "another process already listens on the broker listener's port",
		Expect: `(?i)address already in use`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			if _, err := s.holdPort(brokerAddr); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "listener-address-not-local", Class: "listener-bind-address-invalid", Role: diagnose.RoleCombined,
		Fault:  "the broker listener names an address no interface has (192.0.2.10, TEST-NET-1)",
		Expect: `(?i)cannot assign requested address`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			props.Set("listeners", "PLAINTEXT://192.0.2.10:9092,CONTROLLER://"+controllerAddr).
				Set("advertised.listeners", "PLAINTEXT://192.0.2.10:9092")
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "config-invalid-value", Class: "config-error", Role: diagnose.RoleCombined, Live: true,
		Fault:  "num.io.threads is not a number",
		Expect: `num\.io\.threads`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props.Set("num.io.threads", "eight"))
		},
	},
	{
		Name: "config-missing-quorum", Class: "config-error", Role: diagnose.RoleBroker,
		Fault:  "a KRaft broker has no controller.quorum.voters (nor bootstrap servers)",
		Expect: `ConfigException.*controller\.quorum`,
		Run: func(s *Session) (*Proc, error) {
			return s.startFailing("broker", JVM{}, brokerProps(s.Path("data")).Del("controller.quorum.voters"))
		},
	},
	{
		Name: "config-controller-listener-missing", Class: "config-error", Role: diagnose.RoleCombined,
		Fault:  "controller.listener.names names a listener that listeners does not have",
		Expect: `requirement failed: controller\.listener\.names`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props.Set("controller.listener.names", "CTRL").
				Set("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,CTRL:PLAINTEXT"))
		},
	},
	{
		Name: "config-broker-in-voters", Class: "config-error", Role: diagnose.RoleBroker,
		Fault:  "a broker-only node lists its own node id among the controller voters",
		Expect: `must not be included in the set of voters`,
		Run: func(s *Session) (*Proc, error) {
			props := brokerProps(s.Path("data")).Set("controller.quorum.voters", "2@"+controllerAddr)
			if err := s.Format("broker", props, clusterID); err != nil {
				// Some releases refuse to format this config; the node itself must then refuse too.
				s.Step("format refused: %v", err)
			}
			return s.startFailing("broker", JVM{}, props)
		},
	},
	{
		Name: "voters-unresolvable", Class: "kraft-quorum-no-leader", Role: diagnose.RoleBroker,
		Fault:  "the broker's controller.quorum.voters names a host no resolver knows (the sandbox has no DNS)",
		Expect: `UnknownHostException|Couldn't resolve|No resolvable`,
		Run: func(s *Session) (*Proc, error) {
			props := brokerProps(s.Path("data")).Set("controller.quorum.voters", "1@kafka-controller-0.kafka-controller-headless.kafka.svc:9093")
			if err := s.Format("broker", props, clusterID); err != nil {
				return nil, err
			}
			p, err := s.StartKafka("broker", JVM{}, props)
			if err != nil {
				return nil, err
			}
			if p.WaitExit(40 * time.Second) {
				s.Step("broker exits by itself (code %d)", p.ExitCode())
				return p, nil
			}
			p.Kill()
			s.Step("broker still runs after 40s: the lab kills it (SIGKILL)")
			return p, nil
		},
	},
	{
		Name: "sasl-jaas-missing", Class: "sasl-config-error", Role: diagnose.RoleCombined,
		Fault:  "a SASL_PLAINTEXT listener with PLAIN and no JAAS configuration at all",
		Expect: `JAAS`,
		Run: func(s *Session) (*Proc, error) {
			props, err := saslCombined(s)
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "sasl-jaas-file-missing", Class: "sasl-config-error", Role: diagnose.RoleCombined,
		Fault:  "java.security.auth.login.config points at a JAAS file that does not exist",
		Expect: `kafka_server_jaas\.conf`,
		Run: func(s *Session) (*Proc, error) {
			props, err := saslCombined(s)
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{Opts: "-Djava.security.auth.login.config=" + s.Path("secrets/kafka_server_jaas.conf")}, props)
		},
	},
	{
		Name: "tls-keystore-missing", Class: "tls-config-error", Role: diagnose.RoleCombined,
		Fault:  "an SSL listener whose ssl.keystore.location does not exist",
		Expect: `Failed to load SSL keystore|NoSuchFileException.*keystore`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, sslListener(props, s.Path("secrets/kafka.keystore.jks"), "keystore-secret"))
		},
	},
	{
		Name: "tls-keystore-wrong-password", Class: "tls-config-error", Role: diagnose.RoleCombined,
		Fault:  "an SSL listener whose keystore password is wrong",
		Expect: `Failed to load SSL keystore|(?i)keystore was tampered|password was incorrect`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			keytool, err := s.Kafka.Keytool()
			if err != nil {
				return nil, err
			}
			ks := s.Path("secrets/kafka.keystore.jks")
			if err := s.Shell(fmt.Sprintf("mkdir -p %s && %s -genkeypair -keystore %s -storetype JKS -storepass right-secret -keypass right-secret -alias broker -keyalg RSA -keysize 2048 -validity 30 -dname CN=localhost",
				filepath.Dir(ks), keytool, ks)); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, sslListener(props, ks, "wrong-secret"))
		},
	},
	{
		Name: "heap-too-small", Class: "heap-oom", Role: diagnose.RoleCombined,
		Fault:  "KAFKA_HEAP_OPTS=-Xmx16m",
		Expect: `OutOfMemoryError`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			p, err := s.StartKafka("server", JVM{Heap: "-Xmx16m"}, props)
			if err != nil {
				return nil, err
			}
			return s.endedAfter(p, exitTimeout, 10*time.Second, "OutOfMemoryError")
		},
	},
	{
		Name: "heap-above-memory-limit", Class: "jvm-native-memory-insufficient", Role: diagnose.RoleCombined,
		Fault:  "the heap (-Xms2g -Xmx2g) does not fit the process's address-space limit (prlimit --as, 1 GiB)",
		Expect: `(?i)reserve enough space|insufficient memory|Could not create the Java Virtual Machine`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{Heap: "-Xms2g -Xmx2g", AddressSpace: 1 << 30}, props)
		},
	},
	{
		Name: "fd-limit", Class: "fd-limit", Role: diagnose.RoleCombined,
		Fault:  "the open-files limit is 110 (prlimit --nofile)",
		Expect: `Too many open files`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			p, err := s.StartKafka("server", JVM{NoFile: 110}, props)
			if err != nil {
				return nil, err
			}
			return s.endedAfter(p, exitTimeout, 10*time.Second, "Too many open files")
		},
	},
	{
		Name: "jvm-option-unsupported", Class: "jvm-option-unsupported", Role: diagnose.RoleCombined,
		Fault:  "KAFKA_OPTS carries a JDK 8 GC-logging flag (-XX:+PrintGCDateStamps) that Java 17 rejects",
		Expect: `PrintGCDateStamps`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{Opts: "-XX:+PrintGCDateStamps"}, props)
		},
	},
	{
		Name: "classpath-broken", Class: "kafka-classpath-broken", Role: diagnose.RoleCombined,
		Fault:  "the JVM's class path has no Kafka jars (an empty libs/)",
		Expect: `kafka\.Kafka`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			path, err := s.WriteFile("server.properties", props.String())
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(s.Path("empty-libs"), 0o755); err != nil {
				return nil, err
			}
			argv := []string{filepath.Join(s.Kafka.Dir, "java"), "-Xmx64m", "-XX:-UsePerfData", "-cp", s.Path("empty-libs") + "/*", "kafka.Kafka", path}
			s.Step("start server: %s", strings.Join(argv, " "))
			p, err := startProc("server", s.sb.Command(s.Dir, argv...), s.Path("server.log"))
			if err != nil {
				return nil, err
			}
			s.procs = append(s.procs, p)
			return s.ended(p, exitTimeout), nil
		},
	},
	{
		Name: "disk-full", Class: "disk-full", Role: diagnose.RoleCombined,
		Fault:  "the log dir is on a 4 MiB tmpfs that a filler file has filled",
		Expect: `No space left on device`,
		Run: func(s *Session) (*Proc, error) {
			vol := s.Path("volume")
			if err := s.Shell(fmt.Sprintf("mkdir -p %s && mount -t tmpfs -o size=4m tmpfs %s", vol, vol)); err != nil {
				return nil, err
			}
			props := combinedProps(filepath.Join(vol, "data"))
			if err := s.Format("server", props, clusterID); err != nil {
				return nil, err
			}
			if err := s.Shell(fmt.Sprintf("dd if=/dev/zero of=%s/filler bs=64k 2>/dev/null; df -k %s | tail -1", vol, vol)); err != nil {
				// dd ends with ENOSPC by design; the df after it tells the state.
				s.Step("(dd stops at no space left, as intended)")
			}
			p, err := s.StartKafka("server", JVM{}, props)
			if err != nil {
				return nil, err
			}
			return s.endedAfter(p, exitTimeout, 15*time.Second, "No space left on device")
		},
	},
	{
		Name: "read-only-fs", Class: "data-dir-read-only", Role: diagnose.RoleCombined,
		Fault:  "the formatted log dir is bind-mounted read-only",
		Expect: `(?i)read-only file system`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			d := s.Path("data")
			if err := s.Shell(fmt.Sprintf("mount --bind %s %s && mount -o remount,bind,ro %s", d, d, d)); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "permission-denied", Class: "data-dir-permission-denied", Role: diagnose.RoleCombined,
		Fault:  "the log dir belongs to root with mode 700 and Kafka runs as uid 65534",
		Expect: `(?i)permission denied|AccessDeniedException`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			if err := s.Shell("chmod 700 " + s.Path("data")); err != nil {
				return nil, err
			}
			return s.startFailing("server", JVM{AsNobody: true}, props)
		},
	},
	{
		Name: "tiered-storage-plugin-missing", Class: "tiered-storage-config-error", Role: diagnose.RoleCombined,
		Fault:  "remote log storage is enabled with a RemoteStorageManager class that is not on the class path",
		Expect: `ClassNotFoundException.*com\.example`,
		Run: func(s *Session) (*Proc, error) {
			props, err := s.formattedCombined()
			if err != nil {
				return nil, err
			}
			props.Set("remote.log.storage.system.enable", "true").
				Set("remote.log.storage.manager.class.name", "com.example.tiered.S3RemoteStorageManager")
			p, err := s.StartKafka("server", JVM{}, props)
			if err != nil {
				return nil, err
			}
			return s.endedAfter(p, exitTimeout, 10*time.Second, "ClassNotFoundException")
		},
	},
	// Data faults: a seeded controller and broker (topic "orders", 2000
	// records); the broker's data is damaged while both are stopped.
	{
		Name: "corrupt-log-segment", Class: "corrupt-log-segment", Role: diagnose.RoleBroker,
		Fault:  "4 KiB in the middle of the partition's log segment are overwritten with garbage and the clean-shutdown marker removed",
		Expect: `Found invalid messages|Corruption found|CorruptRecordException`,
		Run: func(s *Session) (*Proc, error) {
			part := s.Path("broker-data/" + seedTopic + "-0")
			return s.damagedBroker(fmt.Sprintf("head -c 4096 /dev/urandom | dd of=%s/00000000000000000000.log bs=4096 seek=20 conv=notrunc 2>/dev/null; rm -f %s",
				part, s.Path("broker-data/.kafka_cleanshutdown")))
		},
	},
	runsOn(checkpointRecipe("corrupt-recovery-checkpoint", "recovery-point-offset-checkpoint"), func(Install) string {
		// LogManager.loadLogs (Scala up to 3.9, storage's Java in 4.x)
		// catches any error reading the file.
		return "LogManager WARNs \"resetting the recovery checkpoint to 0\", recovers every segment and runs on"
	}),
	{
		// The torn write the real node sees (test/realnode breakCheckpoint):
		// the last entry lost its offset. CheckpointFile's reader (3.7.2 ..
		// 4.4.0) turns a line of the wrong field count into an IOException,
		// which CheckpointFileWithFailureHandler reports to the
		// LogDirFailureChannel ("Error while reading checkpoint file",
		// ERROR) before LogManager WARNs and resets; the dir is then
		// offline, and ReplicaManager's LogDirFailureHandler halts the
		// broker ("Shutdown broker because all log dirs in ... have failed").
		Name: "torn-recovery-checkpoint", Class: "corrupt-checkpoint-file", Role: diagnose.RoleBroker,
		Fault:  "recovery-point-offset-checkpoint's last line is torn (its offset missing)",
		Expect: `Malformed line in checkpoint file \[[^]]*recovery-point-offset-checkpoint\]`,
		Run: func(s *Session) (*Proc, error) {
			path := s.Path("broker-data/recovery-point-offset-checkpoint")
			// Drop the last field of the last line, as a write cut short leaves it.
			return s.damagedBroker(fmt.Sprintf("cat %s && sed -i '$ s/[[:space:]]*[^[:space:]]*$//' %s && cat %s", path, path, path))
		},
	},
	checkpointRecipe("corrupt-replication-checkpoint", "replication-offset-checkpoint"),
	checkpointRecipe("corrupt-leader-epoch-checkpoint", seedTopic+"-0/leader-epoch-checkpoint"),
	{
		// The class is the chain's, not the file's: garbage in a snapshot
		// fails the record layer's CRC check, and Kafka's
		// CorruptRecordException is an ApiException, printed without a
		// stack trace or a path ("Record is corrupt (stored crc = ...)"),
		// so nothing in the log tells a snapshot from a metadata log
		// segment. The remedy is the same: move __cluster_metadata-0
		// aside. metadata-snapshot-no-header reaches the snapshot
		// reader's own checks, which do name the snapshot.
		Name: "metadata-snapshot-corrupt", Class: "corrupt-log-segment", Role: diagnose.RoleBroker,
		Fault:  "every snapshot (.checkpoint) in the broker's __cluster_metadata-0 is overwritten with garbage",
		Expect: `Got exception while starting SharedServer|CorruptRecordException|Could not read`,
		Run: func(s *Session) (*Proc, error) {
			return s.damagedBroker(fmt.Sprintf("ls %s/*.checkpoint && for f in %s/*.checkpoint; do head -c 512 /dev/urandom | dd of=$f bs=512 seek=1 conv=notrunc 2>/dev/null; done",
				s.Path("broker-data/__cluster_metadata-0"), s.Path("broker-data/__cluster_metadata-0")))
		},
	},
	{
		// The snapshot reader's own checks (RecordsSnapshotReader: the
		// first batch must be a control batch holding the snapshot
		// header), reached with batches whose CRCs are right: the record
		// layer's CRC check of metadata-snapshot-corrupt fires first and
		// names no snapshot.
		Name: "metadata-snapshot-no-header", Class: "metadata-snapshot-unreadable", Role: diagnose.RoleBroker,
		Fault:  "every snapshot (.checkpoint) in the broker's __cluster_metadata-0 is replaced by a copy of the metadata log segment (valid batches, no snapshot header)",
		Expect: `snapshot header|First batch is not a control batch|handleLoadSnapshot`,
		Run: func(s *Session) (*Proc, error) {
			dir := s.Path("broker-data/__cluster_metadata-0")
			return s.damagedBroker(fmt.Sprintf("ls %s/*.checkpoint && for f in %s/*.checkpoint; do cp %s/00000000000000000000.log $f; done", dir, dir, dir))
		},
	},
	{
		Name: "metadata-log-corrupt", Class: "corrupt-log-segment", Role: diagnose.RoleController,
		Fault:  "4 KiB in the middle of the (only) controller's metadata log segment are overwritten with garbage and the clean-shutdown marker removed",
		Expect: `Found invalid messages|Corruption found|CorruptRecordException`,
		Run: func(s *Session) (*Proc, error) {
			if err := s.seeded(); err != nil {
				return nil, err
			}
			if err := s.Shell(fmt.Sprintf("head -c 4096 /dev/urandom | dd of=%s/00000000000000000000.log bs=4096 seek=1 conv=notrunc 2>/dev/null; rm -f %s",
				s.Path("controller-data/__cluster_metadata-0"), s.Path("controller-data/.kafka_cleanshutdown"))); err != nil {
				return nil, err
			}
			p, err := s.StartKafka("controller", JVM{Heap: "-Xmx128m"}, controllerProps(s.Path("controller-data")))
			if err != nil {
				return nil, err
			}
			return s.endedAfter(p, exitTimeout, 10*time.Second, "Kafka Server started")
		},
	},
	{
		Name: "voter-set-changed", Class: "kraft-voter-set-mismatch", Role: diagnose.RoleController,
		Fault: "the seeded (single) controller restarts with a second voter added to controller.quorum.voters",
		RunsOn: func(in Install) string {
			// QuorumState.initialize threw "Configured voter set: ... is
			// different from the voter set read from the state file" up to
			// 3.7; 3.8 dropped the check with the voters of quorum-state
			// (KIP-853's voter sets: a static quorum's voters are the
			// config), read in apache/kafka's tags 3.7.1 and 3.8.0.
			if in.ZooKeeperMode() && in.Version < "3.8" {
				return ""
			}
			return "3.8+ no longer compares the configured voters with quorum-state: the controller keeps asking the added voter for a vote and WARNs that it cannot connect, as on any start whose peers are not up yet"
		},
		Expect: `different from the voter set|Connection to node 3 `,
		Run: func(s *Session) (*Proc, error) {
			if err := s.seeded(); err != nil {
				return nil, err
			}
			props := controllerProps(s.Path("controller-data")).Set("controller.quorum.voters", "1@"+controllerAddr+",3@127.0.0.1:9095")
			p, err := s.StartKafka("controller", JVM{Heap: "-Xmx128m"}, props)
			if err != nil {
				return nil, err
			}
			return s.endedAfter(p, exitTimeout, 20*time.Second, "Kafka Server started")
		},
	},
	{
		Name: "metadata-version-newer", Class: "metadata-version-unsupported", Role: diagnose.RoleCombined,
		Skip:   notNewest,
		Fault:  "the log dir is formatted by Kafka " + NewestVersion + " (its latest metadata.version) and the node runs an older release",
		Expect: `MetadataVersion|(?i)feature level`,
		Run: func(s *Session) (*Proc, error) {
			newest, err := Fetch(NewestVersion)
			if err != nil {
				return nil, err
			}
			props := combinedProps(s.Path("data"))
			path, err := s.WriteFile("server.properties", props.String())
			if err != nil {
				return nil, err
			}
			formatter := &Session{Kafka: newest, Dir: s.Dir, sb: s.sb}
			if err := formatter.Tool("format-with-"+NewestVersion, "kafka.tools.StorageTool", "format", "-t", clusterID, "-c", path); err != nil {
				return nil, err
			}
			for _, st := range formatter.Steps() {
				s.Step("(Kafka %s) %s", NewestVersion, st)
			}
			return s.startFailing("server", JVM{}, props)
		},
	},
	{
		Name: "controller-authz-denied", Class: "kraft-controller-authz-denied", Role: diagnose.RoleBroker,
		Fault:  "StandardAuthorizer on controller and broker, no super.users: the broker's principal (User:ANONYMOUS) may not register",
		Expect: `(?i)authoriz`,
		Run: func(s *Session) (*Proc, error) {
			const authz = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
			ctrl := controllerProps(s.Path("controller-data")).Set("authorizer.class.name", authz)
			if err := s.Format("controller", ctrl, clusterID); err != nil {
				return nil, err
			}
			c, err := s.StartKafka("controller", JVM{Heap: "-Xmx128m"}, ctrl)
			if err != nil {
				return nil, err
			}
			if err := s.Started(c, startTimeout); err != nil {
				return nil, err
			}
			props := brokerProps(s.Path("broker-data")).Set("authorizer.class.name", authz)
			if err := s.Format("broker", props, clusterID); err != nil {
				return nil, err
			}
			p, err := s.StartKafka("broker", JVM{}, props)
			if err != nil {
				return nil, err
			}
			if p.WaitExit(45 * time.Second) {
				s.Step("broker exits by itself (code %d)", p.ExitCode())
				return p, nil
			}
			p.Kill()
			s.Step("broker still runs after 45s: the lab kills it (SIGKILL)")
			return p, nil
		},
	},
	// ZooKeeper mode (3.x).
	{
		Name: "zk-unreachable", Class: "zookeeper-unreachable", Role: diagnose.RoleZooKeeper, Skip: zkOnly,
		Fault:  "zookeeper.connect names a port nothing listens on (connection timeout 6 s)",
		Expect: `(?i)timed out waiting for connection|ZooKeeperClientTimeoutException`,
		Run: func(s *Session) (*Proc, error) {
			return s.startFailing("broker", JVM{}, zkBrokerProps("1", s.Path("data")))
		},
	},
	{
		Name: "zk-broker-id-registered", Class: "zk-broker-id-already-registered", Role: diagnose.RoleZooKeeper, Skip: zkOnly,
		Fault:  "a second broker with the same broker.id (other port and log dir) joins while the first is registered",
		Expect: `(?i)NodeExists|already exists|already registered`,
		Run: func(s *Session) (*Proc, error) {
			if _, err := s.startZooKeeper(); err != nil {
				return nil, err
			}
			first, err := s.StartKafka("first", JVM{}, zkBrokerProps("1", s.Path("data-first")))
			if err != nil {
				return nil, err
			}
			if err := s.Started(first, startTimeout); err != nil {
				return nil, err
			}
			second := zkBrokerProps("1", s.Path("data")).Set("listeners", "PLAINTEXT://127.0.0.1:9094").Set("advertised.listeners", "PLAINTEXT://127.0.0.1:9094")
			return s.startFailing("broker", JVM{}, second)
		},
	},
	{
		Name: "zk-cluster-id-mismatch", Class: "cluster-id-mismatch", Role: diagnose.RoleZooKeeper, Skip: zkOnly,
		Fault:  "the broker's log dir outlives a ZooKeeper whose data was wiped (a new cluster id)",
		Expect: `Invalid cluster\.id|InconsistentClusterIdException|doesn't match stored clusterId`,
		Run: func(s *Session) (*Proc, error) {
			zk, err := s.startZooKeeper()
			if err != nil {
				return nil, err
			}
			props := zkBrokerProps("1", s.Path("data"))
			first, err := s.StartKafka("first", JVM{}, props)
			if err != nil {
				return nil, err
			}
			if err := s.Started(first, startTimeout); err != nil {
				return nil, err
			}
			first.Stop(60 * time.Second)
			zk.Stop(20 * time.Second)
			s.Step("stop first and zookeeper with SIGTERM")
			if err := s.Shell("rm -rf " + s.Path("zk-data")); err != nil {
				return nil, err
			}
			if _, err := s.startZooKeeper(); err != nil {
				return nil, err
			}
			return s.startFailing("broker", JVM{}, props)
		},
	},
	{
		Name: "zk-broker-id-mismatch", Class: "node-id-mismatch", Role: diagnose.RoleZooKeeper, Skip: zkOnly,
		Fault:  "the log dir of broker 1 is used by a broker configured as broker.id=2",
		Expect: `Stored node id|InconsistentBrokerIdException|doesn't match stored broker\.id`,
		Run: func(s *Session) (*Proc, error) {
			if _, err := s.startZooKeeper(); err != nil {
				return nil, err
			}
			first, err := s.StartKafka("first", JVM{}, zkBrokerProps("1", s.Path("data")))
			if err != nil {
				return nil, err
			}
			if err := s.Started(first, startTimeout); err != nil {
				return nil, err
			}
			first.Stop(60 * time.Second)
			s.Step("stop first with SIGTERM")
			return s.startFailing("broker", JVM{}, zkBrokerProps("2", s.Path("data")))
		},
	},
	{
		Name: "zk-advertised-listener-conflict", Class: "advertised-listener-conflict", Role: diagnose.RoleZooKeeper, Skip: zkOnly,
		Fault:  "broker 2 advertises the same host:port as the running broker 1",
		Expect: `(?i)already registered`,
		Run: func(s *Session) (*Proc, error) {
			if _, err := s.startZooKeeper(); err != nil {
				return nil, err
			}
			first, err := s.StartKafka("first", JVM{}, zkBrokerProps("1", s.Path("data-first")))
			if err != nil {
				return nil, err
			}
			if err := s.Started(first, startTimeout); err != nil {
				return nil, err
			}
			second := zkBrokerProps("2", s.Path("data")).Set("listeners", "PLAINTEXT://127.0.0.1:9094")
			return s.startFailing("broker", JVM{}, second)
		},
	},
}

// checkpointRecipe damages one checkpoint file of the seeded broker (a
// path relative to its log dir): a line that is not "topic partition
// offset" (or "epoch offset").
func checkpointRecipe(name, file string) Recipe {
	return Recipe{
		Name: name, Class: "corrupt-checkpoint-file", Role: diagnose.RoleBroker,
		Fault:  file + " holds a malformed line",
		Expect: `Malformed line|NumberFormatException|reading ` + regexp.QuoteMeta(filepath.Base(file)) + `|reading checkpoint file .*` + regexp.QuoteMeta(filepath.Base(file)),
		Run: func(s *Session) (*Proc, error) {
			path := s.Path("broker-data/" + file)
			// Keep the version and count lines, replace the entries with a torn one.
			return s.damagedBroker(fmt.Sprintf("head -n 2 %s > %s.new && printf '%%s\\n' '%s 0 12@#' >> %s.new && mv %s.new %s && cat %s",
				path, path, seedTopic, path, path, path, path))
		},
	}
}

// runsOn marks r as one whose fault Kafka only logs (see Recipe.RunsOn).
func runsOn(r Recipe, why func(Install) string) Recipe {
	r.RunsOn = why
	return r
}

// saslCombined is a formatted one-node cluster whose broker listener is
// SASL_PLAINTEXT with PLAIN.
func saslCombined(s *Session) (*Props, error) {
	props, err := s.formattedCombined()
	if err != nil {
		return nil, err
	}
	return props.Set("listeners", "SASL_PLAINTEXT://"+brokerAddr+",CONTROLLER://"+controllerAddr).
		Set("advertised.listeners", "SASL_PLAINTEXT://"+brokerAddr).
		Set("listener.security.protocol.map", "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT").
		Set("inter.broker.listener.name", "SASL_PLAINTEXT").
		Set("sasl.enabled.mechanisms", "PLAIN").
		Set("sasl.mechanism.inter.broker.protocol", "PLAIN"), nil
}

// sslListener turns the broker listener of props into SSL with the keystore.
func sslListener(props *Props, keystore, password string) *Props {
	return props.Set("listeners", "SSL://"+brokerAddr+",CONTROLLER://"+controllerAddr).
		Set("advertised.listeners", "SSL://"+brokerAddr).
		Set("listener.security.protocol.map", "SSL:SSL,CONTROLLER:PLAINTEXT").
		Set("inter.broker.listener.name", "SSL").
		Set("ssl.keystore.location", keystore).
		Set("ssl.keystore.password", password).
		Set("ssl.key.password", password)
}
