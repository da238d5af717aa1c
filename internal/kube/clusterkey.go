// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// KafkaClusterKey names a group of Kafka pods the repair safety gates treat as
// one Kafka cluster: the pods of one namespace with one cluster label (see
// ClusterOf). A pod without a cluster label belongs to the group of its
// whole namespace (Cluster ""), the conservative reading: every Kafka pod of
// the namespace may be its peer.
//
// It is the one definition of "the same cluster" for the peer and quorum
// gates, the per-cluster repair lock and the escalation record.
type KafkaClusterKey struct {
	Namespace string
	// Cluster is the cluster label's value; "" means every Kafka pod of
	// the namespace.
	Cluster string
}

// KafkaClusterKeyOf is the group of a pod in namespace with cluster label
// cluster (as found by ClusterOf; "" when the pod has none).
func KafkaClusterKeyOf(namespace, cluster string) KafkaClusterKey {
	return KafkaClusterKey{Namespace: namespace, Cluster: cluster}
}

// Includes reports whether a pod of namespace and cluster label cluster
// belongs to the group k: same namespace, and the same cluster unless k is
// the whole namespace.
func (k KafkaClusterKey) Includes(namespace, cluster string) bool {
	return namespace == k.Namespace && (k.Cluster == "" || cluster == k.Cluster)
}

// String is "namespace/cluster", or "namespace/*" for a whole namespace;
// ParseKafkaClusterKey reads it back.
func (k KafkaClusterKey) String() string {
	if k.Cluster == "" {
		return k.Namespace + "/*"
	}
	return k.Namespace + "/" + k.Cluster
}

// ParseKafkaClusterKey reads "namespace/cluster" or "namespace/*" (String's
// form).
func ParseKafkaClusterKey(s string) (KafkaClusterKey, error) {
	ns, cluster, ok := strings.Cut(s, "/")
	if !ok || ns == "" || cluster == "" || strings.Contains(cluster, "/") {
		return KafkaClusterKey{}, fmt.Errorf("cluster %q: want namespace/cluster, or namespace/* for a namespace's pods without a cluster label", s)
	}
	if cluster == "*" {
		cluster = ""
	}
	return KafkaClusterKey{Namespace: ns, Cluster: cluster}, nil
}

// maxKeyLen bounds Key so that a "kafkabot-<kind>-" prefix of up to 22
// characters still leaves a valid 63-character object name.
const maxKeyLen = 40

// Key is the group's name inside its namespace, for object names such as
// kafkabot-cluster-<key> and kafkabot-escalated-<key>: the cluster label
// lower-cased and limited to [a-z0-9-] ("all" for a whole namespace), cut
// to fit, and always followed by "-" and 8 hex digits of a hash of the
// exact label value, so two clusters never share a key and a cluster
// named "all" is not the whole namespace. At most 40 characters, a valid
// DNS label.
func (k KafkaClusterKey) Key() string {
	readable, hashed := "all", "\x00all" // NUL: no label value has one
	if k.Cluster != "" {
		var b strings.Builder
		for _, r := range strings.ToLower(k.Cluster) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
		}
		readable, hashed = strings.Trim(b.String(), "-"), k.Cluster
	}
	sum := sha256.Sum256([]byte(hashed))
	suffix := hex.EncodeToString(sum[:4])
	if room := maxKeyLen - len(suffix) - 1; len(readable) > room {
		readable = strings.TrimRight(readable[:room], "-")
	}
	if readable == "" {
		return suffix
	}
	return readable + "-" + suffix
}
