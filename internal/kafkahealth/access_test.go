// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/logging"
)

func TestGateSettings(t *testing.T) {
	secret := map[string][]byte{"username": []byte("bot"), "pw": []byte("hunter2"), "ca.crt": []byte("PEM")}
	read := func(_ context.Context, ns, name string) (map[string][]byte, error) {
		if ns != "kafka" || name != "kafkabot" {
			return nil, errors.New("not found")
		}
		return secret, nil
	}
	tests := []struct {
		name string
		a    fleet.KafkaAccess
		want Settings
		err  string
	}{
		{name: "plaintext", a: fleet.KafkaAccess{Namespace: "kafka", Bootstrap: []string{"k:9092"}}, want: Settings{Bootstrap: []string{"k:9092"}}},
		{name: "SCRAM over TLS", a: fleet.KafkaAccess{Namespace: "kafka", Bootstrap: []string{"k:9093"}, TLS: true, SASLMechanism: SASLScramSHA512,
			Secret: &fleet.SecretKeys{Name: "kafkabot", PasswordKey: "pw"}},
			want: Settings{Bootstrap: []string{"k:9093"}, TLS: true, CACert: []byte("PEM"), SASLMechanism: SASLScramSHA512, Username: "bot", Password: "hunter2"}},
		{name: "missing key", a: fleet.KafkaAccess{Namespace: "kafka", Bootstrap: []string{"k:9093"}, SASLMechanism: SASLPlain,
			Secret: &fleet.SecretKeys{Name: "kafkabot"}}, err: `the Secret kafkabot has no key "password"`},
		{name: "missing Secret", a: fleet.KafkaAccess{Namespace: "kafka", Bootstrap: []string{"k:9093"}, SASLMechanism: SASLPlain,
			Secret: &fleet.SecretKeys{Name: "other"}}, err: "reading Secret other: not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Gate{ReadSecret: read}
			got, err := g.settings(context.Background(), tt.a)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Error("the error shows the password")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got.Bootstrap, ",") != strings.Join(tt.want.Bootstrap, ",") || got.TLS != tt.want.TLS || string(got.CACert) != string(tt.want.CACert) ||
				got.SASLMechanism != tt.want.SASLMechanism || got.Username != tt.want.Username || got.Password != tt.want.Password {
				t.Errorf("settings = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGateMatching(t *testing.T) {
	g := &Gate{Access: []fleet.KafkaAccess{{Namespace: "kafka", Cluster: "prod", Bootstrap: []string{"127.0.0.1:1"}}}}
	if _, configured := g.BeforeMove(context.Background(), "other", "prod", "4"); configured {
		t.Error("an unconfigured namespace was asked")
	}
	d, configured := g.BeforeMove(context.Background(), "kafka", "prod", "")
	if !configured || d.Verdict != Defer || !strings.Contains(d.Line, "node.id is not known") {
		t.Errorf("unknown node id: %v %+v", configured, d)
	}
}

// TestRedactPassword: a decision's line quotes brokers' answers; a broker
// that echoes the SASL password gets it hidden.
func TestRedactPassword(t *testing.T) {
	for _, tt := range []struct{ line, password, want string }{
		{"SASL authentication failed for bot:hunter2-pw (bad)", "hunter2-pw", "SASL authentication failed for bot:" + logging.Redacted + " (bad)"},
		{"quorum: leader 1", "", "quorum: leader 1"},
	} {
		if got := redact(tt.line, tt.password); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}
