// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

func TestCrashLoopingBrokerAlertsOnce(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"), brokerPod("kafka-broker-1"))
	s, _ := e.start(e.options("bot-a"), true)

	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	waitFor(t, "the alert", func() bool { return len(e.notes.of("notify")) == 1 })
	settle(t, s)
	for range 3 {
		sweepNow(t, s)
		e.clock.Step(time.Minute)
	}
	settle(t, s)

	got := e.notes.of("notify")
	if len(got) != 1 {
		t.Fatalf("notifications = %v, want exactly one", e.notes.kinds())
	}
	a := got[0].alert
	want := alert.Alert{Key: "kafka/kafka-broker-0/metadata-log-offset-mismatch", Pod: "kafka-broker-0", KafkaCluster: testCluster, Reason: alert.ReasonCrashLoop}
	if a.Key != want.Key || a.Pod != want.Pod || a.KafkaCluster != want.KafkaCluster || a.Reason != want.Reason {
		t.Errorf("alert = %+v, want key %s, pod %s, cluster %s, reason %s", a, want.Key, want.Pod, want.KafkaCluster, want.Reason)
	}
	if len(a.Findings) == 0 || a.Snapshot.Pod != "kafka-broker-0" || a.Repeat || a.Changed {
		t.Errorf("alert carries findings %v, snapshot of %q, repeat %t, changed %t; want the diagnosis of the pod, first notification",
			a.Findings, a.Snapshot.Pod, a.Repeat, a.Changed)
	}
	if g := e.notes.of("group"); len(g) != 0 {
		t.Errorf("one crashing pod made a group alert: %+v", g)
	}
}

func TestRepeatInterval(t *testing.T) {
	tests := []struct {
		name       string
		after      time.Duration
		wantNotify int
		wantRepeat bool
	}{
		{"inside the interval", 3*time.Hour + 59*time.Minute, 1, false},
		{"at the interval", 4 * time.Hour, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, crashLooping(brokerPod("kafka-broker-0"), 4, t0))
			s, _ := e.start(e.options("bot-a"), true)
			if n := len(e.notes.of("notify")); n != 1 {
				t.Fatalf("first sweep notified %d times, want 1", n)
			}
			e.clock.Step(tt.after)
			sweepNow(t, s)
			settle(t, s)
			got := e.notes.of("notify")
			if len(got) != tt.wantNotify {
				t.Fatalf("after %v: %d notifications, want %d", tt.after, len(got), tt.wantNotify)
			}
			if last := got[len(got)-1].alert; last.Repeat != tt.wantRepeat {
				t.Errorf("last notification Repeat = %t, want %t", last.Repeat, tt.wantRepeat)
			}
		})
	}
}

func TestChangedFindingRealerts(t *testing.T) {
	tests := []struct {
		name        string
		next        diagnose.Finding
		wantKey     string
		wantChanged bool
	}{
		{"same rule, other remedy target", metadataFinding("-other"), "kafka/kafka-broker-0/metadata-log-offset-mismatch", true},
		{"another rule", lostFoundFinding(), "kafka/kafka-broker-0/foreign-dir-in-log-dir", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, crashLooping(brokerPod("kafka-broker-0"), 4, t0))
			s, _ := e.start(e.options("bot-a"), true)
			first := e.notes.of("notify")
			if len(first) != 1 {
				t.Fatalf("first sweep notified %d times, want 1", len(first))
			}

			// The broker crashes again; its new log tells another story.
			e.engine.set("kafka-broker-0", tt.next)
			e.clock.Step(10 * time.Minute)
			e.update(crashLooping(brokerPod("kafka-broker-0"), 5, e.clock.Now()))
			waitFor(t, "the second alert", func() bool { return len(e.notes.of("notify")) == 2 })
			settle(t, s)

			got := e.notes.of("notify")[1].alert
			if got.Key != tt.wantKey || got.Changed != tt.wantChanged || got.Repeat {
				t.Errorf("second alert key %s changed %t repeat %t, want key %s changed %t repeat false",
					got.Key, got.Changed, got.Repeat, tt.wantKey, tt.wantChanged)
			}
			// The first message is marked superseded, so its buttons are not used.
			res := e.notes.of("resolve")
			if len(res) != 1 || res[0].ref != first[0].ref || res[0].alert.Resolution != alert.ResolutionSuperseded {
				t.Errorf("resolutions = %+v, want the first message (%v) superseded", res, first[0].ref)
			}
			sweepNow(t, s)
			if n := len(e.notes.of("notify")); n != 2 {
				t.Errorf("a further sweep notified again: %d notifications, want 2", n)
			}
		})
	}
}

