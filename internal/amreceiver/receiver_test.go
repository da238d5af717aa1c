// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package amreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/alert"
)

const (
	testToken    = "s3cret-token-for-tests-0123456789"
	alertChannel = "C0ALERTS"
	approvalChan = "C0APPROVALS"
)

// fakeSink records what the receiver handed on.
type fakeSink struct {
	mu      sync.Mutex
	got     []alert.External
	outcome alert.ExternalOutcome
	err     error
}

func (f *fakeSink) External(_ context.Context, a alert.External) (alert.ExternalOutcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, a)
	return f.outcome, f.err
}

func newTestReceiver(t *testing.T, sink *fakeSink, logs *bytes.Buffer) *Receiver {
	t.Helper()
	rc, err := New(Options{
		Token: testToken, Sink: sink, DefaultChannel: alertChannel, Channels: []string{approvalChan},
		ClusterName: "prod-eu", MaxBodyBytes: 4096,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// payload returns a version 4 webhook body read from testdata (a body the
// real Alertmanager v0.35.0 sent), with its alerts replaced when given.
func payload(t testing.TB, alerts ...Alert) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/webhook-v4.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) == 0 {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["alerts"] = alerts
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// crashName is crashAlert's alertname.
const crashName = "KubePodCrashLooping"

func crashAlert(status, ns, pod string, extra ...string) Alert {
	labels := map[string]string{"alertname": crashName, "namespace": ns, "pod": pod, "container": "kafka"}
	for i := 0; i+1 < len(extra); i += 2 {
		labels[extra[i]] = extra[i+1]
	}
	return Alert{Status: status, Labels: labels, Annotations: map[string]string{}}
}

func post(rc *Receiver, target, auth string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, req)
	return w
}

// TestAuthentication: only the exact bearer token is let in; every refusal
// is 401 with a log line that names the problem and never the header's
// value, and nothing reaches the sweep.
func TestAuthentication(t *testing.T) {
	for _, tc := range []struct {
		name, auth, wantLog string
		wantStatus          int
	}{
		{"missing", "", "no bearer token", http.StatusUnauthorized},
		{"basic auth", "Basic dXNlcjpwYXNz", "not a bearer token", http.StatusUnauthorized},
		{"empty bearer", "Bearer ", "not a bearer token", http.StatusUnauthorized},
		{"wrong token", "Bearer wrong-token-but-long-enough-xx", "wrong bearer token", http.StatusUnauthorized},
		{"token prefix", "Bearer " + testToken[:len(testToken)-1], "wrong bearer token", http.StatusUnauthorized},
		{"token plus suffix", "Bearer " + testToken + "x", "wrong bearer token", http.StatusUnauthorized},
		{"right token", "Bearer " + testToken, "", http.StatusOK},
		{"scheme case-insensitive", "bearer " + testToken, "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			sink := &fakeSink{outcome: alert.ExternalFiring}
			rc := newTestReceiver(t, sink, &logs)
			w := post(rc, "/alertmanager", tc.auth, payload(t, crashAlert("firing", "kafka", "broker-0")))
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.wantStatus, w.Body)
			}
			if tc.wantStatus != http.StatusOK {
				if len(sink.got) != 0 {
					t.Errorf("an unauthenticated request reached the sweep: %+v", sink.got)
				}
				if w.Header().Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
				if !strings.Contains(logs.String(), "alertmanager webhook refused: ") || !strings.Contains(logs.String(), tc.wantLog) {
					t.Errorf("log lacks %q:\n%s", tc.wantLog, logs.String())
				}
			} else if len(sink.got) != 1 {
				t.Errorf("the sweep got %d alerts, want 1", len(sink.got))
			}
			for _, secret := range []string{testToken, "wrong-token-but-long-enough-xx", "dXNlcjpwYXNz", testToken[:len(testToken)-1]} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the log prints a token %q:\n%s", secret, logs.String())
				}
			}
		})
	}
}

