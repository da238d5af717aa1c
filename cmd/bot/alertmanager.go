package main

import (
	"fmt"
	"log/slog"

	"github.com/kafka-chatops/kafkabot/internal/amreceiver"
	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
)

// alertmanagerPath is where `bot serve` takes Alertmanager's webhook, on
// HTTP_ADDR beside /healthz and /metrics.
const alertmanagerPath = "/alertmanager"

// newAlertmanagerReceiver returns the Alertmanager webhook receiver, or nil
// when ALERTMANAGER_TOKEN is not set (the endpoint is then not served).
// Config validation guarantees a sweep (ALERT_CHANNEL) when a token is set.
func newAlertmanagerReceiver(cfg *config.Config, sweeper *sweep.Sweeper, log *slog.Logger) (*amreceiver.Receiver, error) {
	if cfg.AlertmanagerToken == "" {
		return nil, nil
	}
	if sweeper == nil {
		return nil, fmt.Errorf("ALERTMANAGER_TOKEN: the Alertmanager receiver needs ALERT_CHANNEL")
	}
	r, err := amreceiver.New(amreceiver.Options{
		Token:          cfg.AlertmanagerToken,
		Sink:           sweeper,
		DefaultChannel: cfg.AlertChannel,
		Channels:       cfg.ApprovalChannels,
		ClusterName:    cfg.ClusterName,
		Logger:         log,
	})
	if err != nil {
		return nil, fmt.Errorf("ALERTMANAGER_TOKEN: %w", err)
	}
	return r, nil
}