func TestRecoveryResolvesAfterGrace(t *testing.T) {
	e := newEnv(t, crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	opts := e.options("bot-a")
	opts.ResolveGrace = 5 * time.Minute
	s, _ := e.start(opts, true)
	alerts := e.notes.of("notify")
	if len(alerts) != 1 {
		t.Fatalf("first sweep notified %d times, want 1", len(alerts))
	}

	e.update(recovered(crashLooping(brokerPod("kafka-broker-0"), 4, t0)))
	settle(t, s)
	sweepNow(t, s)
	e.clock.Step(4 * time.Minute)
	sweepNow(t, s)
	if r := e.notes.of("resolve"); len(r) != 0 {
		t.Fatalf("resolved inside the grace period: %+v", r)
	}

	// Crashing again inside the grace period restarts it.
	e.update(crashLooping(brokerPod("kafka-broker-0"), 5, e.clock.Now()))
	settle(t, s)
	e.update(recovered(crashLooping(brokerPod("kafka-broker-0"), 5, e.clock.Now())))
	settle(t, s)
	e.clock.Step(4 * time.Minute)
	sweepNow(t, s)
	if r := e.notes.of("resolve"); len(r) != 0 {
		t.Fatalf("resolved although the pod crashed again within the grace period: %+v", r)
	}

	e.clock.Step(time.Minute)
	sweepNow(t, s)
	settle(t, s)
	r := e.notes.of("resolve")
	if len(r) != 1 {
		t.Fatalf("resolutions = %v, want one", e.notes.kinds())
	}
	if r[0].ref != alerts[0].ref || r[0].alert.Resolution != alert.ResolutionRecovered || r[0].alert.Key != alerts[0].alert.Key {
		t.Errorf("resolved %s at %v (%s), want %s at the original message %v, recovered",
			r[0].alert.Key, r[0].ref, r[0].alert.Resolution, alerts[0].alert.Key, alerts[0].ref)
	}
	if n := len(e.notes.of("notify")); n != 1 {
		t.Errorf("%d notifications, want still 1", n)
	}
}

func TestDeletedPodResolvesAsGone(t *testing.T) {
	e := newEnv(t, crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	s, _ := e.start(e.options("bot-a"), true)
	if err := e.cs.CoreV1().Pods(testNS).Delete(context.Background(), "kafka-broker-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pod to leave the cache", func() bool { return len(s.pods.List()) == 0 })
	settle(t, s)
	e.clock.Step(DefaultResolveGrace)
	sweepNow(t, s)
	r := e.notes.of("resolve")
	if len(r) != 1 || r[0].alert.Resolution != alert.ResolutionPodGone {
		t.Fatalf("resolutions = %+v, want one, pod-gone", r)
	}
}

func TestSilence(t *testing.T) {
	tests := []struct {
		name string
		key  string
	}{
		{"alert", "kafka/kafka-broker-0/metadata-log-offset-mismatch"},
		{"pod", "kafka/kafka-broker-0"},
		{"cluster", alert.KafkaClusterKey(testNS, testCluster)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, brokerPod("kafka-broker-0"))
			s, _ := e.start(e.options("bot-a"), true)
			if _, err := s.Silence(context.Background(), tt.key, e.clock.Now().Add(24*time.Hour), "U012ABCDEF"); err != nil {
				t.Fatal(err)
			}
			e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
			settle(t, s)
			sweepNow(t, s)
			if n := e.notes.of("notify"); len(n) != 0 {
				t.Fatalf("silenced alert was notified: %+v", n)
			}
			sils, err := s.Silences(context.Background())
			if err != nil || len(sils) != 1 || sils[0].Key != tt.key || sils[0].By != "U012ABCDEF" {
				t.Fatalf("Silences() = %+v, %v; want the one silence of %s", sils, err, tt.key)
			}

			// When the silence ends, the still-firing alert is posted.
			e.clock.Step(24 * time.Hour)
			sweepNow(t, s)
			if n := e.notes.of("notify"); len(n) != 1 {
				t.Fatalf("after the silence: %d notifications, want 1", len(n))
			}
			if sils, _ := s.Silences(context.Background()); len(sils) != 0 {
				t.Errorf("expired silence still listed: %+v", sils)
			}
		})
	}
}

