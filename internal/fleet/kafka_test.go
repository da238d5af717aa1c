// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"strings"
	"testing"
)

func TestParseKafkaAccess(t *testing.T) {
	in := `clusters:
  - name: prod
    kafka:
      - namespace: kafka
        cluster: my-cluster
        bootstrap: [my-cluster-kafka-bootstrap.kafka:9093]
        tls: true
        saslMechanism: SCRAM-SHA-512
        secret: {name: kafkabot-kafka, passwordKey: pw}
      - namespace: kafka
        bootstrap: ["kafka.kafka:9092"]
`
	specs, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	k := specs[0].Kafka
	if len(k) != 2 || !k[0].TLS || k[0].SASLMechanism != "SCRAM-SHA-512" || k[0].Secret.WithDefaults() != (SecretKeys{Name: "kafkabot-kafka", UsernameKey: "username", PasswordKey: "pw", CAKey: "ca.crt"}) {
		t.Fatalf("kafka = %+v", k)
	}
	if a, ok := FindKafka(k, "kafka", "my-cluster"); !ok || a.Cluster != "my-cluster" {
		t.Errorf("FindKafka(my-cluster) = %+v %t, want the exact entry", a, ok)
	}
	if a, ok := FindKafka(k, "kafka", "other"); !ok || a.Cluster != "" {
		t.Errorf("FindKafka(other) = %+v %t, want the namespace-wide entry", a, ok)
	}
	if _, ok := FindKafka(k, "elsewhere", ""); ok {
		t.Error("FindKafka found an entry for a namespace without one")
	}

	bad := []struct{ name, entry, err string }{
		{"no bootstrap", "namespace: kafka", "kafka[0] (kafka/): bootstrap: no address"},
		{"bad address", "namespace: kafka\n        bootstrap: [kafka]", "want host:port"},
		{"bad port", "namespace: kafka\n        bootstrap: [kafka:99999]", "bad port"},
		{"bad namespace", "namespace: Kafka\n        bootstrap: [k:1]", "namespace"},
		{"unknown mechanism", "namespace: kafka\n        bootstrap: [k:1]\n        saslMechanism: GSSAPI\n        secret: {name: s}", "saslMechanism"},
		{"SASL without a Secret", "namespace: kafka\n        bootstrap: [k:1]\n        saslMechanism: PLAIN", "needs a Secret"},
		{"bad Secret name", "namespace: kafka\n        bootstrap: [k:1]\n        tls: true\n        secret: {name: S_x}", "secret.name"},
		{"Secret never read", "namespace: kafka\n        bootstrap: [k:1]\n        secret: {name: s}", "never read"},
		{"server name without TLS", "namespace: kafka\n        bootstrap: [k:1]\n        serverName: k", "needs tls"},
		{"unknown field", "namespace: kafka\n        bootstrap: [k:1]\n        password: x", "password"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("clusters:\n  - name: a\n    kafka:\n      - " + tt.entry + "\n"))
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse = %v, want an error saying %q", err, tt.err)
			}
		})
	}
	_, err = Parse([]byte("clusters:\n  - name: a\n    kafka:\n      - {namespace: k, bootstrap: [a:1]}\n      - {namespace: k, bootstrap: [b:1]}\n"))
	if err == nil || !strings.Contains(err.Error(), "duplicate of kafka[0]") {
		t.Errorf("duplicate entry: %v", err)
	}
}

func TestParseKafkaBootstrap(t *testing.T) {
	tests := []struct {
		name, setting, mech, secret string
		tls                         bool
		want                        string // entries rendered "ns/cluster=addrs"
		err                         string
	}{
		{name: "unset", setting: ""},
		{name: "one namespace", setting: "kafka=kafka-headless.kafka:9092", want: "kafka/=kafka-headless.kafka:9092"},
		{name: "two entries", setting: " kafka=a:9092 ; orders/orders-kafka=b0:9093, b1:9093 ;", want: "kafka/=a:9092 orders/orders-kafka=b0:9093,b1:9093"},
		{name: "SASL with a Secret", setting: "kafka=a:9093", tls: true, mech: "PLAIN", secret: "kafkabot", want: "kafka/=a:9093"},
		{name: "no equals", setting: "a:9092", err: "want namespace[/cluster]=host:port"},
		{name: "SASL without a Secret", setting: "kafka=a:9093", mech: "PLAIN", err: "needs a Secret"},
		{name: "settings without an address", tls: true, err: "without any bootstrap address"},
		{name: "bad address", setting: "kafka=a", err: "want host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKafkaBootstrap(tt.setting, tt.tls, tt.mech, tt.secret)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, a := range got {
				s = append(s, a.Namespace+"/"+a.Cluster+"="+strings.Join(a.Bootstrap, ","))
				if a.TLS != tt.tls || a.SASLMechanism != tt.mech || (tt.secret != "" && (a.Secret == nil || a.Secret.Name != tt.secret)) {
					t.Errorf("entry %+v does not carry tls/mechanism/secret", a)
				}
			}
			if strings.Join(s, " ") != tt.want {
				t.Errorf("got %q, want %q", strings.Join(s, " "), tt.want)
			}
		})
	}
}
