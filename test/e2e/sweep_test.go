// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// alertChannel is ALERT_CHANNEL in the sweep scenarios.
const alertChannel = "C0KAFKAALERTS"

// actionSilencePrefix starts the action_id of every Silence control (the
// alert's menu, or the buttons that stand in for it).
const actionSilencePrefix = "kafkabot.silence"

// alertGrace is ALERT_RESOLVE_GRACE; the sweep's clock is fake, so the
// grace passes when the test steps it.
const alertGrace = 5 * time.Minute

// TestSweepAlertThroughSlackEndToEnd: nobody asks; the health sweep, wired
// as `bot serve` wires it (sweep.New with the Slack alertnotify.Notifier, the bot
// ServiceAccount on the real API server, leader election on a real Lease,
// alert state in a ConfigMap), sees the broker start crash-looping and
// posts one alert in ALERT_CHANNEL: the diagnosis, Approve and Silence
// buttons. An approver approves the alert itself; the repair runs in the
// alert's thread and the broker comes back Ready. The alert stays open
// while the broker has been Ready for less than the grace, then its message
// is rewritten as resolved (the repair outcome kept, no buttons) and a line
// is posted in its thread. No second alert is posted meanwhile. When the
// repaired broker crash-loops again, inside the repeat interval, that is a
// new incident: one new alert, naming the new pod, and the first stays
// resolved.
func TestSweepAlertThroughSlackEndToEnd(t *testing.T) {
	w := newWorld(t, "kafka-e2e-sweep", worldOptions{})
	for _, id := range []string{"0", "1", "2"} {
		c := controller("foobar-kafka-controller-"+id, id)
		w.createNode(c, "")
		w.ready(c.name)
	}
	vol := newBrokerVolume(t, seedNodeID)
	old := w.createNode(broker(seedBroker, seedNodeID), vol)
	w.ready(seedBroker)
	before := readTree(t, vol)
	debugPods := w.recordDebugPods()

	clk := clocktesting.NewFakeClock(time.Now())
	bot := w.startAlertingBot("kafkabot-0", clk)
	testenv.WaitFor(t, "the sweep to lead", func(context.Context) (bool, error) { return bot.sweeper.Leading(), nil })
	if n := len(w.emu.Messages(alertChannel)); n != 0 {
		t.Fatalf("a healthy cluster raised %d alert messages", n)
	}

	// The broker starts crash-looping: the pod watch raises one alert.
	w.crashLoop(seedBroker, seedLog())
	w.waitSlack("the alert in ALERT_CHANNEL", func() bool { return len(w.emu.Messages(alertChannel)) > 0 })
	alert := w.emu.Messages(alertChannel)[0]
	text := blockTexts(t, alert.Blocks)
	for _, want := range []string{
		"Alert from the health sweep", "CrashLoopBackOff",
		w.ns + "/" + seedBroker, "KRaft metadata log diverged", "__cluster_metadata-0", "data-" + seedBroker,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the alert does not mention %q:\n%s", want, text)
		}
	}
	ids := actionIDs(t, alert.Blocks)
	if !slices.Contains(ids, actionApprove) || !slices.Contains(ids, actionReject) {
		t.Errorf("the alert offers %v, want Approve and Reject", ids)
	}
	if !slices.ContainsFunc(ids, func(id string) bool { return strings.HasPrefix(id, actionSilencePrefix) }) {
		t.Errorf("the alert offers %v, want Silence buttons", ids)
	}

	// The alert is on record where a restarted or new leader reads it.
	// (It is written once Slack has taken the message.)
	testenv.WaitFor(t, "the alert state to record the alert", func(ctx context.Context) (bool, error) {
		state := strings.Join(slices.Collect(maps.Values(w.alertState(ctx))), "")
		return strings.Contains(state, alert.TS) && strings.Contains(state, w.ns+"/"+seedBroker+"/"), nil
	})

	// More sweeps see the same crash and stay quiet.
	for range 2 {
		if err := bot.sweeper.SweepNow(w.ctx()); err != nil {
			t.Fatalf("SweepNow: %v", err)
		}
	}

	// The approver approves the alert: the repair runs in its thread.
	w.click(alert, actionApprove, approver)
	th := w.waitRepairEnd(alert)
	wants := append([]string{"approved. Starting"}, repairSteps(w.ns)...)
	wants = append(wants, "Repair succeeded: the broker is back")
	if missing := containsInOrder(th, wants...); missing != "" {
		t.Fatalf("the alert's thread lacks %q (in order); it reads:\n%s", missing, strings.Join(th, "\n---\n"))
	}
	checkMetadataLogMoved(t, vol, before)
	checkBrokerReplaced(t, w, old)
	checkOneDebugPod(t, w, debugPods)
	w.waitSlack("the alert message to show the repair", func() bool {
		return strings.Contains(blockTexts(t, w.message(alert).Blocks), "Repair succeeded: the broker is back")
	})

	// The broker is Ready, but not yet for the grace: the alert stays open.
	readyAt := clk.Now()
	for range 3 {
		if err := bot.sweeper.SweepNow(w.ctx()); err != nil {
			t.Fatalf("SweepNow: %v", err)
		}
	}
	if got := blockTexts(t, w.message(alert).Blocks); strings.Contains(got, "Resolved") {
		t.Fatalf("the alert resolved with no time passed:\n%s", got)
	}

	// Once the grace has passed, the sweep resolves it: the same message.
	testenv.WaitFor(t, "the alert to resolve", func(ctx context.Context) (bool, error) {
		if err := bot.sweeper.SweepNow(ctx); err != nil {
			return false, err
		}
		if strings.Contains(blockTexts(t, w.message(alert).Blocks), "Resolved") {
			return true, nil
		}
		clk.Step(time.Minute)
		return false, nil
	})
	if passed := clk.Now().Sub(readyAt); passed < alertGrace {
		t.Errorf("resolved %v after the broker became Ready, inside the %v grace", passed, alertGrace)
	}
	th = w.waitThread(alert, "is Ready again and stayed Ready for the grace period")
	t.Logf("the alert's thread:\n%s", strings.Join(th, "\n---\n"))
	resolved := w.message(alert)
	rtext := blockTexts(t, resolved.Blocks)
	for _, want := range []string{"Resolved · " + w.ns + "/" + seedBroker, "Repair succeeded: the broker is back"} {
		if !strings.Contains(rtext, want) {
			t.Errorf("the resolved alert does not say %q:\n%s", want, rtext)
		}
	}
	if ids := actionIDs(t, resolved.Blocks); len(ids) != 0 {
		t.Errorf("the resolved alert still offers %v", ids)
	}
	if n := strings.Count(strings.Join(th, "\n"), "stayed Ready for the grace period"); n != 1 {
		t.Errorf("the thread has %d resolution lines, want 1", n)
	}

	// One alert in all, nothing in other channels.
	if top := w.emu.Messages(alertChannel); len(top) != 1 {
		t.Errorf("ALERT_CHANNEL has %d top-level messages, want the one alert: %+v", len(top), top)
	}
	if top := w.emu.Messages(channel); len(top) != 0 {
		t.Errorf("the command channel has %d messages, want none", len(top))
	}

	// The repaired broker crash-loops again, well inside the repeat
	// interval: the old alert was resolved, so this is a new incident and a
	// new alert, posted once, about the pod now running.
	w.crashLoop(seedBroker, seedLog())
	w.waitSlack("a new alert", func() bool { return len(w.emu.Messages(alertChannel)) > 1 })
	for range 2 {
		if err := bot.sweeper.SweepNow(w.ctx()); err != nil {
			t.Fatalf("SweepNow: %v", err)
		}
	}
	top := w.emu.Messages(alertChannel)
	if len(top) != 2 {
		t.Fatalf("ALERT_CHANNEL has %d top-level messages after the second crash, want 2", len(top))
	}
	// The alert and its details reply (which carries the pod's UID).
	w.waitSlack("the new alert's details", func() bool { return len(w.emu.Thread(alertChannel, top[1].TS)) > 0 })
	again := blockTexts(t, top[1].Blocks) + strings.Join(w.threadTexts(top[1]), "\n")
	now, err := w.pod(seedBroker)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Alert from the health sweep", string(now.UID)} {
		if !strings.Contains(again, want) {
			t.Errorf("the second alert does not say %q:\n%s", want, again)
		}
	}
	if !strings.Contains(blockTexts(t, w.message(alert).Blocks), "Resolved") {
		t.Errorf("the second crash reopened the first, resolved alert")
	}
}