// TestRefusedPayloads: malformed, oversized, or misrouted payloads are
// refused as a whole, before any alert is acted on.
func TestRefusedPayloads(t *testing.T) {
	good := payload(t, crashAlert("firing", "kafka", "broker-0"))
	withField := bytes.Replace(good, []byte(`"version"`), []byte(`"surprise":1,"version"`), 1)
	for _, tc := range []struct {
		name, target, contentType string
		body                      []byte
		wantStatus                int
		wantText                  string
	}{
		{"not json", "/alertmanager", "", []byte("hello"), 400, "not Alertmanager's webhook payload"},
		{"unknown field", "/alertmanager", "", withField, 400, `unknown field "surprise"`},
		{"trailing data", "/alertmanager", "", append(append([]byte{}, good...), []byte(`{}`)...), 400, "data after the JSON object"},
		{"version 3", "/alertmanager", "", bytes.Replace(good, []byte(`"version":"4"`), []byte(`"version":"3"`), 1), 400, `version "3"`},
		{"too big", "/alertmanager", "", append(good, bytes.Repeat([]byte(" "), 5000)...), 413, "larger than 4096"},
		{"wrong content type", "/alertmanager", "text/plain", good, 415, "want application/json"},
		{"bad status", "/alertmanager", "", payload(t, crashAlert("pending", "kafka", "broker-0")), 400, `status "pending"`},
		{"query channel not allowed", "/alertmanager?channel=C0OTHER", "", good, 400, `channel "C0OTHER"`},
		{"two query channels", "/alertmanager?channel=C0ALERTS&channel=C0APPROVALS", "", good, 400, "names 2 channels"},
		{"label channel not allowed", "/alertmanager", "", payload(t,
			crashAlert("firing", "kafka", "broker-1"),
			crashAlert("firing", "kafka", "broker-0", "slack_channel", "C0RANDOM")), 400, `channel "C0RANDOM"`},
		{"bad namespace label", "/alertmanager", "", payload(t, crashAlert("firing", "Kafka NS", "broker-0")), 400, "not a namespace name"},
		{"bad pod label", "/alertmanager", "", payload(t, crashAlert("firing", "kafka", "broker_0/../x")), 400, "not a pod name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			sink := &fakeSink{outcome: alert.ExternalFiring}
			rc := newTestReceiver(t, sink, &logs)
			req := httptest.NewRequest(http.MethodPost, tc.target, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			w := httptest.NewRecorder()
			rc.ServeHTTP(w, req)
			if w.Code != tc.wantStatus || !strings.Contains(w.Body.String(), tc.wantText) {
				t.Fatalf("got %d %q, want %d containing %q", w.Code, w.Body, tc.wantStatus, tc.wantText)
			}
			if len(sink.got) != 0 {
				t.Errorf("a refused payload reached the sweep: %+v", sink.got)
			}
			if !strings.Contains(logs.String(), "alertmanager webhook refused") {
				t.Errorf("no log line for the refusal:\n%s", logs.String())
			}
		})
	}
}

