// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

const serveSecret = "serve-test-approval-secret-0123456789abcdef"

// serveEnv points `bot serve` at the emulator and at a kubeconfig whose
// server is never contacted (no command is sent in these tests).
func serveEnv(t *testing.T, emu *slackemu.Server, appToken string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: test, user: {token: kube-test-token}}]
contexts: [{name: test, context: {cluster: test, user: test}}]
current-context: test
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for k, v := range map[string]string{
		"SLACK_APP_TOKEN": appToken, "SLACK_BOT_TOKEN": slackemu.DefaultBotToken, "SLACK_API_URL": emu.APIURL(),
		"APPROVAL_SECRET": serveSecret, "APPROVERS": "U0APPROVER", "KUBECONFIG": kubeconfig,
		"HTTP_ADDR": addr, "LOG_FORMAT": "json", "LOG_LEVEL": "debug", "KAFKA_NAMESPACES": "kafka",
	} {
		t.Setenv(k, v)
	}
	return "http://" + addr
}

// probeClient keeps no idle connections, so no goroutine outlives a test.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}

func httpStatus(url string) int {
	code, _ := httpStatusErr(url)
	return code
}

// httpStatusErr is httpStatus with the request's error (status 0).
func httpStatusErr(url string) (int, error) {
	resp, err := probeClient.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func waitStatus(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := httpStatusErr(url)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			// What it answered last says whether the bot was slow to see
			// the change or its HTTP server did not answer at all.
			t.Fatalf("%s never answered %d (last: status %d, error %v)", url, want, got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeProbesFollowTheSlackConnection(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	emu, err := slackemu.New(slackemu.Options{PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	base := serveEnv(t, emu, slackemu.DefaultAppToken)
	var stderr logging.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, nil, nil, io.Discard, &stderr) }()

	waitStatus(t, base+"/healthz", http.StatusOK)
	waitStatus(t, base+"/readyz", http.StatusOK)
	if got := httpStatus(base + "/metrics"); got != http.StatusOK {
		t.Errorf("/metrics answered %d", got)
	}

	// Slack goes away and refuses new connections: the bot stays alive
	// (/healthz) but is not ready.
	emu.InjectFault("apps.connections.open", slackemu.Fault{Error: "internal_error", Times: 1 << 20})
	emu.DropConnections()
	waitStatus(t, base+"/readyz", http.StatusServiceUnavailable)
	if got := httpStatus(base + "/healthz"); got != http.StatusOK {
		t.Errorf("/healthz answered %d while Slack is down", got)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("runServe after cancel: %v", err)
	}
	logs := stderr.String()
	for _, secret := range []string{slackemu.DefaultAppToken, slackemu.DefaultBotToken, serveSecret, "kube-test-token"} {
		if strings.Contains(logs, secret) {
			t.Errorf("a secret reached the log: %.12s…", secret)
		}
	}
	if !strings.Contains(logs, "serving") {
		t.Error("the serving line was not logged")
	}
	checkStartupWarnings(t, logs, "ALERT_CHANNEL", "APPROVAL_CHANNELS")
	if httpStatus(base+"/healthz") != 0 {
		t.Error("the HTTP server still answers after runServe returned")
	}
}

func TestServeExitsWhenSlackRefusesTheToken(t *testing.T) {
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	serveEnv(t, emu, "xapp-placeholder-revoked-app-token")
	var stderr logging.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = runServe(ctx, nil, nil, io.Discard, &stderr)
	if !errors.Is(err, handlers.ErrFatalConnection) || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("runServe = %v, want a fatal invalid_auth error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("runServe only returned at the test's deadline")
	}
	if strings.Contains(err.Error()+stderr.String(), "revoked") {
		t.Error("the token reached the error or the log")
	}
}

func TestServeRefusesBadConfiguration(t *testing.T) {
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	tests := []struct {
		name, key, value, want string
		args                   []string
	}{
		{"short approval secret", "APPROVAL_SECRET", "tiny-secret-value", "APPROVAL_SECRET", nil},
		{"user token for the bot", "SLACK_BOT_TOKEN", "xoxp-123", "SLACK_BOT_TOKEN", nil},
		{"bad approver", "APPROVERS", "alice", "APPROVERS", nil},
		{"missing rules file", "RULES_FILE", "/nonexistent/rules.yaml", "RULES_FILE", nil},
		{"unexpected argument", "", "", "unexpected argument", []string{"now"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serveEnv(t, emu, slackemu.DefaultAppToken)
			if tt.key != "" {
				t.Setenv(tt.key, tt.value)
			}
			err := runServe(t.Context(), tt.args, nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("runServe = %v, want an error about %s", err, tt.want)
			}
			if strings.Contains(err.Error(), serveSecret) || ((tt.key == "APPROVAL_SECRET" || tt.key == "SLACK_BOT_TOKEN") && strings.Contains(err.Error(), tt.value)) {
				t.Errorf("error echoes a secret: %v", err)
			}
		})
	}
}

// checkStartupWarnings: the log is JSON throughout, and each wanted
// setting (and no other) is warned about exactly once, at WARN.
func checkStartupWarnings(t *testing.T, logs string, settings ...string) {
	t.Helper()
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec struct{ Level, Msg, Setting string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %s", line)
			continue
		}
		if rec.Setting != "" {
			count[rec.Setting]++
			if rec.Level != "WARN" || !strings.Contains(rec.Msg, rec.Setting) {
				t.Errorf("startup warning %q at %s", rec.Msg, rec.Level)
			}
		}
	}
	for _, s := range settings {
		if count[s] != 1 {
			t.Errorf("%s warned %d times, want once", s, count[s])
		}
		delete(count, s)
	}
	if len(count) > 0 {
		t.Errorf("unexpected startup warnings: %v", count)
	}
}