// A Slack click can land on a replica that does not lead: its silence goes
// to the ConfigMap and the leader honours it.
func TestSilenceFromOtherReplica(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	leader, _ := e.start(e.options("bot-a"), true)
	follower, err := New(e.options("bot-b")) // never runs: it only serves the click
	if err != nil {
		t.Fatal(err)
	}
	if _, err := follower.Silence(context.Background(), "kafka/kafka-broker-0", e.clock.Now().Add(time.Hour), "U012ABCDEF"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the leader to see the silence", func() bool {
		sils, err := leader.Silences(context.Background())
		return err == nil && len(sils) == 1
	})
	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	settle(t, leader)
	sweepNow(t, leader)
	if n := e.notes.of("notify"); len(n) != 0 {
		t.Fatalf("the leader ignored a silence set on another replica: %+v", n)
	}
	// The leader's own writes keep the follower's silence.
	e.clock.Step(time.Hour - time.Second)
	e.update(recovered(crashLooping(brokerPod("kafka-broker-0"), 4, t0)))
	settle(t, leader)
	if sils, err := follower.Silences(context.Background()); err != nil || len(sils) != 1 {
		t.Errorf("follower lists %+v, %v; want the silence", sils, err)
	}
}

// Ending a silence early, on the leader or on another replica, brings the
// alerts it hid back at the next sweep; an unknown or ended silence is an
// error and changes nothing.
func TestEndSilence(t *testing.T) {
	for _, where := range []string{"leader", "follower"} {
		t.Run(where, func(t *testing.T) {
			e := newEnv(t, brokerPod("kafka-broker-0"))
			leader, _ := e.start(e.options("bot-a"), true)
			ender := leader
			if where == "follower" {
				f, err := New(e.options("bot-b"))
				if err != nil {
					t.Fatal(err)
				}
				ender = f
			}
			sil, err := leader.Silence(context.Background(), "kafka/kafka-broker-0", e.clock.Now().Add(24*time.Hour), "U012ABCDEF")
			if err != nil {
				t.Fatal(err)
			}
			e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
			settle(t, leader)
			sweepNow(t, leader)
			if n := e.notes.of("notify"); len(n) != 0 {
				t.Fatalf("silenced alert was notified: %+v", n)
			}
			if _, err := ender.EndSilence(context.Background(), "nope", "U0ENDER"); !errors.Is(err, alert.ErrNoSuchSilence) {
				t.Errorf("ending an unknown silence: %v, want ErrNoSuchSilence", err)
			}
			ended, err := ender.EndSilence(context.Background(), sil.ID, "U0ENDER")
			if err != nil {
				t.Fatal(err)
			}
			if ended.Active(e.clock.Now()) {
				t.Errorf("ended silence still active: %+v", ended)
			}
			waitFor(t, "the leader to see the silence end", func() bool {
				sils, err := leader.Silences(context.Background())
				return err == nil && len(sils) == 0
			})
			sweepNow(t, leader)
			if n := e.notes.of("notify"); len(n) != 1 {
				t.Fatalf("after ending the silence: %d notifications, want 1", len(n))
			}
			if _, err := ender.EndSilence(context.Background(), sil.ID, "U0ENDER"); !errors.Is(err, alert.ErrNoSuchSilence) {
				t.Errorf("ending it twice: %v, want ErrNoSuchSilence", err)
			}
		})
	}
}

func TestRestartedSweeperDoesNotRealert(t *testing.T) {
	e := newEnv(t, crashLooping(brokerPod("kafka-broker-0"), 4, t0), brokerPod("kafka-broker-1"))
	_, stop := e.start(e.options("bot-a"), true)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("first run notified %d times, want 1", n)
	}
	first := e.notes.of("notify")[0]
	stop()

	// A new process: new Sweeper, same cluster and ConfigMap.
	e.clock.Step(30 * time.Minute)
	s2, _ := e.start(e.options("bot-a"), true)
	sweepNow(t, s2)
	settle(t, s2)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("after a restart: %d notifications, want still 1 (%v)", n, e.notes.kinds())
	}
	// And it still knows where the alert was posted.
	e.update(recovered(crashLooping(brokerPod("kafka-broker-0"), 4, t0)))
	settle(t, s2)
	e.clock.Step(DefaultResolveGrace)
	sweepNow(t, s2)
	r := e.notes.of("resolve")
	if len(r) != 1 || r[0].ref != first.ref {
		t.Fatalf("resolutions after restart = %+v, want the original message %v", r, first.ref)
	}
}

