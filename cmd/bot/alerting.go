package main

import (
	"fmt"
	"log/slog"

	"github.com/kafka-chatops/kafkabot/internal/alerting"
	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
)

// newSweeper builds the health sweep that alerts through notifier, from
// the configuration (ALERT_*, SWEEP_*, RESTART_ALERT_*, LEADER_ELECTION,
// POD_NAMESPACE).
func newSweeper(cfg *config.Config, cluster *kube.Client, engine *diagnose.Engine, notifier *handlers.AlertNotifier, log *slog.Logger) (*sweep.Sweeper, error) {
	s, err := sweep.New(sweep.Options{
		Client:           cluster,
		Engine:           engine,
		Notifier:         alerting.NewNotifier(notifier),
		Schedule:         cfg.SweepSchedule,
		RepeatInterval:   cfg.RepeatInterval,
		ResolveGrace:     cfg.ResolveGrace,
		GroupThreshold:   cfg.GroupThreshold,
		GroupWait:        cfg.GroupWait,
		RestartThreshold: cfg.RestartAlerts,
		RestartWindow:    cfg.RestartWindow,
		Summary:          sweep.SummaryMode(cfg.SweepSummary),
		StateNamespace:   cfg.PodNamespace,
		LeaderElection:   cfg.LeaderElection,
		Identity:         replicaIdentity(),
		Logger:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("health sweep: %w", err)
	}
	return s, nil
}
