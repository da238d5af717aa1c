// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/fleet"
)

// TestKafkaSecretsAreMounted: each Secret a Kafka access entry names must
// be mounted under the Kafka secrets dir with the keys its SASL mechanism
// needs; the report says which, where, and how to mount it.
func TestKafkaSecretsAreMounted(t *testing.T) {
	dir := t.TempDir()
	// A Secret as the kubelet mounts one: each key a link into ..data.
	mountSecret := func(name string, keys ...string) {
		data := filepath.Join(dir, name, "..2026_01_01_00_00_00.000000001")
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Base(data), filepath.Join(dir, name, "..data")); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := os.WriteFile(filepath.Join(data, k), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, name, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	mountSecret("kafkabot-kafka", "username", "password", "ca.crt")
	mountSecret("tls-only", "ca.pem")
	mountSecret("no-password", "username")
	scram := func(name string) fleet.KafkaAccess {
		return fleet.KafkaAccess{Namespace: "kafka", Bootstrap: []string{"b:9093"}, TLS: true, SASLMechanism: "SCRAM-SHA-512", Secret: &fleet.SecretKeys{Name: name}}
	}
	for _, tc := range []struct {
		name   string
		access fleet.KafkaAccess
		sev    Severity
		want   []string
	}{
		{"mounted with every key", scram("kafkabot-kafka"), OK, []string{"namespace kafka: the Secret kafkabot-kafka is mounted at " + filepath.Join(dir, "kafkabot-kafka")}},
		{"not mounted", scram("kafkabot-absent"), Problem, []string{"the Secret kafkabot-absent is not mounted at " + filepath.Join(dir, "kafkabot-absent"),
			"the repair gates cannot reach Kafka there", "fix: create the Secret in the bot's namespace and mount it read-only", "kafka.secret and each clusters[].kafka[].secret.name"}},
		{"a key missing", scram("no-password"), Problem, []string{"the Secret no-password (mounted at", "lacks the key(s) password that SCRAM-SHA-512 needs (it has: username)", "usernameKey and passwordKey"}},
		{"TLS without the CA key", fleet.KafkaAccess{Namespace: "kafka", Cluster: "orders", Bootstrap: []string{"b:9093"}, TLS: true, Secret: &fleet.SecretKeys{Name: "tls-only"}},
			OK, []string{"namespace kafka cluster orders: the Secret tls-only is mounted", "(no ca.crt: the system's CA roots check Kafka's certificate)"}},
		{"no Secret", fleet.KafkaAccess{Namespace: "kafka", Bootstrap: []string{"b:9092"}}, OK, []string{"Kafka is asked with no credentials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := checkKafkaSecrets(Cluster{Kafka: []fleet.KafkaAccess{tc.access}}, dir)
			if len(results) != 1 {
				t.Fatalf("%d results, want 1: %+v", len(results), results)
			}
			var b strings.Builder
			if err := (Report{Results: results}).Write(&b); err != nil {
				t.Fatal(err)
			}
			if results[0].Severity != tc.sev || results[0].Area != "kafka" {
				t.Errorf("severity %v in area %s, want %v in kafka:\n%s", results[0].Severity, results[0].Area, tc.sev, b.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("the report lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
