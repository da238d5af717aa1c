// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package approval

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	testSecret  = []byte("0123456789abcdef0123456789abcdef-test-only")
	otherSecret = []byte("fedcba9876543210fedcba9876543210-other-key")
	issued      = time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
)

func sample() Approval {
	return Approval{
		ID:        "APPROVAL0000000000000000001",
		Namespace: "kafka",
		Pod:       "foobar-kafka-broker-0",
		PodUID:    "0d1f6c2e-6b1a-4c8e-9f4e-5d1f2a3b4c5d",
		Rule:      "metadata-log-offset-mismatch",
		Action:    "move-metadata-log",
		Target:    "__cluster_metadata-0",
		Requester: "U0REQUESTER",
		Channel:   "C0INCIDENTS",
		Team:      "T0TEAM",
		IssuedAt:  issued,
		ExpiresAt: issued.Add(30 * time.Minute),
	}
}

func mustSign(t testing.TB, a Approval) string {
	t.Helper()
	tok, err := Sign(testSecret, a)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return tok
}

func TestSignVerifyRoundTrip(t *testing.T) {
	a := sample()
	tok := mustSign(t, a)
	if len(tok) > MaxTokenLength {
		t.Fatalf("token has %d characters, limit %d", len(tok), MaxTokenLength)
	}
	got, err := Verify(testSecret, tok, issued.Add(time.Minute))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got != a {
		t.Fatalf("round trip changed the approval:\n got %+v\nwant %+v", got, a)
	}
}

