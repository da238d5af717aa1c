// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package metrics defines the bot's Prometheus metrics, served on
// HTTP_ADDR /metrics. Every metric lives in one registry owned here so the
// packages that record them share no other state.
package metrics

import (
	"net/http"
	"regexp"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every metric of the bot, plus Go runtime and process metrics.
var Registry = prometheus.NewRegistry()

var (
	// Commands counts /kafka commands by subcommand and outcome.
	Commands = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkabot_commands_total",
		Help: "Slash commands handled, by subcommand and outcome.",
	}, []string{"subcommand", "outcome"})
	// AckLatency is the time from receiving an envelope to sending its ack.
	AckLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kafkabot_ack_latency_seconds",
		Help:    "Time from receiving a Socket Mode envelope to acknowledging it.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 3},
	})
	// Diagnoses counts findings by rule (rule "none" when nothing matched).
	Diagnoses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkabot_diagnoses_total",
		Help: "Diagnoses made, by the best finding's rule.",
	}, []string{"rule"})
	// Repairs counts finished repairs by outcome.
	Repairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkabot_repairs_total",
		Help: "Repairs finished, by outcome.",
	}, []string{"outcome"})
	// RepairStepDuration is how long each repair step took.
	RepairStepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kafkabot_repair_step_duration_seconds",
		Help:    "Duration of repair steps, by step.",
		Buckets: prometheus.ExponentialBuckets(0.01, 3, 10),
	}, []string{"step"})
	// Alerts counts alerts by state (fired, resolved, grouped).
	Alerts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkabot_alerts_total",
		Help: "Crash-loop alerts, by state.",
	}, []string{"state"})
	// SlackAPIErrors counts Slack Web API errors by method and error code.
	SlackAPIErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkabot_slack_api_errors_total",
		Help: "Slack Web API errors, by method and error code.",
	}, []string{"method", "error"})
	// SocketModeConnected is 1 while the Socket Mode connection is up.
	SocketModeConnected = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kafkabot_socket_mode_connected",
		Help: "1 while the Slack Socket Mode connection is up, else 0.",
	})
	// SocketModeReconnects counts Socket Mode connections after the first.
	SocketModeReconnects = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kafkabot_socket_mode_reconnects_total",
		Help: "Socket Mode reconnections after the first connection.",
	})
	// RepairsEnabled is 1 where the admission self-check lets repairs run.
	RepairsEnabled = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kafkabot_repairs_enabled",
		Help: "1 where the admission self-check lets repairs run (the policy enforced, or its absence acknowledged), 0 where repairs are disabled; by cluster and Kafka namespace.",
	}, []string{"cluster", "namespace"})
	// KafkaRequests counts the requests the bot sent to Kafka brokers (its
	// own view of health: DescribeQuorum, Metadata, DescribeCluster,
	// DescribeConfigs, and the client's ApiVersions and SASL handshakes),
	// by request name and outcome (ok, error).
	KafkaRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkabot_kafka_requests_total",
		Help: "Requests written to Kafka brokers over the Kafka protocol, by request and outcome.",
	}, []string{"request", "outcome"})
	// QueueWaiting is the commands and clicks waiting for a worker.
	QueueWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kafkabot_queue_waiting",
		Help: "Commands and clicks waiting for a worker (at most QUEUE_SIZE).",
	})
)

func init() {
	Registry.MustRegister(Commands, AckLatency, Diagnoses, Repairs, RepairStepDuration, Alerts,
		SlackAPIErrors, SocketModeConnected, SocketModeReconnects, KafkaRequests, QueueWaiting, RepairsEnabled, sweeps,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

// Sweep state, read from each cluster's sweep at every scrape.
var (
	sweepRunningDesc = prometheus.NewDesc("kafkabot_sweep_running",
		"1 while the cluster's health sweep can run (its alert state is readable), else 0; by cluster.", []string{"cluster"}, nil)
	sweepLeadingDesc = prometheus.NewDesc("kafkabot_sweep_leading",
		"1 on the replica that leads the cluster's health sweep (it sweeps and alerts), else 0; by cluster.", []string{"cluster"}, nil)
)

// sweepCollector reports every tracked sweep's state when scraped.
type sweepCollector struct {
	mu     sync.Mutex
	sweeps map[string]sweepState
}

// sweepState reads one sweep's state.
type sweepState struct{ running, leading func() bool }

var sweeps = &sweepCollector{sweeps: map[string]sweepState{}}

// TrackSweep reports cluster's health sweep as kafkabot_sweep_running and
// kafkabot_sweep_leading from now on (a later call for the same cluster
// replaces the earlier one).
func TrackSweep(cluster string, running, leading func() bool) {
	sweeps.mu.Lock()
	defer sweeps.mu.Unlock()
	sweeps.sweeps[cluster] = sweepState{running: running, leading: leading}
}

// Describe sends the two descriptors.
func (c *sweepCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sweepRunningDesc
	ch <- sweepLeadingDesc
}

// Collect sends each tracked sweep's two gauges.
func (c *sweepCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for cluster, s := range c.sweeps {
		ch <- prometheus.MustNewConstMetric(sweepRunningDesc, prometheus.GaugeValue, boolValue(s.running()), cluster)
		ch <- prometheus.MustNewConstMetric(sweepLeadingDesc, prometheus.GaugeValue, boolValue(s.leading()), cluster)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// descName reads a descriptor's metric name from its String form
// (Desc{fqName: "name", ...}); client_golang exports no accessor.
var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

// Names lists the name of every metric family the registry serves, the
// bot's own and the Go runtime's and process's, sorted. A histogram's
// series add _bucket, _sum and _count to its name.
func Names() []string {
	ch := make(chan *prometheus.Desc)
	go func() {
		Registry.Describe(ch)
		close(ch)
	}()
	var names []string
	for d := range ch {
		if m := descName.FindStringSubmatch(d.String()); m != nil && !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}
