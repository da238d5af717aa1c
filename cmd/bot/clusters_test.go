// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/config"
)

// TestServedClusters: without CLUSTERS_FILE, one cluster named
// CLUSTER_NAME from KUBECONFIG with KAFKA_NAMESPACES (as before issue 15);
// with it, its entries, each from its own kubeconfig and context; a bad
// file stops serve naming the entry and the field.
func TestServedClusters(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := func(name, server string) string {
		p := filepath.Join(dir, name)
		body := `apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://127.0.0.1:1"}}, {name: b, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: first, context: {cluster: a, user: u}}, {name: second, context: {cluster: b, user: u}}]
current-context: first
`
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	eu, us := kubeconfig("eu", "https://127.0.0.1:2"), kubeconfig("us", "https://127.0.0.1:3")
	file := func(body string) string {
		p := filepath.Join(dir, "clusters.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	single, home, err := servedClusters(&config.Config{ClusterName: "kubernetes", Kubeconfig: eu, KafkaNamespaces: []string{"kafka"}})
	if err != nil || len(single) != 1 || home != nil {
		t.Fatalf("without CLUSTERS_FILE: %+v, %v, %v", single, home, err)
	}
	if c := single[0]; c.Name != "kubernetes" || c.Config.Host != "https://127.0.0.1:1" || strings.Join(c.KafkaNamespaces, ",") != "kafka" {
		t.Errorf("the single cluster is %+v (host %s)", c, c.Config.Host)
	}

	two, _, err := servedClusters(&config.Config{ClusterName: "ignored", ClustersFile: file(`clusters:
  - name: prod-eu
    kubeconfig: ` + eu + `
    kafkaNamespaces: [kafka-eu]
    approvalChannels: [C0PRODEU]
  - name: prod-us
    kubeconfig: ` + us + `
    context: second
`)})
	if err != nil || len(two) != 2 {
		t.Fatalf("with CLUSTERS_FILE: %+v, %v", two, err)
	}
	if two[0].Name != "prod-eu" || two[0].Config.Host != "https://127.0.0.1:1" || two[0].KafkaNamespaces[0] != "kafka-eu" || two[0].ApprovalChannels[0] != "C0PRODEU" {
		t.Errorf("prod-eu is %+v (host %s)", two[0], two[0].Config.Host)
	}
	if two[1].Name != "prod-us" || two[1].Config.Host != "https://127.0.0.1:3" || two[1].KafkaNamespaces != nil {
		t.Errorf("prod-us is %+v (host %s): want its context's server and KAFKA_NAMESPACES", two[1], two[1].Config.Host)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"unknown field", "clusters:\n  - name: a\n    kubeconfig: " + eu + "\n    namespaces: [x]\n", "namespaces"},
		{"duplicate", "clusters:\n  - name: a\n    kubeconfig: " + eu + "\n  - name: a\n    kubeconfig: " + us + "\n", "clusters[1] (a): name"},
		{"unreadable kubeconfig", "clusters:\n  - name: a\n    kubeconfig: " + filepath.Join(dir, "absent") + "\n", "clusters[0] (a): kubeconfig"},
		{"unknown context", "clusters:\n  - name: a\n    kubeconfig: " + eu + "\n    context: nope\n", "clusters[0] (a): kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := servedClusters(&config.Config{ClustersFile: file(tc.body)})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "CLUSTERS_FILE") {
				t.Fatalf("error %v, want one naming CLUSTERS_FILE and %q", err, tc.want)
			}
		})
	}
}
