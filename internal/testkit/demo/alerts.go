// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// The health sweep's side of the story: the bot runs as `bot serve` runs
// it with ALERT_CHANNEL set.
const (
	// AlertChannel is ALERT_CHANNEL, where the sweep posts its alerts.
	AlertChannel     = "C0KAFKAALERTS"
	AlertChannelName = "kafka-alerts"
	// BotNamespace is POD_NAMESPACE: the home of the sweep's leader Lease
	// and its alert-state ConfigMap.
	BotNamespace = "kafka-bot"
	// ResolveGrace is ALERT_RESOLVE_GRACE (its default): how long the
	// broker must stay Ready before its alert resolves. The sweep's clock
	// is stepped over it, so the demo does not wait.
	ResolveGrace = sweep.DefaultResolveGrace
	// botIdentity names the demo's replica in the leader Lease.
	botIdentity = "kafkabot-demo"
)

// silenceActionPrefix starts the action_id of every Silence control (the
// alert's menu, or the buttons that stand in for it).
const silenceActionPrefix = "kafkabot.silence"

// alertWait bounds the wait for the sweep's first alert: it is posted by
// the sweep's first evaluation, as soon as it leads.
const alertWait = 30 * time.Second

// resolvedLine marks the thread line the bot posts when the sweep resolves
// an alert because its pod recovered.
const resolvedLine = "is Ready again and stayed Ready for the grace period"

// alertWiring is the health sweep wired to the bot as cmd/bot/serve.go
// wires it when ALERT_CHANNEL is set: the sweep alerts through the bot's
// alert notifier (alertnotify), and Slack users silence and sweep through the sweep.
type alertWiring struct {
	notifier *alertnotify.Notifier
	sweeper  *sweep.Sweeper
	clock    *clocktesting.FakeClock
}

// newAlertWiring builds the sweep with the defaults `bot serve` has,
// except two settings that keep the demo fast and its output the same on
// every run: the sweep's clock is a fake one (the story steps it over the
// resolve grace) and pod changes are evaluated at once (ALERT_GROUP_WAIT
// 0s; a wait on a fake clock would last until the story stepped it).
// Leader election is on, on a Lease in the fake cluster, as in a
// two-replica deployment.
func newAlertWiring(kc *kube.Client, engine *diagnose.Engine, log *slog.Logger) (*alertWiring, error) {
	w := &alertWiring{
		notifier: alertnotify.New(AlertChannel),
		clock:    clocktesting.NewFakeClock(time.Now()),
	}
	var err error
	w.sweeper, err = sweep.New(sweep.Options{
		Client:         kc,
		Engine:         engine,
		Notifier:       w.notifier,
		ResolveGrace:   ResolveGrace,
		GroupWait:      -1,
		StateNamespace: BotNamespace,
		LeaderElection: true,
		Identity:       botIdentity,
		Clock:          w.clock,
		Logger:         log,
	})
	if err != nil {
		return nil, fmt.Errorf("building the health sweep: %w", err)
	}
	return w, nil
}

// botOptions adds the sweep's hooks to the bot's options, as serve does.
func (w *alertWiring) botOptions(opts handlers.Options) handlers.Options {
	opts.Alerts, opts.Clusters[0].Silencer, opts.Clusters[0].Sweeper = w.notifier, w.sweeper, w.sweeper
	return opts
}

