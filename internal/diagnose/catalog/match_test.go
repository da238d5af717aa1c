// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package catalog

import (
	"strings"
	"testing"
)

// Messages written for these tests in the shape Kafka prints them (not
// copied from a log).
func TestMatch(t *testing.T) {
	c := mustLoad(t)
	tests := []struct {
		msg       string
		class     string
		exception string // "" = do not check
		values    []string
	}{
		{
			msg:       "kafka.common.InconsistentClusterIdException: The Cluster ID abc doesn't match stored clusterId Some(xyz) in meta.properties. The broker is trying to join the wrong cluster. Configured zookeeper.connect may be wrong.",
			class:     "cluster-id-mismatch",
			exception: "kafka.common.InconsistentClusterIdException",
			values:    []string{"abc", "Some(xyz)"},
		},
		{
			msg:   "org.apache.kafka.common.KafkaException: Failed to acquire lock on file .lock in /data/k1. A Kafka instance in another process or thread is using this directory.",
			class: "log-dir-lock-held",
		},
		{
			msg:   "[KafkaServer id=3] Fatal error during KafkaServer startup. Prepare to shutdown",
			class: "",
		},
		{
			msg:   "Caused by: java.lang.IllegalArgumentException: requirement failed: There must be at least one advertised listener. Perhaps all listeners appear in controller.listener.names?",
			class: "config-error",
		},
		{
			msg:   "org.apache.kafka.common.KafkaException: Socket server failed to bind to 0.0.0.0:9092: Address already in use.",
			class: "port-in-use",
		},
		{
			msg:   "org.apache.kafka.common.KafkaException: Socket server failed to bind to 10.1.2.3:9092: Cannot assign requested address.",
			class: "listener-bind-address-invalid",
		},
		{
			msg:   "org.apache.kafka.common.config.ConfigException: Invalid value abc for configuration num.partitions: Not a number of type INT",
			class: "config-error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.msg[:40], func(t *testing.T) {
			m, ok := c.Match(tc.msg)
			if !ok {
				t.Fatalf("no template matches %q", tc.msg)
			}
			if m.Class != tc.class {
				t.Errorf("class %q (template %s %q from %s), want %q", m.Class, m.Template.ID, m.Template.Text, m.Template.Thrower, tc.class)
			}
			if tc.exception != "" && m.Template.Exception != tc.exception {
				t.Errorf("exception %q, want %q", m.Template.Exception, tc.exception)
			}
			if tc.values != nil && !equal(m.Values, tc.values) {
				t.Errorf("values %q, want %q", m.Values, tc.values)
			}
		})
	}
}

func TestNoMatch(t *testing.T) {
	c := mustLoad(t)
	for _, msg := range []string{
		"",
		"hello world",
		"Started the thing in 42 ms",
		"[2026-01-01 00:00:00,000] INFO Kafka version: 3.9.2 (org.apache.kafka.common.utils.AppInfoParser)",
	} {
		if m, ok := c.Match(msg); ok {
			t.Errorf("%q matched template %s %q", msg, m.Template.ID, m.Template.Text)
		}
	}
}

func TestMatchParts(t *testing.T) {
	tests := []struct {
		text, msg string
		ok        bool
		values    []string
	}{
		{"Found {} at {}", "Found x at y", true, []string{"x", "y"}},
		{"Found {} at {}", "[A id=1] Found x at y", true, []string{"x", "y"}},
		{"Found {} at {}", "org.x.FooException: Found x at y", true, []string{"x", "y"}},
		{"Found {} at {}", "someone Found x at y", false, nil},
		{"Found {} at {}.", "Found x at y", false, nil},
		{"{} is bad", "disk 7 is bad", true, []string{"disk 7"}},
		{"a {} b {} c", "a 1 b 2 b 3 c", true, []string{"1", "2 b 3"}},
		{"Done", "Done", true, []string{}},
		{"Done", "Done twice", false, nil},
		{"Encountered nothing {}", "Encountered fatal fault: Encountered nothing 1", true, []string{"1"}},
	}
	for _, tc := range tests {
		v, ok := matchParts(splitText(tc.text), tc.msg)
		if ok != tc.ok || ok && !equal(v, tc.values) {
			t.Errorf("matchParts(%q, %q) = %q, %v; want %q, %v", tc.text, tc.msg, v, ok, tc.values, tc.ok)
		}
	}
}

