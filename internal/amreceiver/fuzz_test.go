// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package amreceiver

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/alert"
)

// FuzzWebhook posts arbitrary bodies and receiver-URL queries with the
// right token: the receiver never panics, answers 200 only for a version 4
// payload, and hands the sweep only well-formed pods and only channels
// the bot posts approvals to.
func FuzzWebhook(f *testing.F) {
	real := payload(f)
	f.Add(real, "")
	f.Add(real, "channel="+approvalChan)
	f.Add(real, "channel=C0OTHER")
	f.Add([]byte(`{"version":"4","alerts":[{"status":"firing","labels":{"namespace":"kafka","pod":"b-0","slack_channel":"C0ALERTS"}}]}`), "")
	f.Add([]byte(`{"version":"4","alerts":[{"status":"resolved","labels":{"namespace":"kafka","pod":"b-0","cluster":"prod-us"}}]}`), "")
	f.Add([]byte(`{"version":"4","alerts":null}`), "channel=")
	f.Add([]byte(`{"version":4}`), "")
	f.Add([]byte(`[]`), "")
	allowed := map[string]bool{"": true, approvalChan: true} // "" = ALERT_CHANNEL
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		sink := &fakeSink{outcome: alert.ExternalFiring}
		rc, err := New(Options{Token: testToken, Sink: sink, DefaultChannel: alertChannel, Channels: []string{approvalChan},
			ClusterName: "prod-eu", MaxBodyBytes: 4096, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, "http://bot/alertmanager", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawQuery = query
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := newRecorder()
		rc.ServeHTTP(w, req)
		if w.code == http.StatusOK {
			if p, err := DecodePayload(body); err != nil || p.Version != "4" {
				t.Fatalf("200 for a body the decoder refuses (%v)", err)
			}
		} else if len(sink.got) != 0 {
			t.Fatalf("status %d but the sweep got %+v", w.code, sink.got)
		}
		for _, a := range sink.got {
			if !allowed[a.Channel] || a.Namespace == "" || a.Pod == "" {
				t.Fatalf("the sweep got %+v", a)
			}
		}
	})
}

// recorder is a minimal http.ResponseWriter (httptest's pulls in more
// than a fuzz iteration needs).
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, code: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }
