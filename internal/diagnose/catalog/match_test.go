package catalog

import (
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
