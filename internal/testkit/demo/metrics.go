// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

// repairsRecorded is the bot's count of finished repairs, all outcomes.
func repairsRecorded() float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "kafkabot_repairs_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// PrintMetrics shows the bot's own series as `bot serve` exposes them on
// /metrics, through the same handler (histogram buckets left out).
func PrintMetrics(w io.Writer) error {
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		return fmt.Errorf("GET /metrics answered %d", rec.Code)
	}
	fmt.Fprintf(w, "\nGET /metrics (excerpt: the bot's series, without histogram buckets):\n\n")
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "kafkabot_") && !strings.Contains(line, "_bucket{") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading /metrics: %w", err)
	}
	return nil
}
