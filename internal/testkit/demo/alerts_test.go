// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// The story's alert: posted by the sweep with Approve, Reject and Silence
// buttons, then rewritten as resolved (no buttons) with a line in its
// thread once the repaired broker stayed Ready for the grace.
func TestRunAlertsAndResolves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Out: io.Discard, Yes: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Alert.Channel != AlertChannel || res.Alert.TS == "" {
		t.Fatalf("no alert in %s: %+v", AlertChannel, res.Alert)
	}
	for _, want := range []struct {
		what  string
		match func(string) bool
	}{
		{"Approve", func(id string) bool { return id == approveAction }},
		{"Reject", func(id string) bool { return id == "kafkabot.reject" }},
		{"Silence", func(id string) bool { return strings.HasPrefix(id, silenceActionPrefix) }},
	} {
		if !hasButton(res.Alert, want.match) {
			t.Errorf("the alert as posted offers no %s button", want.what)
		}
	}
	if res.ResolvedAlert.TS != res.Alert.TS {
		t.Errorf("the resolved alert is message %q, want the alert %q rewritten", res.ResolvedAlert.TS, res.Alert.TS)
	}
	resolved := string(res.ResolvedAlert.Blocks)
	for _, want := range []string{"Resolved · kafka/" + BrokerPod, resolvedLine} {
		if !strings.Contains(resolved, want) {
			t.Errorf("the resolved alert lacks %q:\n%s", want, resolved)
		}
	}
	if buttons, err := Buttons(res.ResolvedAlert.Blocks); err != nil || len(buttons) != 0 {
		t.Errorf("the resolved alert offers %v (%v), want no buttons", buttons, err)
	}
	var lines int
	for _, m := range res.AlertThread {
		if strings.Contains(m.Text, resolvedLine) {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("the alert's thread has %d resolution lines, want 1: %+v", lines, res.AlertThread)
	}
}

func TestSelectBlocks(t *testing.T) {
	tests := []struct {
		name string
		ids  []string
		want string
	}{
		{"in message order", []string{"c", "h"}, `[{"type":"header","block_id":"h","text":{"type":"plain_text","text":"🔴 kafka/broker-0: metadata log diverged"}}` +
			`,{"type":"context","block_id":"c","elements":[{"type":"mrkdwn","text":"Requested by <@U0ALICE>"}]}]`},
		{"none", []string{"no-such-block"}, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selectBlocks(json.RawMessage(message), tt.ids...)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatal(err)
			}
			if gj, wj := mustJSON(t, g), mustJSON(t, w); gj != wj {
				t.Errorf("selectBlocks(%v) = %s, want %s", tt.ids, gj, wj)
			}
		})
	}
	if _, err := selectBlocks(json.RawMessage(`{"not":"an array"}`), "h"); err == nil {
		t.Error("blocks that are not an array: want an error")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