func TestVerifyRefuses(t *testing.T) {
	good := mustSign(t, sample())
	part, sig, _ := strings.Cut(good, ".")

	reencode := func(mutate func(p map[string]any)) string {
		raw, _ := base64.RawURLEncoding.DecodeString(part)
		var p map[string]any
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		mutate(p)
		raw, _ = json.Marshal(p)
		return base64.RawURLEncoding.EncodeToString(raw) + "." + sig
	}
	otherKey, err := Sign(otherSecret, sample())
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(sig)
	if flipped[0] == 'A' {
		flipped[0] = 'B'
	} else {
		flipped[0] = 'A'
	}

	tests := []struct {
		name  string
		token string
		now   time.Time
		want  error
	}{
		{"empty", "", issued, ErrMalformed},
		{"no dot", part, issued, ErrMalformed},
		{"three parts", good + ".x", issued, ErrMalformed},
		{"signature not base64", part + ".!!!", issued, ErrMalformed},
		{"signature too short", part + ".AAAA", issued, ErrMalformed},
		{"signed with another key", otherKey, issued, ErrBadSignature},
		{"signature altered", part + "." + string(flipped), issued, ErrBadSignature},
		{"pod changed", reencode(func(p map[string]any) { p["pod"] = "foobar-kafka-broker-1" }), issued, ErrBadSignature},
		{"expiry extended", reencode(func(p map[string]any) { p["exp"] = issued.Add(48 * time.Hour).Unix() }), issued, ErrBadSignature},
		{"command smuggled in", reencode(func(p map[string]any) { p["cmd"] = "rm -rf /" }), issued, ErrBadSignature},
		{"too long", strings.Repeat("a", MaxTokenLength+1), issued, ErrTooLong},
		{"expired", good, issued.Add(30 * time.Minute), ErrExpired},
		{"long expired", good, issued.Add(72 * time.Hour), ErrExpired},
		{"issued in the future", good, issued.Add(-2 * ClockSkew), ErrNotYetValid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(testSecret, tt.token, tt.now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestVerifyRejectsWrongVersionAndUnknownFields(t *testing.T) {
	// Tokens signed with the right key but a payload this version does not
	// understand: only a differently-built bot could produce them.
	signRaw := func(body string) string {
		part := base64.RawURLEncoding.EncodeToString([]byte(body))
		return part + "." + base64.RawURLEncoding.EncodeToString(macOf(testSecret, domain, part))
	}
	base := `"id":"X","ns":"kafka","pod":"p","rule":"r","action":"a","channel":"C1","iat":1795000000,"exp":1795001000`
	now := time.Unix(1795000100, 0)
	tests := []struct {
		name, body string
		want       error
	}{
		{"version 2", `{"v":2,` + base + `}`, ErrUnsupportedVersion},
		{"unknown field", `{"v":1,` + base + `,"cmd":"x"}`, ErrMalformed},
		{"not JSON", `not json`, ErrMalformed},
		{"missing pod", `{"v":1,"id":"X","ns":"kafka","rule":"r","action":"a","channel":"C1","iat":1795000000,"exp":1795001000}`, ErrMalformed},
		{"exp before iat", `{"v":1,"id":"X","ns":"kafka","pod":"p","rule":"r","action":"a","channel":"C1","iat":1795001000,"exp":1795000000}`, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Verify(testSecret, signRaw(tt.body), now); !errors.Is(err, tt.want) {
				t.Fatalf("Verify error = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := Verify(testSecret, signRaw(`{"v":1,`+base+`}`), now); err != nil {
		t.Fatalf("control token refused: %v", err)
	}
}

func TestSignRefuses(t *testing.T) {
	tests := []struct {
		name   string
		secret []byte
		mutate func(*Approval)
		want   error
	}{
		{"weak secret", []byte("short"), func(*Approval) {}, ErrWeakSecret},
		{"no id", testSecret, func(a *Approval) { a.ID = "" }, ErrIncomplete},
		{"no pod", testSecret, func(a *Approval) { a.Pod = "" }, ErrIncomplete},
		{"no channel", testSecret, func(a *Approval) { a.Channel = "" }, ErrIncomplete},
		{"no expiry", testSecret, func(a *Approval) { a.ExpiresAt = time.Time{} }, ErrIncomplete},
		{"expiry before issue", testSecret, func(a *Approval) { a.ExpiresAt = a.IssuedAt.Add(-time.Second) }, ErrIncomplete},
		{"huge pod name", testSecret, func(a *Approval) { a.Pod = strings.Repeat("p", 3000) }, ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := sample()
			tt.mutate(&a)
			if _, err := Sign(tt.secret, a); !errors.Is(err, tt.want) {
				t.Fatalf("Sign error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCheckOrigin(t *testing.T) {
	a := sample()
	tests := []struct {
		team, channel string
		want          error
	}{
		{"T0TEAM", "C0INCIDENTS", nil},
		{"", "C0INCIDENTS", nil},
		{"T0TEAM", "C0OTHER", ErrWrongChannel},
		{"T0OTHER", "C0INCIDENTS", ErrWrongTeam},
	}
	for _, tt := range tests {
		if err := a.CheckOrigin(tt.team, tt.channel); !errors.Is(err, tt.want) {
			t.Errorf("CheckOrigin(%q, %q) = %v, want %v", tt.team, tt.channel, err, tt.want)
		}
	}
}

func TestNewIDIsRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewID()
		if len(id) < 20 || seen[id] {
			t.Fatalf("NewID returned %q (len %d, repeated %v)", id, len(id), seen[id])
		}
		seen[id] = true
	}
}

func TestTokenCarriesNoSecret(t *testing.T) {
	tok := mustSign(t, sample())
	raw, _ := base64.RawURLEncoding.DecodeString(strings.SplitN(tok, ".", 2)[0])
	if strings.Contains(string(raw), string(testSecret)) || strings.Contains(tok, string(testSecret)) {
		t.Fatal("token contains the secret")
	}
}

// FuzzVerify checks that Verify never panics and that nothing but the exact
// token we signed verifies: no other byte string, whatever its shape.
func FuzzVerify(f *testing.F) {
	genuine := mustSign(f, sample())
	f.Add(genuine)
	f.Add("")
	f.Add(".")
	f.Add(genuine + "=")
	f.Add(strings.ToUpper(genuine))
	now := issued.Add(time.Minute)
	f.Fuzz(func(t *testing.T, token string) {
		a, err := Verify(testSecret, token, now)
		if err == nil && token != genuine {
			t.Fatalf("forged token verified: %q -> %+v", token, a)
		}
		if _, err := Verify(otherSecret, token, now); err == nil {
			t.Fatalf("token verified under an unrelated key: %q", token)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	tok := mustSign(b, sample())
	now := issued.Add(time.Minute)
	for b.Loop() {
		if _, err := Verify(testSecret, tok, now); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClusterIsSignedAndKept: the cluster a token names is covered by its
// signature (changing it breaks the token) and survives the round trip; a
// token without one (signed before issue 15) still verifies, naming none.
func TestClusterIsSignedAndKept(t *testing.T) {
	a := sample()
	a.KubeCluster = "prod-eu"
	tok := mustSign(t, a)
	got, err := Verify(testSecret, tok, issued.Add(time.Minute))
	if err != nil || got.KubeCluster != "prod-eu" || got != a {
		t.Fatalf("Verify = %+v, %v; want the approval with its cluster", got, err)
	}
	// Rewrite the payload to name another cluster, keeping the signature.
	part, sig, _ := strings.Cut(tok, ".")
	body, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(body), `"cl":"prod-eu"`, `"cl":"prod-us"`, 1)
	if moved == string(body) {
		t.Fatalf("the payload does not carry the cluster as cl: %s", body)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte(moved)) + "." + sig
	if _, err := Verify(testSecret, forged, issued.Add(time.Minute)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a token moved to another cluster verified: %v", err)
	}
	old := sample() // no cluster: what a bot before issue 15 signed
	got, err = Verify(testSecret, mustSign(t, old), issued.Add(time.Minute))
	if err != nil || got.KubeCluster != "" {
		t.Fatalf("a token without a cluster: %+v, %v", got, err)
	}
	var p map[string]any
	b, _ := base64.RawURLEncoding.DecodeString(strings.Split(mustSign(t, old), ".")[0])
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if _, ok := p["cl"]; ok {
		t.Fatalf("a token without a cluster carries cl: %s", b)
	}
}
