// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

const serveAMToken = "serve-test-alertmanager-token-0123"

func postAlertmanager(t *testing.T, url, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"version":"4","status":"firing","alerts":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestServeAlertmanagerEndpoint: with ALERTMANAGER_TOKEN (and ALERT_CHANNEL)
// `bot serve` takes POST /alertmanager on HTTP_ADDR and refuses a missing
// or wrong token with 401 and a log line that never shows a token; without
// the token the endpoint does not exist.
func TestServeAlertmanagerEndpoint(t *testing.T) {
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "token set", false: "no token"}[on], func(t *testing.T) { serveAlertmanager(t, emu, on) })
	}
}

// serveAlertmanager runs `bot serve` with or without ALERTMANAGER_TOKEN.
func serveAlertmanager(t *testing.T, emu *slackemu.Server, on bool) {
	base := serveEnv(t, emu, slackemu.DefaultAppToken)
	t.Setenv("ALERT_CHANNEL", "C0KAFKAALERTS")
	if on {
		t.Setenv("ALERTMANAGER_TOKEN", serveAMToken)
	}
	var stderr logging.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, nil, nil, io.Discard, &stderr) }()
	waitStatus(t, base+"/healthz", http.StatusOK)

	url := base + alertmanagerPath
	if !on {
		if got := postAlertmanager(t, url, "Bearer "+serveAMToken); got != http.StatusNotFound {
			t.Errorf("without ALERTMANAGER_TOKEN: %d, want 404", got)
		}
	} else {
		for _, auth := range []string{"", "Bearer wrong-token-0123456789abcdef"} {
			if got := postAlertmanager(t, url, auth); got != http.StatusUnauthorized {
				t.Errorf("Authorization %q: %d, want 401", auth, got)
			}
		}
		// The right token passes authentication; this replica cannot
		// reach its (unreachable) API server, so it does not lead, and
		// an empty payload needs no sweep: 200.
		if got := postAlertmanager(t, url, "Bearer "+serveAMToken); got != http.StatusOK {
			t.Errorf("right token: %d, want 200", got)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("runServe: %v", err)
	}
	logs := stderr.String()
	if on {
		for _, want := range []string{"alertmanager webhook refused: no bearer token", "alertmanager webhook refused: wrong bearer token", `"alertmanager_receiver":true`} {
			if !strings.Contains(logs, want) {
				t.Errorf("log lacks %q", want)
			}
		}
	}
	for _, secret := range []string{serveAMToken, "wrong-token-0123456789abcdef"} {
		if strings.Contains(logs, secret) {
			t.Errorf("a token reached the log: %.10s…", secret)
		}
	}
}
