// Package metrics defines the bot's Prometheus metrics, served on
// HTTP_ADDR /metrics. Every metric lives in one registry owned here so the
// packages that record them share no other state.
package metrics

import (
	"net/http"

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
	// QueueWaiting is the commands and clicks waiting for a worker.
	QueueWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kafkabot_queue_waiting",
		Help: "Commands and clicks waiting for a worker (at most QUEUE_SIZE).",
	})
)

func init() {
	Registry.MustRegister(Commands, AckLatency, Diagnoses, Repairs, RepairStepDuration, Alerts,
		SlackAPIErrors, SocketModeConnected, SocketModeReconnects, QueueWaiting,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}