// showAlert waits for the sweep's alert about the crash-looping broker and
// prints it. Nobody asked: the sweep found the broker on its own.
func (s *story) showAlert(ctx context.Context) (slackemu.Message, error) {
	s.scene("The alert, in #" + AlertChannelName)
	wctx, cancel := context.WithTimeout(ctx, alertWait)
	defer cancel()
	var alert slackemu.Message
	err := s.emu.WaitFor(wctx, func() bool {
		if list := s.emu.Messages(AlertChannel); len(list) > 0 {
			alert = list[0]
			return true
		}
		return false
	})
	if err != nil {
		return alert, fmt.Errorf("%w: the health sweep posted no alert in #%s: %w", ErrStoryFailed, AlertChannelName, err)
	}
	s.res.Alert = alert
	lease, err := s.cluster.Clientset.CoordinationV1().Leases(BotNamespace).Get(ctx, sweep.DefaultLeaseName, metav1.GetOptions{})
	if err != nil {
		return alert, fmt.Errorf("%w: reading the sweep's leader Lease: %w", ErrStoryFailed, err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder != botIdentity {
		return alert, fmt.Errorf("%w: the sweep's leader Lease is held by %q, not this replica", ErrStoryFailed, holder)
	}
	s.printf("Nobody has asked yet. The bot runs with ALERT_CHANNEL set, as `bot serve` does: its\n")
	s.printf("health sweep leads (Lease %s/%s, held by %s) and watches the\n", BotNamespace, lease.Name, holder)
	s.printf("Kafka pods. It saw %s crash-looping, diagnosed it and posts in\n", BrokerPod)
	s.printf("#%s:\n\n", AlertChannelName)
	if err := s.printMessage(alert); err != nil {
		return alert, err
	}
	// Approve and Reject come with a repairable finding: the approval
	// scene checks for them. Every alert can be silenced.
	if !hasButton(alert, func(id string) bool { return strings.HasPrefix(id, silenceActionPrefix) }) {
		return alert, fmt.Errorf("%w: the alert offers no Silence button", ErrStoryFailed)
	}
	// The sweep writes its state once Slack has taken the message.
	recorded := func() bool {
		cm, err := s.cluster.Clientset.CoreV1().ConfigMaps(BotNamespace).Get(wctx, sweep.DefaultStateName, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(slices.Collect(maps.Values(cm.Data)), func(v string) bool { return strings.Contains(v, alert.TS) })
	}
	if err := s.eventually(wctx, "the sweep to record the alert", recorded); err != nil {
		return alert, fmt.Errorf("%w: %w", ErrStoryFailed, err)
	}
	s.printf("\nThe alert is on record in ConfigMap %s/%s: a restarted or new leader does\n", BotNamespace, sweep.DefaultStateName)
	s.printf("not post it again, and the Silence buttons write their silences there.\n")
	return alert, nil
}

// hasButton reports whether m offers a button whose action_id matches.
func hasButton(m slackemu.Message, match func(actionID string) bool) bool {
	buttons, err := Buttons(m.Blocks)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(buttons, func(b Button) bool { return match(b.ActionID) })
}

// maxGraceSteps bounds how often the story steps the sweep's clock over
// the grace: once, unless the sweep's pod cache had not yet seen the new
// broker Ready when it swept.
const maxGraceSteps = 3

// showResolution sweeps now (as `/kafka sweep` does) until the alert
// resolves: the first sweep sees the recovered broker Ready and keeps the
// alert open for the grace; the story steps the sweep's clock over the
// grace and sweeps again. It prints the resolved alert and its thread line.
func (s *story) showResolution(ctx context.Context, alert slackemu.Message) error {
	s.scene("The alert resolves")
	if err := s.sweepDied(); err != nil {
		return err
	}
	if err := s.alerts.sweeper.SweepNow(ctx); err != nil {
		return fmt.Errorf("%w: sweeping: %w", ErrStoryFailed, err)
	}
	if isResolved(s.emu, alert) {
		return fmt.Errorf("%w: the alert resolved before %s stayed Ready for the grace (%s)", ErrStoryFailed, BrokerPod, ResolveGrace)
	}
	s.printf("%s is Ready, but the sweep keeps its alert open until it has stayed Ready\n", BrokerPod)
	s.printf("for ALERT_RESOLVE_GRACE (%s): a sweep now (what /kafka sweep asks for) leaves it open.\n", ResolveGrace)
	s.printf("The demo steps the sweep's clock over the grace and sweeps again.\n")
	resolved := false
	for step := 1; step <= maxGraceSteps && !resolved; step++ {
		if step > 1 {
			s.printf("(The sweep had not seen the new broker Ready yet: stepping over the grace again.)\n")
		}
		s.alerts.clock.Step(ResolveGrace)
		if err := s.alerts.sweeper.SweepNow(ctx); err != nil {
			return fmt.Errorf("%w: sweeping: %w", ErrStoryFailed, err)
		}
		// The resolution is posted by the sweep that found it (this one,
		// or the recheck the sweep queued for the end of the grace).
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		resolved = s.emu.WaitFor(wctx, func() bool { return isResolved(s.emu, alert) }) == nil
		cancel()
	}
	if !resolved {
		return fmt.Errorf("%w: the alert was not resolved after %s stayed Ready for %d× the grace", ErrStoryFailed, BrokerPod, maxGraceSteps)
	}
	var line slackemu.Message
	err := s.emu.WaitFor(ctx, func() bool {
		for _, m := range s.emu.Thread(AlertChannel, alert.TS) {
			if strings.Contains(m.Text, resolvedLine) {
				line = m
				return true
			}
		}
		return false
	})
	if err != nil {
		return fmt.Errorf("%w: the resolved alert has no line in its thread: %w", ErrStoryFailed, err)
	}
	final, _ := s.emu.Message(AlertChannel, alert.TS)
	s.res.ResolvedAlert, s.res.AlertThread = final, s.emu.Thread(AlertChannel, alert.TS)
	s.printf("\nThe sweep rewrites the alert in #%s. Its top now reads (the diagnosis below it\n", AlertChannelName)
	s.printf("is kept; the buttons are gone):\n\n")
	top, err := selectBlocks(final.Blocks, resolvedTopBlocks...)
	if err != nil {
		return err
	}
	if err := s.printMessage(slackemu.Message{Blocks: top, Text: final.Text}); err != nil {
		return err
	}
	s.printf("\nand says so in its thread:\n\n  🧵 %s\n", MrkdwnToText(line.Text, users))
	if left, err := Buttons(final.Blocks); err != nil || len(left) > 0 {
		return fmt.Errorf("%w: the resolved alert still offers %d buttons (%v)", ErrStoryFailed, len(left), err)
	}
	return s.sweepDied()
}

// resolvedTopBlocks are the blocks a resolved alert starts with: its
// header and the banner saying why it resolved.
var resolvedTopBlocks = []string{"kafkabot.header", "kafkabot.alert"}

// isResolved reports whether the alert message now says it is resolved.
func isResolved(emu *slackemu.Server, alert slackemu.Message) bool {
	m, ok := emu.Message(AlertChannel, alert.TS)
	return ok && strings.Contains(string(m.Blocks), "Resolved")
}

// sweepDied reports a health sweep that stopped for good before the story
// ended (`bot serve` would exit non-zero).
func (s *story) sweepDied() error {
	select {
	case err := <-s.sweepDone:
		s.sweepDone = nil
		return fmt.Errorf("%w: the health sweep stopped: %v", ErrStoryFailed, err)
	default:
		return nil
	}
}

// errSweepStopped is what sweepDone carries when the sweep returned
// without an error before the story ended.
var errSweepStopped = errors.New("it returned before the story ended")
