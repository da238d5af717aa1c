// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// startEmulator starts the Slack emulator for the test (closed when it
// ends) and a buffer for the bot's log.
func startEmulator(t *testing.T) (*slackemu.Server, *logging.Buffer) {
	t.Helper()
	emu, err := slackemu.New(slackemu.Options{PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Close)
	return emu, &logging.Buffer{}
}

// runUntilCleanup runs run (a Server's or a bot's Run with a context that
// cancel ends) until the test ends: its cleanup cancels it, checks that it
// returned no error and, when the test failed, prints the bot's log.
// Register it after the cleanups of what the bot uses (the Slack
// emulator), so that it stops first.
func runUntilCleanup(t *testing.T, cancel context.CancelFunc, run func() error, logs *logging.Buffer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if t.Failed() {
			t.Logf("bot log:\n%s", logs.String())
		}
	})
}

// waitConnected waits until connected reports the bot connected to Slack
// (it has no change notification: polled), or fails the test at ctx's end.
func waitConnected(ctx context.Context, t *testing.T, connected func() bool) {
	t.Helper()
	for !connected() {
		select {
		case <-ctx.Done():
			t.Fatal("the bot never connected")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
