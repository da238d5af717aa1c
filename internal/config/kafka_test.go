// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"os"
	"strings"
	"testing"
)

// setKafkaEnv clears the Kafka connection settings, then sets env.
func setKafkaEnv(t *testing.T, env map[string]string) {
	t.Helper()
	setEnv(t, nil)
	for _, name := range []string{"KAFKA_BOOTSTRAP", "KAFKA_TLS", "KAFKA_SASL_MECHANISM", "KAFKA_SECRET", "KAFKA_CATCHUP_TIMEOUT"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func TestKafkaBootstrapSettings(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		entries int
		err     string
	}{
		{name: "unset: Kafka is not asked", env: nil, entries: 0},
		{name: "one namespace", env: map[string]string{"KAFKA_BOOTSTRAP": "kafka=kafka-headless.kafka:9092"}, entries: 1},
		{name: "SCRAM over TLS from a Secret", env: map[string]string{"KAFKA_BOOTSTRAP": "kafka/prod=b0:9093,b1:9093", "KAFKA_TLS": "true",
			"KAFKA_SASL_MECHANISM": "SCRAM-SHA-512", "KAFKA_SECRET": "kafkabot-kafka"}, entries: 1},
		{name: "bad address", env: map[string]string{"KAFKA_BOOTSTRAP": "kafka=nohost"}, err: "KAFKA_BOOTSTRAP"},
		{name: "SASL without a Secret", env: map[string]string{"KAFKA_BOOTSTRAP": "kafka=k:9092", "KAFKA_SASL_MECHANISM": "PLAIN"}, err: "needs a Secret"},
		{name: "TLS without an address", env: map[string]string{"KAFKA_TLS": "true"}, err: "KAFKA_BOOTSTRAP"},
		{name: "zero catch-up wait", env: map[string]string{"KAFKA_CATCHUP_TIMEOUT": "0s"}, err: "KAFKA_CATCHUP_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setKafkaEnv(t, tt.env)
			c, err := Load()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load = %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.KafkaAccess()
			if err != nil || len(a) != tt.entries {
				t.Fatalf("KafkaAccess = %+v, %v; want %d entries", a, err, tt.entries)
			}
		})
	}
}