// TestAlertsToSweep: what the sweep is asked, per payload.
func TestAlertsToSweep(t *testing.T) {
	for _, tc := range []struct {
		name    string
		target  string
		alerts  []Alert
		want    []alert.External
		ignored int
		other   int
	}{
		{"firing goes to the alert channel", "/alertmanager", []Alert{crashAlert("firing", "kafka", "broker-0")},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0", Firing: true}}, 0, 0},
		{"resolved", "/alertmanager", []Alert{crashAlert("resolved", "kafka", "broker-0")},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0"}}, 0, 0},
		{"the URL names the channel", "/alertmanager?channel=" + approvalChan, []Alert{crashAlert("firing", "kafka", "broker-0")},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0", Firing: true, Channel: approvalChan}}, 0, 0},
		{"the label wins over the URL", "/alertmanager?channel=" + approvalChan,
			[]Alert{crashAlert("firing", "kafka", "broker-0", "slack_channel", alertChannel)},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0", Firing: true}}, 0, 0},
		{"alerts without pod labels are ignored", "/alertmanager", []Alert{
			{Status: "firing", Labels: map[string]string{"alertname": "KafkaUnderReplicated", "namespace": "kafka"}},
			{Status: "firing", Labels: map[string]string{"alertname": "Watchdog"}},
			crashAlert("firing", "kafka", "broker-1")},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-1", Firing: true}}, 2, 0},
		{"another cluster's alert is not acted on", "/alertmanager", []Alert{
			crashAlert("firing", "kafka", "broker-0", "cluster", "prod-us"),
			crashAlert("firing", "kafka", "broker-1", "cluster", "prod-eu")},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-1", Firing: true}}, 0, 1},
		{"one action per pod, firing wins (and names the alert)", "/alertmanager", []Alert{
			crashAlert("resolved", "kafka", "broker-0", "container", "init", "alertname", "KubePodNotReady"),
			crashAlert("firing", "kafka", "broker-0", "slack_channel", approvalChan),
			crashAlert("resolved", "kafka", "broker-0")},
			[]alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0", Firing: true, Channel: approvalChan}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			sink := &fakeSink{outcome: alert.ExternalFiring}
			rc := newTestReceiver(t, sink, &logs)
			w := post(rc, tc.target, "Bearer "+testToken, payload(t, tc.alerts...))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if !reflect.DeepEqual(sink.got, tc.want) {
				t.Errorf("the sweep got %+v\nwant %+v", sink.got, tc.want)
			}
			var sum Summary
			if err := json.Unmarshal(w.Body.Bytes(), &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Ignored != tc.ignored || sum.OtherCluster != tc.other {
				t.Errorf("summary %+v, want ignored %d, other cluster %d", sum, tc.ignored, tc.other)
			}
			if tc.other > 0 && !strings.Contains(logs.String(), "names another cluster than CLUSTER_NAME") {
				t.Errorf("no log line for the other cluster's alert:\n%s", logs.String())
			}
			if tc.ignored > 0 && !strings.Contains(logs.String(), "without namespace and pod labels ignored") {
				t.Errorf("no debug line for the ignored alerts:\n%s", logs.String())
			}
		})
	}
}

// TestSinkErrors: a replica that does not lead answers 503 and a failed
// post 500, so Alertmanager retries (the shared alert state keeps a retry
// from posting twice).
func TestSinkErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{alert.ErrNotLeader, http.StatusServiceUnavailable},
		{errors.New("slack said no"), http.StatusInternalServerError},
		{nil, http.StatusOK},
	} {
		var logs bytes.Buffer
		sink := &fakeSink{outcome: alert.ExternalUnknownPod, err: tc.err}
		rc := newTestReceiver(t, sink, &logs)
		w := post(rc, "/alertmanager", "Bearer "+testToken, payload(t, crashAlert("firing", "kafka", "broker-0")))
		if w.Code != tc.want {
			t.Errorf("sink error %v: status %d, want %d", tc.err, w.Code, tc.want)
		}
		if tc.err != nil && !strings.Contains(w.Body.String(), tc.err.Error()) {
			t.Errorf("the answer does not say why: %s", w.Body)
		}
	}
}

// TestRealPayloadDecodes: the body the real Alertmanager sent (testdata)
// passes the strict decoder.
func TestRealPayloadDecodes(t *testing.T) {
	p, err := DecodePayload(payload(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Alerts) == 0 || p.Alerts[0].Labels["pod"] == "" {
		t.Fatalf("decoded %+v", p)
	}
}

func TestNewChecksOptions(t *testing.T) {
	sink := &fakeSink{}
	for _, o := range []Options{
		{Token: "short", Sink: sink, DefaultChannel: alertChannel},
		{Token: testToken, DefaultChannel: alertChannel},
		{Token: testToken, Sink: sink},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// TestSourceNamesTheSender: the sweep is told who raised each alert, so
// its message says "Alert from Alertmanager" with the alertname rather
// than "the health sweep"; Options.Source renames the sender.
func TestSourceNamesTheSender(t *testing.T) {
	for _, tc := range []struct{ option, want string }{{"", "Alertmanager"}, {"Alertmanager (prod-eu)", "Alertmanager (prod-eu)"}} {
		sink := &fakeSink{outcome: alert.ExternalFiring}
		rc, err := New(Options{Token: testToken, Sink: sink, DefaultChannel: alertChannel, Source: tc.option, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		w := post(rc, "/alertmanager", "Bearer "+testToken, payload(t, crashAlert("firing", "kafka", "broker-0", "alertname", "KafkaBrokerDown")))
		if w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if len(sink.got) != 1 || sink.got[0].Source != tc.want || sink.got[0].SourceAlert != "KafkaBrokerDown" {
			t.Errorf("Source option %q: the sweep got %+v, want source %q and alert KafkaBrokerDown", tc.option, sink.got, tc.want)
		}
	}
}

// TestClusterRouting: on a multi-cluster bot each alert goes to the sweep
// of the cluster its cluster label names, and only there; an alert without
// the label, or naming a cluster the bot does not serve, is refused and
// logged (the same namespace and pod exist in both clusters: never a
// guess). A route may name a cluster's own approval channel only for that
// cluster's alerts.
func TestClusterRouting(t *testing.T) {
	const euChan = "C0EUAPPROVALS"
	for _, tc := range []struct {
		name     string
		target   string
		alerts   []Alert
		eu, us   []alert.External
		other    int
		status   int
		wantPods []string
	}{
		{name: "each to its cluster", target: "/alertmanager", alerts: []Alert{
			crashAlert("firing", "kafka", "broker-0", "cluster", "eu"),
			crashAlert("resolved", "kafka", "broker-0", "cluster", "us")},
			eu: []alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0", Firing: true}},
			us: []alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0"}}, status: http.StatusOK,
			wantPods: []string{"eu/kafka/broker-0", "us/kafka/broker-0"}},
		{name: "no cluster label is refused", target: "/alertmanager", alerts: []Alert{
			crashAlert("firing", "kafka", "broker-0"),
			crashAlert("firing", "kafka", "broker-1", "cluster", "ap")},
			other: 2, status: http.StatusOK},
		{name: "a cluster's approval channel for its own alert", target: "/alertmanager", alerts: []Alert{
			crashAlert("firing", "kafka", "broker-0", "cluster", "eu", "slack_channel", euChan)},
			eu:     []alert.External{{Source: DefaultSource, SourceAlert: crashName, Namespace: "kafka", Pod: "broker-0", Firing: true, Channel: euChan}},
			status: http.StatusOK, wantPods: []string{"eu/kafka/broker-0"}},
		{name: "another cluster's approval channel is refused", target: "/alertmanager", alerts: []Alert{
			crashAlert("firing", "kafka", "broker-0", "cluster", "us", "slack_channel", euChan)},
			status: http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			eu, us := &fakeSink{outcome: alert.ExternalFiring}, &fakeSink{outcome: alert.ExternalFiring}
			rc, err := New(Options{
				Token: testToken, DefaultChannel: alertChannel, Channels: []string{approvalChan},
				Clusters: map[string]Cluster{"eu": {Sink: eu, Channels: []string{euChan}}, "us": {Sink: us}},
				Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			w := post(rc, tc.target, "Bearer "+testToken, payload(t, tc.alerts...))
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if !reflect.DeepEqual(eu.got, tc.eu) || !reflect.DeepEqual(us.got, tc.us) {
				t.Errorf("eu got %+v, us got %+v\nwant eu %+v, us %+v", eu.got, us.got, tc.eu, tc.us)
			}
			if tc.status != http.StatusOK {
				return
			}
			var sum Summary
			if err := json.Unmarshal(w.Body.Bytes(), &sum); err != nil {
				t.Fatal(err)
			}
			if sum.OtherCluster != tc.other || len(sum.Pods) != len(tc.wantPods) {
				t.Errorf("summary %+v, want %d refused and pods %v", sum, tc.other, tc.wantPods)
			}
			for _, p := range tc.wantPods {
				if _, ok := sum.Pods[p]; !ok {
					t.Errorf("summary lacks %s: %+v", p, sum.Pods)
				}
			}
			if tc.other > 0 && !strings.Contains(logs.String(), "names no cluster this bot serves") {
				t.Errorf("no log line for the refused alerts:\n%s", logs.String())
			}
		})
	}
	if _, err := New(Options{Token: testToken, DefaultChannel: alertChannel, Sink: &fakeSink{},
		Clusters: map[string]Cluster{"eu": {Sink: &fakeSink{}}}}); err == nil {
		t.Errorf("New took both Sink and Clusters")
	}
}
