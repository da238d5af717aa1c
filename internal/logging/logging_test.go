// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

func TestLoggerRedactsSecretsEverywhere(t *testing.T) {
	const approvalSecret = "approval-secret-0123456789abcdef0123456789"
	const botToken = "xoxb-placeholder-bot-token"
	const unknownToken = "xapp-placeholder-unknown-token"
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log := New(&buf, format, slog.LevelDebug, NewRedactor(approvalSecret, botToken, ""))
		log.Info("connecting with "+botToken,
			"secret", approvalSecret,
			"err", fmt.Errorf("auth failed for %s: %w", unknownToken, errors.New("invalid_auth")),
			slog.Group("slack", "token", botToken))
		log.With("k", approvalSecret).WithGroup("g").Warn("x", "v", "prefix "+approvalSecret+" suffix")
		out := buf.String()
		for _, s := range []string{approvalSecret, botToken, unknownToken} {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains a secret %q:\n%s", format, s, out)
			}
		}
		if n := strings.Count(out, Redacted); n < 6 {
			t.Errorf("%s output has %d redactions, want >= 6:\n%s", format, n, out)
		}
		if !strings.Contains(out, "invalid_auth") || !strings.Contains(out, "prefix") {
			t.Errorf("%s output lost the non-secret text:\n%s", format, out)
		}
	}
}

func TestRedactorIgnoresTooShortSecrets(t *testing.T) {
	r := NewRedactor("abc")
	if got := r.Redact("abc abc"); got != "abc abc" {
		t.Errorf("Redact = %q; a 3-byte secret must not be scrubbed (it would mangle logs)", got)
	}
}

// TestDurationsAreStrings: slog's JSON handler writes a time.Duration as
// integer nanoseconds (120000000000); the bot's logs say "2m0s", in JSON
// and text, at the top level, in groups and in With attributes.
func TestDurationsAreStrings(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		d := 1500 * time.Millisecond
		log := New(&buf, format, slog.LevelDebug, NewRedactor())
		log.With("settle", 2*time.Minute).Info("repair",
			"timeout", 10*time.Minute,
			slog.Duration("ttl", 30*time.Minute),
			slog.Any("ptr", &d),
			slog.Group("g", "wait", 10*time.Second))
		out := buf.String()
		for _, want := range []string{"2m0s", "10m0s", "30m0s", "1.5s", "10s"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %s:\n%s", format, want, out)
			}
		}
		for _, ns := range []string{"120000000000", "600000000000", "1800000000000", "10000000000"} {
			if strings.Contains(out, ns) {
				t.Errorf("%s output has a duration in nanoseconds (%s):\n%s", format, ns, out)
			}
		}
		if format == "json" {
			var rec map[string]any
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, out)
			}
			if rec["timeout"] != "10m0s" || rec["settle"] != "2m0s" || rec["g"].(map[string]any)["wait"] != "10s" {
				t.Errorf("JSON durations: %v", rec)
			}
		}
	}
}

// TestKlogGoesThroughTheBotsHandler: what client-go logs through klog
// (here: a real leader election on the fake clientset, plus klog's printf
// and structured calls as reflectors use them) comes out of the bot's
// handler as one JSON object per line, marked logger=klog, with secrets
// redacted; nothing is left as klog text.
func TestKlogGoesThroughTheBotsHandler(t *testing.T) {
	const token = "xoxb-placeholder-klog-secret"
	var buf Buffer
	log := New(&buf, "json", slog.LevelInfo, NewRedactor(token))
	RouteKlog(log)
	t.Cleanup(klog.ClearLogger)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "kafka-bot", Name: "sweep-" + token},
		Client:     fake.NewClientset().CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-0"},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { cancel() },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	le.Run(ctx)
	klog.Warningf("watch of *v1.Pod ended with: %s", "too old resource version")
	klog.ErrorS(errors.New("connection refused by "+token), "Failed to watch", "reflector", "pods")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	seen := map[string]map[string]any{}
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON (%v): %s\nall:\n%s", err, line, buf.String())
		}
		if rec["logger"] != "klog" {
			t.Errorf("record lacks logger=klog: %s", line)
		}
		seen[rec["msg"].(string)] = rec
	}
	for _, msg := range []string{"Attempting to acquire leader lease...", "Successfully acquired lease",
		"watch of *v1.Pod ended with: too old resource version", "Failed to watch"} {
		if seen[msg] == nil {
			t.Errorf("no JSON record %q in:\n%s", msg, buf.String())
		}
	}
	if rec := seen["Failed to watch"]; rec != nil && rec["level"] != "ERROR" {
		t.Errorf("klog.ErrorS came out at %v, want ERROR", rec["level"])
	}
	if rec := seen["Successfully acquired lease"]; rec != nil && rec["lock"] != "kafka-bot/sweep-"+Redacted {
		t.Errorf("lock attribute %v, want the lease name with the token redacted", rec["lock"])
	}
	if strings.Contains(buf.String(), token) {
		t.Errorf("a secret reached the log:\n%s", buf.String())
	}
}

