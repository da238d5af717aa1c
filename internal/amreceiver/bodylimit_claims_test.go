// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package amreceiver

import (
	"bytes"
	"log/slog"
	"net/http"
	"testing"
)

// TestDefaultBodyLimitIsOneMiB backs README's "Bodies over 1 MiB (413)
// ... are refused; nothing in a refused payload is acted on" with the
// receiver as bot serve builds it (no MaxBodyBytes: the default): a valid
// webhook padded to exactly 1 MiB is read, one byte more is refused with
// 413 and reaches no sink.
func TestDefaultBodyLimitIsOneMiB(t *testing.T) {
	const mib = 1 << 20
	good := payload(t, crashAlert("firing", "kafka", "kafka-broker-0"))
	cases := []struct {
		name   string
		size   int
		status int
	}{
		{"exactly 1 MiB", mib, http.StatusOK},
		{"1 MiB and one byte", mib + 1, http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink := &fakeSink{}
			var logs bytes.Buffer
			rc, err := New(Options{Token: testToken, Sink: sink, DefaultChannel: alertChannel,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			// Trailing white space is allowed after the JSON object.
			body := append(append([]byte{}, good...), bytes.Repeat([]byte(" "), c.size-len(good))...)
			rec := post(rc, "/alertmanager", "Bearer "+testToken, body)
			if rec.Code != c.status {
				t.Fatalf("a %d-byte body: status %d, want %d: %s", len(body), rec.Code, c.status, rec.Body)
			}
			if got := len(sink.got); (c.status == http.StatusOK) != (got == 1) {
				t.Errorf("a %d-byte body with status %d reached the sink %d times", len(body), rec.Code, got)
			}
		})
	}
}
