package demo

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Updates behave as on an API server: each write gets a new
// resourceVersion, and a write based on a stale one is refused.
func TestUpdatesUseResourceVersions(t *testing.T) {
	c := startCluster(t)
	cms := c.Clientset.CoreV1().ConfigMaps(BotNamespace)
	ctx := t.Context()
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "state", Namespace: BotNamespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.ResourceVersion == "" {
		t.Fatal("a created object has no resourceVersion")
	}
	tests := []struct {
		name         string
		version      func(current string) string
		wantConflict bool
	}{
		{"current version", func(current string) string { return current }, false},
		{"stale version", func(string) string { return created.ResourceVersion }, true},
		{"no version: unconditional", func(string) string { return "" }, false},
	}
	current := created.ResourceVersion
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := created.DeepCopy()
			cm.ResourceVersion = tt.version(current)
			cm.Data = map[string]string{"write": tt.name}
			got, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			if tt.wantConflict {
				if !apierrors.IsConflict(err) {
					t.Fatalf("Update = %v, want 409 Conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ResourceVersion == "" || got.ResourceVersion == current {
				t.Errorf("resourceVersion %q after an update of %q: want a new one", got.ResourceVersion, current)
			}
			current = got.ResourceVersion
		})
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
