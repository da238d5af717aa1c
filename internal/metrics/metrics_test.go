// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package metrics

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMetricsAreDocumented: every metric of the bot's own (kafkabot_*)
// has its line in docs/METRICS.md's table, and every metric the table
// names exists, so a metric cannot be added without a doc line.
func TestMetricsAreDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(kafkabot_[a-z_]+)` \\| (counter|gauge|histogram) \\|")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(string(raw), -1) {
		documented = append(documented, m[1])
	}
	var ours []string
	for _, n := range Names() {
		if strings.HasPrefix(n, "kafkabot_") {
			ours = append(ours, n)
		}
	}
	if len(ours) < 10 {
		t.Fatalf("Names() found only %v: the registry was not read", ours)
	}
	for _, n := range ours {
		if !slices.Contains(documented, n) {
			t.Errorf("metric %s has no line in docs/METRICS.md's table", n)
		}
	}
	for _, n := range documented {
		if !slices.Contains(ours, n) {
			t.Errorf("docs/METRICS.md describes %s, which internal/metrics does not define", n)
		}
	}
}

// TestTrackSweepReportsEachCluster: the sweep gauges follow the functions
// they were given, per cluster.
func TestTrackSweepReportsEachCluster(t *testing.T) {
	running := true
	TrackSweep("test-a", func() bool { return running }, func() bool { return false })
	families, err := Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) float64 {
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "cluster" && l.GetValue() == "test-a" {
						return m.GetGauge().GetValue()
					}
				}
			}
		}
		return -1
	}
	if value("kafkabot_sweep_running") != 1 || value("kafkabot_sweep_leading") != 0 {
		t.Errorf("running %v leading %v, want 1 and 0", value("kafkabot_sweep_running"), value("kafkabot_sweep_leading"))
	}
	running = false
	if families, err = Registry.Gather(); err != nil {
		t.Fatal(err)
	}
	if value("kafkabot_sweep_running") != 0 {
		t.Errorf("running %v after the sweep stopped, want 0", value("kafkabot_sweep_running"))
	}
}
