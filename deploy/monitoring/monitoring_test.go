// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package monitoring holds the bot's PrometheusRule and Grafana dashboard
// (deploy/monitoring); its test checks both against the code's metrics.
package monitoring

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

// metricNames are the metric names expr selects; it fails the test when
// expr does not parse.
func metricNames(t *testing.T, where, expr string) []string {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return nil
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	if len(names) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	return names
}

// served reports whether name is a series internal/metrics serves (a
// histogram's _bucket, _sum and _count included).
func served(name string) bool {
	all := metrics.Names()
	if slices.Contains(all, name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(all, base) {
			return true
		}
	}
	return false
}

// TestPrometheusRuleUsesTheBotsMetrics parses every rule of
// prometheusrule.yaml with Prometheus' parser and checks each metric it
// names exists, and that each health condition of the bot has its alert.
func TestPrometheusRuleUsesTheBotsMetrics(t *testing.T) {
	raw, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Alert       string            `json:"alert"`
					Expr        string            `json:"expr"`
					For         string            `json:"for"`
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(raw, &rule); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
		t.Fatalf("apiVersion %q kind %q", rule.APIVersion, rule.Kind)
	}
	var alerts []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			for _, name := range metricNames(t, r.Alert, r.Expr) {
				if !served(name) {
					t.Errorf("%s uses %s, which internal/metrics does not serve", r.Alert, name)
				}
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s needs a severity label, a summary and a description", r.Alert)
			}
		}
	}
	for _, want := range []string{"KafkabotSocketModeDown", "KafkabotRepairsDisabled", "KafkabotSweepNotRunning",
		"KafkabotSweepNoLeader", "KafkabotRepairFailed", "KafkabotEscalationOpened"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("prometheusrule.yaml has no alert %s", want)
		}
	}
}

// TestGrafanaDashboardLoads reads grafana-dashboard.json as Grafana's
// dashboard model and checks every panel's query parses and names metrics
// the bot serves.
func TestGrafanaDashboardLoads(t *testing.T) {
	raw, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("grafana-dashboard.json is not valid JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard title %q uid %q with %d panels", d.Title, d.UID, len(d.Panels))
	}
	seen := map[int]bool{}
	used := map[string]bool{}
	for _, p := range d.Panels {
		if seen[p.ID] {
			t.Errorf("two panels with id %d", p.ID)
		}
		seen[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			for _, name := range metricNames(t, "panel "+p.Title, target.Expr) {
				if !served(name) {
					t.Errorf("panel %q uses %s, which internal/metrics does not serve", p.Title, name)
				}
				used[name] = true
			}
		}
	}
	for _, name := range metrics.Names() {
		if strings.HasPrefix(name, "kafkabot_") && !used[name] && !used[name+"_bucket"] {
			t.Errorf("no panel shows %s", name)
		}
	}
}