func TestTwoReplicasOneAlert(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	replica := func(id string) Options {
		o := e.options(id)
		o.LeaderElection = true
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 4*time.Second, 3*time.Second, 100*time.Millisecond
		return o
	}
	a, stopA := e.start(replica("bot-a"), false)
	b, stopB := e.start(replica("bot-b"), false)
	waitFor(t, "a leader", func() bool { return a.Leading() || b.Leading() })
	leader, follower, stopLeader := a, b, stopA
	if b.Leading() {
		leader, follower, stopLeader = b, a, stopB
	}
	if follower.Leading() {
		t.Fatal("both replicas lead")
	}

	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	waitFor(t, "the alert", func() bool { return len(e.notes.of("notify")) >= 1 })
	settle(t, leader)
	settle(t, follower)
	if err := follower.SweepNow(context.Background()); !errors.Is(err, alert.ErrNotLeader) {
		t.Errorf("follower SweepNow = %v, want ErrNotLeader", err)
	}
	sweepNow(t, leader)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("two replicas: %d notifications, want 1", n)
	}

	// Handover: the leader stops (releasing the Lease); the other takes
	// over, reads the state, and does not post the alert again.
	stopLeader()
	waitFor(t, "the follower to lead", follower.Leading)
	sweepNow(t, follower)
	settle(t, follower)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("after handover: %d notifications, want 1 (%v)", n, e.notes.kinds())
	}
	// Nor does it drop it: recovery resolves the original message.
	e.update(recovered(crashLooping(brokerPod("kafka-broker-0"), 4, t0)))
	settle(t, follower)
	e.clock.Step(DefaultResolveGrace)
	sweepNow(t, follower)
	if r := e.notes.of("resolve"); len(r) != 1 || r[0].ref != e.notes.of("notify")[0].ref {
		t.Fatalf("after handover resolutions = %+v, want the original message", r)
	}
}

func TestStormGivesOneGroupedAlert(t *testing.T) {
	const brokers = 10
	t.Run("first sweep", func(t *testing.T) {
		e := newEnv(t)
		for i := range brokers {
			e.create(crashLooping(brokerPod(fmt.Sprintf("kafka-broker-%d", i)), 3, t0))
		}
		e.create(brokerPod("other-0")) // healthy pods do not join
		s, _ := e.start(e.options("bot-a"), true)
		settle(t, s)
		checkOneGroup(t, e, brokers)
	})
	t.Run("watched within the group wait", func(t *testing.T) {
		e := newEnv(t)
		for i := range brokers {
			e.create(brokerPod(fmt.Sprintf("kafka-broker-%d", i)))
		}
		opts := e.options("bot-a")
		opts.GroupWait = 10 * time.Second
		s, _ := e.start(opts, true)
		settleStepping(t, e, s, opts.GroupWait)
		for i := range brokers {
			e.update(crashLooping(brokerPod(fmt.Sprintf("kafka-broker-%d", i)), 3, t0))
		}
		// All ten changes are queued behind the one the worker holds.
		waitFor(t, "the changes to queue", func() bool { return s.pods.Queue().Len() == brokers-1 })
		waitFor(t, "the grouped alert", func() bool {
			e.clock.Step(opts.GroupWait)
			return len(e.notes.of("group")) > 0
		})
		settleStepping(t, e, s, opts.GroupWait)
		checkOneGroup(t, e, brokers)
	})
}

func checkOneGroup(t *testing.T, e *env, brokers int) {
	t.Helper()
	if n := e.notes.of("notify"); len(n) != 0 {
		t.Errorf("storm posted %d single alerts (%v), want none", len(n), notifiedPods(n))
	}
	g := e.notes.of("group")
	if len(g) != 1 {
		for _, x := range g {
			var pods []string
			for _, a := range x.group.Alerts {
				pods = append(pods, fmt.Sprintf("%s(repeat=%t changed=%t)", a.Pod, a.Repeat, a.Changed))
			}
			t.Logf("group %s ref %v: %v", x.group.Key, x.group.Ref, pods)
		}
		t.Fatalf("storm posted %d group alerts, want 1", len(g))
	}
	if g[0].group.Key != alert.KafkaClusterKey(testNS, testCluster) || len(g[0].group.Alerts) != brokers || g[0].group.Firing != brokers {
		t.Errorf("group %s has %d alerts (%d firing), want %s with %d", g[0].group.Key, len(g[0].group.Alerts), g[0].group.Firing,
			alert.KafkaClusterKey(testNS, testCluster), brokers)
	}
	var pods []string
	for _, a := range g[0].group.Alerts {
		pods = append(pods, a.Pod)
		if a.Group != g[0].group.Key {
			t.Errorf("member %s has group %q, want %q", a.Pod, a.Group, g[0].group.Key)
		}
	}
	if !slices.IsSorted(pods) || len(slices.Compact(pods)) != brokers {
		t.Errorf("members %v: want %d distinct pods in order", pods, brokers)
	}
}