// TestKlogContext: what client-go logs through klog's contextual logger
// of a ctx from KlogContext goes through that logger, with its attributes
// and logger=klog, not through the process-wide one.
func TestKlogContext(t *testing.T) {
	var global, scoped Buffer
	RouteKlog(slog.New(slog.NewJSONHandler(&global, nil)))
	t.Cleanup(klog.ClearLogger)
	ctx := KlogContext(context.Background(), slog.New(slog.NewJSONHandler(&scoped, nil)).With("cluster", "b"))
	klog.FromContext(ctx).Error(errors.New("forbidden"), "Failed to watch", "type", "state configmap")
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(scoped.String())), &rec); err != nil {
		t.Fatalf("the scoped logger got %q: %v", scoped.String(), err)
	}
	if rec["cluster"] != "b" || rec["logger"] != "klog" || rec["msg"] != "Failed to watch" || rec["level"] != "ERROR" {
		t.Errorf("record %v; want the scoped logger's ERROR with cluster=b, logger=klog", rec)
	}
	if global.String() != "" {
		t.Errorf("the process-wide logger got %q", global.String())
	}
}

// Issue 27 item 3 (review finding 14): text from a broker's log is scrubbed
// of the secrets it may carry before the bot posts it. Synthetic lines in
// the shapes Kafka, its JAAS modules, the images' env dumps and HTTP
// clients print.
func TestScrubSecretsInBrokerText(t *testing.T) {
	cases := []struct{ in, secret string }{
		{`ERROR Invalid config: password=hunter2-secret (kafka.Kafka$)`, "hunter2-secret"},
		{`sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="jaas-pass-123";`, "jaas-pass-123"},
		{`	ssl.keystore.password = keystore-pw-456`, "keystore-pw-456"},
		{`KAFKA_CFG_SSL_TRUSTSTORE_PASSWORD=trust-pw-789`, "trust-pw-789"},
		{`WARN OAuth token endpoint answered 401 to Authorization: Bearer abcDEF123456.ghiJKL-789_xyz (org.apache.kafka.common.security.oauthbearer)`, "abcDEF123456.ghiJKL-789_xyz"},
		{`token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrYWZrYSJ9.c2lnbmF0dXJl rejected`, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrYWZrYSJ9.c2lnbmF0dXJl"},
		{`schema registry https://svc:reg-pass-000@registry:8081 unreachable`, "reg-pass-000"},
		{`posting to xoxb-placeholder-not-a-token failed`, "xoxb-placeholder-not-a-token"},
	}
	for _, tc := range cases {
		got := ScrubSecrets(tc.in)
		if strings.Contains(got, tc.secret) || !strings.Contains(got, Redacted) {
			t.Errorf("ScrubSecrets(%q) = %q: the secret is still there", tc.in, got)
		}
	}
	// Kafka's own hiding and lines without a secret are left alone.
	for _, keep := range []string{
		"\tssl.keystore.password = [hidden]",
		"\tsasl.jaas.config = null",
		"[2025-01-01 00:00:00,000] ERROR Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)",
		"java.io.IOException: No space left on device",
	} {
		if got := ScrubSecrets(keep); got != keep {
			t.Errorf("ScrubSecrets(%q) = %q, want it unchanged", keep, got)
		}
	}
}
