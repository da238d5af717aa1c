// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestClusterKeyIncludes(t *testing.T) {
	tests := []struct {
		key         KafkaClusterKey
		ns, cluster string
		want        bool
	}{
		{KafkaClusterKey{"kafka", "foobar"}, "kafka", "foobar", true},
		{KafkaClusterKey{"kafka", "foobar"}, "kafka", "other", false},
		{KafkaClusterKey{"kafka", "foobar"}, "kafka", "", false},
		{KafkaClusterKey{"kafka", "foobar"}, "kafka-2", "foobar", false},
		{KafkaClusterKey{"kafka", ""}, "kafka", "foobar", true}, // no label: every pod of the namespace
		{KafkaClusterKey{"kafka", ""}, "kafka", "", true},
		{KafkaClusterKey{"kafka", ""}, "other", "", false},
	}
	for _, tc := range tests {
		if got := tc.key.Includes(tc.ns, tc.cluster); got != tc.want {
			t.Errorf("%s.Includes(%s, %q) = %t, want %t", tc.key, tc.ns, tc.cluster, got, tc.want)
		}
	}
}

func TestClusterKeyKeyIsUniqueAndValid(t *testing.T) {
	long := strings.Repeat("a-very-long-cluster-name-", 4)
	clusters := []string{"", "foobar", "FooBar", "foo.bar", "foo_bar", "foo-bar", "all", long, long + "x", "---", "Ä"}
	seen := map[string]string{}
	for _, c := range clusters {
		k := KafkaClusterKey{Namespace: "kafka", Cluster: c}.Key()
		if len(k) > maxKeyLen || len(validation.IsDNS1123Label(k)) > 0 {
			t.Errorf("key of %q = %q: not a DNS label of at most %d characters", c, k, maxKeyLen)
		}
		if len("kafkabot-escalated-"+k) > 63 {
			t.Errorf("kafkabot-escalated-%s is longer than 63", k)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("clusters %q and %q share key %q", c, other, k)
		}
		seen[k] = c
	}
	if k := (KafkaClusterKey{Namespace: "kafka", Cluster: "foobar"}).Key(); !strings.HasPrefix(k, "foobar-") {
		t.Errorf("key %q does not start with the readable cluster name", k)
	}
	if a, b := (KafkaClusterKey{"ns1", "foobar"}).Key(), (KafkaClusterKey{"ns2", "foobar"}).Key(); a != b {
		t.Errorf("the key depends on the namespace (%q, %q); it names the cluster inside its namespace", a, b)
	}
}

func TestParseKafkaClusterKey(t *testing.T) {
	for _, k := range []KafkaClusterKey{{"kafka", "foobar"}, {"kafka", ""}} {
		got, err := ParseKafkaClusterKey(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKafkaClusterKey(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	for _, bad := range []string{"", "kafka", "/foobar", "kafka/", "a/b/c"} {
		if _, err := ParseKafkaClusterKey(bad); err == nil {
			t.Errorf("ParseKafkaClusterKey(%q) accepted", bad)
		}
	}
}