// alertingBot is a bot replica with the health sweep beside it, as `bot
// serve` runs them with ALERT_CHANNEL set.
type alertingBot struct {
	*botProcess
	sweeper *sweep.Sweeper
}

// startAlertingBot starts a bot replica named identity wired as
// cmd/bot/serve.go wires it with ALERT_CHANNEL set: the sweep alerts
// through the alert notifier (alertnotify), and Slack users silence and sweep
// through the sweep. The sweep's alert clock is clk; its state ConfigMap and
// leader Lease live in the bot's namespace, named after the world. It waits
// until the bot is connected to Slack and the sweep runs.
func (w *world) startAlertingBot(identity string, clk *clocktesting.FakeClock) *alertingBot {
	w.t.Helper()
	p := w.newBotParts(identity)
	if w.self == "" {
		// The world's own copy of the bot's namespace (deploy/'s Role): the
		// one state ConfigMap name the bot may write is shared otherwise.
		w.self = w.env.SelfNamespace(w.t, "kafka-bot-"+w.ns)
	}
	alerts := alertnotify.New(alertChannel)
	sw, err := sweep.New(sweep.Options{
		Client:         p.cluster,
		Engine:         p.engine,
		Notifier:       alerts,
		RepeatInterval: sweep.DefaultRepeatInterval,
		ResolveGrace:   alertGrace,
		GroupWait:      -1, // the fake clock would hold a group wait forever
		StateNamespace: w.self,
		StateName:      sweep.DefaultStateName,
		LeaderElection: true,
		LeaseName:      "kafkabot-leader",
		Identity:       identity,
		Clock:          clk,
		Logger:         p.log,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	opts := w.options(p)
	opts.Alerts, opts.Clusters[0].Silencer, opts.Clusters[0].Sweeper = alerts, sw, sw
	return &alertingBot{botProcess: w.run(identity, p, opts, sw.Run), sweeper: sw}
}

func (w *world) alertState(ctx context.Context) map[string]string {
	cm, err := w.admin.CoreV1().ConfigMaps(w.self).Get(ctx, sweep.DefaultStateName, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return cm.Data
}
