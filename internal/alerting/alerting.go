// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package alerting connects the health sweep (internal/sweep) to the Slack
// bot (internal/handlers). handlers keeps its own copies of the alert types
// so that it does not depend on the sweep's informers and leader election;
// this package converts between the two, field by field.
package alerting

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
)

// Notifier delivers the sweep's alerts through the Slack notifier.
type Notifier struct{ n *handlers.AlertNotifier }

var _ sweep.Notifier = Notifier{}

// NewNotifier adapts the Slack alert notifier to sweep.Notifier.
func NewNotifier(n *handlers.AlertNotifier) Notifier { return Notifier{n: n} }

// Notify posts one alert.
func (s Notifier) Notify(ctx context.Context, a sweep.Alert) (sweep.MessageRef, error) {
	ref, err := s.n.Notify(ctx, slackAlert(a))
	return sweep.MessageRef(ref), err
}

// NotifyGroup posts or extends a grouped alert.
func (s Notifier) NotifyGroup(ctx context.Context, g sweep.Group) (sweep.MessageRef, error) {
	ref, err := s.n.NotifyGroup(ctx, slackGroup(g))
	return sweep.MessageRef(ref), err
}

// Resolve marks an alert resolved.
func (s Notifier) Resolve(ctx context.Context, ref sweep.MessageRef, a sweep.Alert) error {
	return s.n.Resolve(ctx, handlers.MessageRef(ref), slackAlert(a))
}

// ResolveGroup marks a grouped alert resolved.
func (s Notifier) ResolveGroup(ctx context.Context, ref sweep.MessageRef, g sweep.Group) error {
	return s.n.ResolveGroup(ctx, handlers.MessageRef(ref), slackGroup(g))
}

// Summary posts the periodic sweep summary.
func (s Notifier) Summary(ctx context.Context, sum sweep.Summary) error {
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
		Repeat: a.Repeat, Changed: a.Changed, Group: a.Group, Channel: a.Channel,
		Source: a.Source, SourceAlert: a.SourceAlert,
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

// Control lets Slack users silence alerts and sweep on demand: it is the
// handlers.Silencer and handlers.SweepTrigger of a Sweeper.
type Control struct{ s *sweep.Sweeper }

var (
	_ handlers.Silencer     = Control{}
	_ handlers.SweepTrigger = Control{}
)

// NewControl adapts a Sweeper for the Slack side.
func NewControl(s *sweep.Sweeper) Control { return Control{s: s} }

// Silence silences key until the given time.
func (c Control) Silence(ctx context.Context, key string, until time.Time, by string) (handlers.Silence, error) {
	s, err := c.s.Silence(ctx, key, until, by)
	if err != nil {
		return handlers.Silence{}, err
	}
	return slackSilence(s), nil
}

// Silences lists the active silences.
func (c Control) Silences(ctx context.Context) ([]handlers.Silence, error) {
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

// EndSilence ends silence id now; an unknown or ended one wraps
// handlers.ErrNoSuchSilence.
func (c Control) EndSilence(ctx context.Context, id, by string) (handlers.Silence, error) {
	s, err := c.s.EndSilence(ctx, id, by)
	if errors.Is(err, sweep.ErrNoSuchSilence) {
		return handlers.Silence{}, fmt.Errorf("%w: %w", handlers.ErrNoSuchSilence, err)
	}
	if err != nil {
		return handlers.Silence{}, err
	}
	return slackSilence(s), nil
}

// SweepNow runs a sweep on the leader; elsewhere it wraps handlers.ErrNotLeader.
func (c Control) SweepNow(ctx context.Context) error {
	err := c.s.SweepNow(ctx)
	if errors.Is(err, sweep.ErrNotLeader) {
		return fmt.Errorf("%w: %w", handlers.ErrNotLeader, err)
	}
	return err
}

func slackSilence(s sweep.Silence) handlers.Silence {
	return handlers.Silence{ID: s.ID, Key: s.Key, Until: s.Until, By: s.By, CreatedAt: s.CreatedAt}
}
