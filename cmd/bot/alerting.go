package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

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
		Notifier:         sweepNotifier{notifier},
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

// sweepNotifier delivers the sweep's alerts through the Slack notifier
// (handlers keeps its own copies of the alert types so that it does not
// depend on the sweep's informers and leader election).
type sweepNotifier struct{ n *handlers.AlertNotifier }

var _ sweep.Notifier = sweepNotifier{}

func (s sweepNotifier) Notify(ctx context.Context, a sweep.Alert) (sweep.MessageRef, error) {
	ref, err := s.n.Notify(ctx, slackAlert(a))
	return sweep.MessageRef(ref), err
}

func (s sweepNotifier) NotifyGroup(ctx context.Context, g sweep.Group) (sweep.MessageRef, error) {
	ref, err := s.n.NotifyGroup(ctx, slackGroup(g))
	return sweep.MessageRef(ref), err
}

func (s sweepNotifier) Resolve(ctx context.Context, ref sweep.MessageRef, a sweep.Alert) error {
	return s.n.Resolve(ctx, handlers.MessageRef(ref), slackAlert(a))
}

func (s sweepNotifier) ResolveGroup(ctx context.Context, ref sweep.MessageRef, g sweep.Group) error {
	return s.n.ResolveGroup(ctx, handlers.MessageRef(ref), slackGroup(g))
}

func (s sweepNotifier) Summary(ctx context.Context, sum sweep.Summary) error {
	firing := make([]handlers.Alert, len(sum.Firing))
	for i, a := range sum.Firing {
		firing[i] = slackAlert(a)
	}
	return s.n.Summary(ctx, handlers.SweepSummary{At: sum.At, KafkaPods: sum.KafkaPods, Firing: firing, Silenced: sum.Silenced})
}

func slackAlert(a sweep.Alert) handlers.Alert {
	return handlers.Alert{
		Key: a.Key, Namespace: a.Namespace, Pod: a.Pod, PodUID: a.PodUID, Cluster: a.Cluster,
		Rule: a.Rule, Title: a.Title, Severity: a.Severity, Reason: string(a.Reason), Detail: a.Detail,
		Findings: a.Findings, Snapshot: a.Snapshot, ReadError: a.ReadError, StartsAt: a.StartsAt,
		Repeat: a.Repeat, Changed: a.Changed, Group: a.Group,
		Resolution: string(a.Resolution), ResolvedAt: a.ResolvedAt,
	}
}

func slackGroup(g sweep.Group) handlers.AlertGroup {
	alerts := make([]handlers.Alert, len(g.Alerts))
	for i, a := range g.Alerts {
		alerts[i] = slackAlert(a)
	}
	return handlers.AlertGroup{Key: g.Key, Namespace: g.Namespace, Cluster: g.Cluster, Alerts: alerts,
		Ref: handlers.MessageRef(g.Ref), Firing: g.Firing}
}

// sweepControl lets Slack users silence alerts and sweep on demand.
type sweepControl struct{ s *sweep.Sweeper }

var (
	_ handlers.Silencer     = sweepControl{}
	_ handlers.SweepTrigger = sweepControl{}
)

func (c sweepControl) Silence(ctx context.Context, key string, until time.Time, by string) (handlers.Silence, error) {
	s, err := c.s.Silence(ctx, key, until, by)
	if err != nil {
		return handlers.Silence{}, err
	}
	return slackSilence(s), nil
}

func (c sweepControl) Silences(ctx context.Context) ([]handlers.Silence, error) {
	list, err := c.s.Silences(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]handlers.Silence, len(list))
	for i, s := range list {
		out[i] = slackSilence(s)
	}
	return out, nil
}

func (c sweepControl) SweepNow(ctx context.Context) error {
	err := c.s.SweepNow(ctx)
	if errors.Is(err, sweep.ErrNotLeader) {
		return fmt.Errorf("%w: %w", handlers.ErrNotLeader, err)
	}
	return err
}

func slackSilence(s sweep.Silence) handlers.Silence {
	return handlers.Silence{ID: s.ID, Key: s.Key, Until: s.Until, By: s.By, CreatedAt: s.CreatedAt}
}
