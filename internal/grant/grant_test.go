// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package grant

import (
	"errors"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/approval"
)

var testSecret = []byte("test-secret-test-secret-test-secret-0123")

const alertChan = "C0ALERTS"

func TestSilenceTokens(t *testing.T) {
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	good := Silence{Key: "cluster:kafka/foobar", For: 3600, Channel: alertChan, IssuedAt: now.Unix(), ExpiresAt: now.Add(time.Hour).Unix()}
	sign := func(g Silence) string {
		tok, err := SignSilence(testSecret, g)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	approvalTok, err := approval.Sign(testSecret, approval.Approval{ID: "A", Namespace: "kafka", Pod: "p", Rule: "r", Action: "a",
		Channel: alertChan, IssuedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		token   string
		at      time.Time
		wantErr error
	}{
		{"valid", sign(good), now, nil},
		{"expired", sign(good), now.Add(time.Hour), ErrExpired},
		{"approval token", approvalTok, now, ErrSignature},
		{"too long a silence", sign(Silence{Key: "k", For: int64(31 * 24 * time.Hour / time.Second), Channel: alertChan, ExpiresAt: now.Add(time.Hour).Unix()}), now, ErrMalformed},
		{"no key", sign(Silence{For: 60, Channel: alertChan, ExpiresAt: now.Add(time.Hour).Unix()}), now, ErrMalformed},
		{"garbage", "not-a-token", now, ErrMalformed},
		{"empty", "", now, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := VerifySilence(testSecret, tt.token, tt.at)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("verify = %+v, %v; want %v", g, err, tt.wantErr)
			}
			if tt.wantErr == nil && (g.Key != good.Key || g.Duration() != time.Hour) {
				t.Errorf("grant %+v", g)
			}
		})
	}
}

// TestKindsDoNotMix: a token of one kind never opens as another.
func TestKindsDoNotMix(t *testing.T) {
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour).Unix()
	sil, err := SignSilence(testSecret, Silence{Key: "k", For: 60, Channel: alertChan, ExpiresAt: exp})
	if err != nil {
		t.Fatal(err)
	}
	unsil, err := SignUnsilence(testSecret, Unsilence{ID: "s1", Key: "k", Channel: alertChan, ExpiresAt: exp})
	if err != nil {
		t.Fatal(err)
	}
	esc, err := SignEscalation(testSecret, Escalation{KafkaCluster: "kafka/foobar", UID: "u1", Channel: alertChan, ExpiresAt: exp})
	if err != nil {
		t.Fatal(err)
	}
	verify := map[string]func(token string) error{
		"silence":    func(tok string) error { _, err := VerifySilence(testSecret, tok, now); return err },
		"unsilence":  func(tok string) error { _, err := VerifyUnsilence(testSecret, tok, now); return err },
		"escalation": func(tok string) error { _, err := VerifyEscalation(testSecret, tok, now); return err },
	}
	tokens := map[string]string{"silence": sil, "unsilence": unsil, "escalation": esc}
	for kind, tok := range tokens {
		for as, check := range verify {
			err := check(tok)
			switch {
			case kind == as && err != nil:
				t.Errorf("a %s token does not verify: %v", kind, err)
			case kind != as && !errors.Is(err, ErrSignature):
				t.Errorf("a %s token opened as %s: %v", kind, as, err)
			}
		}
	}
	if g, err := VerifyEscalation(testSecret, esc, now.Add(2*time.Hour)); !errors.Is(err, ErrExpired) || g.UID != "u1" {
		t.Errorf("expired escalation grant = %+v, %v; want it with ErrExpired", g, err)
	}
}