func TestClassFor(t *testing.T) {
	c := mustLoad(t)
	tests := []struct{ exc, thrower, want string }{
		{"kafka.common.InconsistentClusterIdException", "kafka.server.KafkaServer", "cluster-id-mismatch"},
		{"org.apache.kafka.common.config.ConfigException", "org.apache.kafka.common.config.ConfigDef", "config-error"},
		{"java.lang.IllegalArgumentException", "org.apache.kafka.common.security.JaasContext", "sasl-config-error"},
		{"org.apache.kafka.common.KafkaException", "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory", "tls-config-error"},
		{"org.apache.kafka.common.errors.CorruptRecordException", "kafka.log.LogSegment", "corrupt-log-segment"},
		{"java.lang.IllegalStateException", "org.apache.kafka.common.securityx.Foo", ""},
		{"org.apache.kafka.common.config.ConfigException", "org.apache.kafka.common.security.ssl.DefaultSslEngineFactory", "tls-config-error"},
		{"org.apache.kafka.common.config.ConfigException", "org.apache.kafka.common.security.oauthbearer.internals.secured.ConfigurationUtils", "sasl-config-error"},
		{"java.lang.IllegalArgumentException", "org.apache.kafka.server.log.remote.storage.ClassLoaderAwareRemoteStorageManager", "tiered-storage-config-error"},
		// one client's bad password is not the broker's SASL configuration
		{"javax.security.sasl.SaslAuthenticationException", "org.apache.kafka.common.security.plain.internals.PlainSaslServer", ""},
		{"java.lang.NullPointerException", "com.example.Foo", ""},
	}
	for _, tc := range tests {
		if got := c.ClassFor(tc.exc, tc.thrower); got != tc.want {
			t.Errorf("ClassFor(%q, %q) = %q, want %q", tc.exc, tc.thrower, got, tc.want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A small catalogue written for this test: matching rules independent of
// the mined data.
func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	f := &File{Schema: SchemaVersion, Releases: []Release{{Name: "9.9.9", Product: "kafka"}}}
	add := func(text, kind, exc, thrower string) {
		f.Templates = append(f.Templates, FileTemplate{ID: TemplateID(kind, exc, thrower, text), Text: text, Kind: kind,
			Exception: exc, Thrower: thrower, In: []int{0}, Source: Provenance{Repo: "test", Version: "9.9.9", File: "T.java"}})
	}
	add("There was an error in one of the threads during logs loading: {}", KindLogError, "", "kafka.log.LogManager")
	add("Found directory {}, '{}' is not in the form of topic-partition or topic-partition.uniqueId-delete (if marked for deletion).\nKafka's log directories (and children) should only contain Kafka topic data.", KindThrow, "org.apache.kafka.common.KafkaException", "kafka.log.LocalLog")
	add("Error while writing to checkpoint file {}", KindThrow, "org.apache.kafka.common.errors.KafkaStorageException", "kafka.server.checkpoints.CheckpointFileWithFailureHandler")
	add("Configured voter set: {} is different from the voter set read from the state file: {}", KindThrow, "java.lang.IllegalStateException", "org.apache.kafka.raft.QuorumState")
	c, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMatchRules(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		name, msg, class, cause string
	}{
		{"first line of a multi-line template, value narrows the class",
			"org.apache.kafka.common.KafkaException: Found directory /data/lost+found, 'lost+found' is not in the form of topic-partition or topic-partition.uniqueId-delete (if marked for deletion).",
			"lost-and-found-dir", "template"},
		{"wrapped message gives its class",
			"There was an error in one of the threads during logs loading: org.apache.kafka.common.KafkaException: Found directory /data/x, 'x' is not in the form of topic-partition or topic-partition.uniqueId-delete (if marked for deletion).",
			"non-kafka-dir-in-log-dir", "nested: "},
		{"operating-system cause wins",
			"org.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /data/x/leader-epoch-checkpoint: No space left on device",
			"disk-full", "os: No space left on device"},
		{"read-only filesystem is its own class, not the I/O one",
			"org.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /data/x/leader-epoch-checkpoint: Read-only file system",
			"data-dir-read-only", "os: Read-only file system"},
		{"message cut short inside the template's text",
			`java.lang.IllegalStateException: Configured voter set: [1, 2] is different from the voter set read from the st`,
			"kraft-voter-set-mismatch", "template"},
		{"uncaught exception prefix",
			`Exception in thread "main" java.lang.IllegalStateException: Configured voter set: [1, 2] is different from the voter set read from the state file: [1]`,
			"kraft-voter-set-mismatch", "template"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := c.Match(tc.msg)
			if !ok {
				t.Fatalf("no match for %q", tc.msg)
			}
			if m.Class != tc.class || !strings.HasPrefix(m.Cause, tc.cause) {
				t.Errorf("class %q cause %q, want %q %q", m.Class, m.Cause, tc.class, tc.cause)
			}
			if want := strings.Contains(tc.name, "cut short"); m.Truncated != want {
				t.Errorf("Truncated = %v, want %v", m.Truncated, want)
			}
		})
	}
}

// TestClassifyByOrigin: the class comes from the thrower, the exception and
// (for a class that throws for several reasons) a literal of the site; a
// terminal event defers to its cause. Templates written for this test.
func TestClassifyByOrigin(t *testing.T) {
	tests := []struct {
		kind, exc, thrower, text string
		class                    string
		defers                   bool
	}{
		{KindThrow, "java.lang.RuntimeException", "org.apache.kafka.metadata.properties.MetaPropertiesEnsemble", "No readable meta.properties files found.", "storage-not-formatted", false},
		{KindThrow, "java.lang.RuntimeException", "org.apache.kafka.metadata.properties.MetaPropertiesEnsemble", "Invalid cluster.id in: {}. Expected {}, but read {}", "cluster-id-mismatch", false},
		{KindRequire, "java.lang.IllegalArgumentException", "kafka.server.KafkaConfig", "requirement failed: something about listeners", "config-error", false},
		{KindLogFatal, "", "kafka.server.KafkaServer", "Fatal error during KafkaServer startup. Prepare to shutdown", "", true},
		{KindScript, "", "bitnami:libkafka.sh", "In order to configure the TLS encryption for Kafka you must mount your certs to the {}/certs directory.", "tls-config-error", false},
		{KindScript, "", "bitnami:libkafka.sh", "There are listeners bound to the same port", "config-error", false},
		{KindScript, "", "apache/kafka:bin/kafka-run-class.sh", "Classpath is empty. Please build the project first", "kafka-classpath-broken", false},
		{KindThrow, "java.lang.IllegalStateException", "com.example.Other", "Something else entirely", "", false},
	}
	for _, tc := range tests {
		tp := &Template{Kind: tc.kind, Exception: tc.exc, Thrower: tc.thrower, Text: tc.text}
		tp.ID = TemplateID(tc.kind, tc.exc, tc.thrower, tc.text)
		class, why, defers := classifyTemplate(tp)
		if class != tc.class || defers != tc.defers {
			t.Errorf("%s %q: class %q defers %v (%s), want %q %v", tc.thrower, tc.text, class, defers, why, tc.class, tc.defers)
		}
		if (class != "" || defers) && why == "" {
			t.Errorf("%s %q: no reason given", tc.thrower, tc.text)
		}
	}
}

// TestMatchConcurrent: Load and Match are safe for concurrent use (run with -race).
func TestMatchConcurrent(t *testing.T) {
	msg := "org.apache.kafka.common.KafkaException: Failed to acquire lock on file .lock in /data/k1. A Kafka instance in another process or thread is using this directory."
	done := make(chan string)
	for i := 0; i < 4; i++ {
		go func() {
			c, err := Load()
			if err != nil {
				done <- err.Error()
				return
			}
			m, ok := c.Match(msg)
			if !ok {
				done <- "no match"
				return
			}
			done <- m.Class
		}()
	}
	for i := 0; i < 4; i++ {
		if got := <-done; got != "log-dir-lock-held" {
			t.Errorf("goroutine %d: %s", i, got)
		}
	}
}

// TestLinesPerRelease: a template's lines load next to its releases, a
// count that differs from the releases' is refused, and ReleasesAt names
// the releases whose throw starts on a frame's line or a few lines above.
func TestLinesPerRelease(t *testing.T) {
	f := &File{Schema: SchemaVersion, Releases: []Release{{Name: "1.0"}, {Name: "2.0"}, {Name: "3.0"}}}
	f.Templates = []FileTemplate{{ID: "a", Text: "Something broke in {}", Kind: KindThrow, In: []int{0, 1, 2}, Lines: []int{10, 40, 0}}}
	c, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	tp := c.Templates[0]
	for line, want := range map[int]string{10: "1.0", 12: "1.0", 15: "1.0", 16: "", 9: "", 41: "2.0", 0: ""} {
		if got := strings.Join(tp.ReleasesAt(line), ","); got != want {
			t.Errorf("ReleasesAt(%d) = %q, want %q", line, got, want)
		}
	}
	if got := strings.Join(tp.ReleasesWithoutLine(), ","); got != "3.0" {
		t.Errorf("ReleasesWithoutLine = %q, want 3.0", got)
	}
	f.Templates[0].Lines = []int{10, 40}
	if _, err := FromFile(f); err == nil {
		t.Error("two lines for three releases loaded")
	}
}