func TestGroupResolvesWithLastMember(t *testing.T) {
	var pods []string
	e := newEnv(t)
	for i := range 3 {
		name := fmt.Sprintf("kafka-broker-%d", i)
		pods = append(pods, name)
		e.create(crashLooping(brokerPod(name), 3, t0))
	}
	s, _ := e.start(e.options("bot-a"), true)
	g := e.notes.of("group")
	if len(g) != 1 {
		t.Fatalf("%d groups, want 1", len(g))
	}
	for i, name := range pods {
		e.update(recovered(crashLooping(brokerPod(name), 3, t0)))
		settle(t, s)
		e.clock.Step(DefaultResolveGrace)
		sweepNow(t, s)
		res, rg := e.notes.of("resolve"), e.notes.of("resolve-group")
		if len(res) != i+1 || res[i].ref != g[0].ref || res[i].alert.Group != g[0].group.Key {
			t.Fatalf("after %s recovered: resolutions %+v, want %d in the group's thread", name, res, i+1)
		}
		if last := i == len(pods)-1; (len(rg) == 1) != last {
			t.Fatalf("after %s recovered: %d group resolutions, want %d", name, len(rg), map[bool]int{true: 1}[last])
		}
	}
}

func TestScheduledSummary(t *testing.T) {
	tests := []struct {
		mode     SummaryMode
		crashing bool
		want     int
	}{
		{SummaryIfUnhealthy, false, 0},
		{SummaryIfUnhealthy, true, 1},
		{SummaryAlways, false, 1},
		{SummaryNever, true, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s crashing=%t", tt.mode, tt.crashing), func(t *testing.T) {
			pod := brokerPod("kafka-broker-0")
			if tt.crashing {
				pod = crashLooping(pod, 4, t0)
			}
			e := newEnv(t, pod)
			opts := e.options("bot-a")
			opts.Summary = tt.mode
			s, _ := e.start(opts, true)
			if err := s.sweep(context.Background(), true); err != nil {
				t.Fatal(err)
			}
			got := e.notes.of("summary")
			if len(got) != tt.want {
				t.Fatalf("%d summaries, want %d", len(got), tt.want)
			}
			if tt.want == 1 && (got[0].sum.KafkaPods != 1 || len(got[0].sum.Firing) != map[bool]int{true: 1}[tt.crashing]) {
				t.Errorf("summary %+v, want 1 Kafka pod and the firing alerts", got[0].sum)
			}
		})
	}
}

func TestNotifyFailureRetries(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	fail := &failingNotifier{recorder: e.notes, failures: 1}
	opts := e.options("bot-a")
	opts.Notifier = fail
	s, _ := e.start(opts, true)
	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	// The first attempt fails; the workqueue retries with backoff (on the fake clock).
	waitFor(t, "the retried alert", func() bool {
		e.clock.Step(time.Second)
		return len(e.notes.of("notify")) == 1
	})
	settle(t, s)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("%d notifications, want 1", n)
	}
}

// failingNotifier fails the first failures Notify calls.
type failingNotifier struct {
	*recorder
	failures int
}

func (f *failingNotifier) Notify(ctx context.Context, a alert.Alert) (alert.MessageRef, error) {
	f.mu.Lock()
	fail := f.failures > 0
	f.failures--
	f.mu.Unlock()
	if fail {
		return alert.MessageRef{}, errors.New("slack: ratelimited")
	}
	return f.recorder.Notify(ctx, a)
}

func TestNoAPIRequestsAfterWarmUp(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"), crashLooping(brokerPod("kafka-broker-1"), 4, t0))
	s, _ := e.start(e.options("bot-a"), true)
	settle(t, s)
	before := len(e.cs.Actions())
	for range 5 {
		e.clock.Step(time.Minute)
		sweepNow(t, s)
	}
	if extra := e.cs.Actions()[before:]; len(extra) != 0 {
		t.Errorf("5 sweeps after warm-up made %d API requests, want 0: %v", len(extra), extra)
	}
	// A new crash of the unhealthy pod costs its log read, nothing else.
	e.update(crashLooping(brokerPod("kafka-broker-1"), 5, e.clock.Now()))
	settle(t, s)
	before = len(e.cs.Actions())
	sweepNow(t, s)
	if extra := e.cs.Actions()[before:]; len(extra) != 0 {
		t.Errorf("a sweep after the re-diagnosis made %d API requests, want 0: %v", len(extra), extra)
	}
}
