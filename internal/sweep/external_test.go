// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

const routedChannel = "C0ROUTED"

// external calls s.External and fails the test on error.
func external(t *testing.T, s *Sweeper, a alert.External) alert.ExternalOutcome {
	t.Helper()
	out, err := s.External(context.Background(), a)
	if err != nil {
		t.Fatalf("External(%+v): %v", a, err)
	}
	return out
}

// TestExternalAfterSweepPostsNothingMore: the sweep saw the crash first;
// Alertmanager's alert for the same pod (even routed elsewhere) finds the
// alert already posted and posts nothing.
func TestExternalAfterSweepPostsNothingMore(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	opts := e.options("bot-a")
	opts.RepeatInterval = time.Hour
	s, _ := e.start(opts, true)
	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	waitFor(t, "the sweep's alert", func() bool { return len(e.notes.of("notify")) == 1 })
	settle(t, s)

	for range 3 { // Alertmanager repeats and retries
		if out := external(t, s, alert.External{Namespace: testNS, Pod: "kafka-broker-0", Firing: true, Channel: routedChannel,
			Source: "Alertmanager", SourceAlert: "KubePodCrashLooping"}); out != alert.ExternalFiring {
			t.Fatalf("outcome %q, want %q", out, alert.ExternalFiring)
		}
	}
	sweepNow(t, s)
	settle(t, s)
	if got := e.notes.of("notify"); len(got) != 1 {
		t.Fatalf("notifications %v, want the sweep's one only", e.notes.kinds())
	}
	// The sweep raised it: its repeat still says so, whoever fired since.
	e.clock.Step(opts.RepeatInterval)
	sweepNow(t, s)
	got := e.notes.of("notify")
	if len(got) != 2 || !got[1].alert.Repeat || got[1].alert.Source != "" || got[1].alert.SourceAlert != "" {
		t.Fatalf("repeat %+v, want a repeat from the health sweep (no source)", got)
	}
}

// TestExternalFirstThenSweep: Alertmanager's alert arrives before the
// sweep's watch evaluated the pod (held by the group wait): the alert is
// posted at once, to the routed channel, and the sweep's own evaluations
// afterwards post nothing more.
func TestExternalFirstThenSweep(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	opts := e.options("bot-a")
	opts.GroupWait = time.Hour // the fake clock holds the watch path
	opts.RepeatInterval = 10000 * time.Hour
	s, _ := e.start(opts, true)
	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	waitFor(t, "the informer to see the crash", func() bool {
		p, ok := s.pods.Get(podKey("kafka-broker-0"))
		return ok && p.Status.ContainerStatuses[0].State.Waiting != nil
	})
	if n := len(e.notes.of("notify")); n != 0 {
		t.Fatalf("the watch path notified before the test released it (%d)", n)
	}

	if out := external(t, s, alert.External{Namespace: testNS, Pod: "kafka-broker-0", Firing: true, Channel: routedChannel,
		Source: "Alertmanager", SourceAlert: "KubePodCrashLooping"}); out != alert.ExternalFiring {
		t.Fatalf("outcome %q, want %q", out, alert.ExternalFiring)
	}
	got := e.notes.of("notify")
	if len(got) != 1 || got[0].alert.Channel != routedChannel || len(got[0].alert.Findings) == 0 {
		t.Fatalf("notifications %+v, want one with the diagnosis, to %s", got, routedChannel)
	}
	if a := got[0].alert; a.Source != "Alertmanager" || a.SourceAlert != "KubePodCrashLooping" {
		t.Fatalf("the alert's source is %q/%q, want Alertmanager/KubePodCrashLooping", a.Source, a.SourceAlert)
	}

	settleStepping(t, e, s, time.Hour) // the watch path evaluates the pod now
	sweepNow(t, s)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("notifications %v, want still one", e.notes.kinds())
	}
	// A repeat goes to the channel of the first post.
	e.clock.Step(opts.RepeatInterval)
	sweepNow(t, s)
	got = e.notes.of("notify")
	if len(got) != 2 || !got[1].alert.Repeat || got[1].alert.Channel != routedChannel {
		t.Fatalf("repeat %+v, want a repeat to %s", got, routedChannel)
	}
	// ... and says who raised it, from the persisted record.
	if a := got[1].alert; a.Source != "Alertmanager" || a.SourceAlert != "KubePodCrashLooping" {
		t.Fatalf("the repeat's source is %q/%q, want Alertmanager/KubePodCrashLooping", a.Source, a.SourceAlert)
	}
}

// TestExternalResolved: Alertmanager's resolved alert resolves the message
// at once when the pod is Ready, without the grace; while the pod still
// crash-loops the alert stays open.
func TestExternalResolved(t *testing.T) {
	e := newEnv(t, crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	opts := e.options("bot-a")
	opts.ResolveGrace = time.Hour
	s, _ := e.start(opts, true)
	if n := len(e.notes.of("notify")); n != 1 {
		t.Fatalf("first sweep notified %d times, want 1", n)
	}

	if out := external(t, s, alert.External{Namespace: testNS, Pod: "kafka-broker-0"}); out != alert.ExternalStillFiring {
		t.Fatalf("resolved while crash-looping: outcome %q, want %q", out, alert.ExternalStillFiring)
	}
	if r := e.notes.of("resolve"); len(r) != 0 {
		t.Fatalf("an alert of a pod still crash-looping was resolved: %+v", r)
	}

	e.update(recovered(crashLooping(brokerPod("kafka-broker-0"), 4, t0)))
	settle(t, s)
	if r := e.notes.of("resolve"); len(r) != 0 {
		t.Fatalf("resolved inside the grace without Alertmanager: %+v", r)
	}
	if out := external(t, s, alert.External{Namespace: testNS, Pod: "kafka-broker-0"}); out != alert.ExternalHealthy {
		t.Fatalf("outcome %q, want %q", out, alert.ExternalHealthy)
	}
	r := e.notes.of("resolve")
	if len(r) != 1 || r[0].alert.Resolution != alert.ResolutionRecovered || r[0].ref != e.notes.of("notify")[0].ref {
		t.Fatalf("resolutions %+v, want the alert's message resolved, recovered", r)
	}
}

// TestExternalIgnored: pods the sweep does not watch, healthy pods, and a
// replica that does not lead.
func TestExternalIgnored(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	s, _ := e.start(e.options("bot-a"), true)
	for _, tc := range []struct {
		a    alert.External
		want alert.ExternalOutcome
	}{
		{alert.External{Namespace: testNS, Pod: "web-0", Firing: true}, alert.ExternalUnknownPod},
		{alert.External{Namespace: "other", Pod: "kafka-broker-0", Firing: true}, alert.ExternalUnknownPod},
		{alert.External{Namespace: testNS, Pod: "kafka-broker-0", Firing: true}, alert.ExternalHealthy},
		{alert.External{Namespace: testNS, Pod: "kafka-broker-0"}, alert.ExternalHealthy},
	} {
		if out := external(t, s, tc.a); out != tc.want {
			t.Errorf("External(%+v) = %q, want %q", tc.a, out, tc.want)
		}
	}
	if n := len(e.notes.kinds()); n != 0 {
		t.Errorf("notified %v", e.notes.kinds())
	}

	follower, err := New(e.options("bot-b")) // never runs, never leads
	if err != nil {
		t.Fatal(err)
	}
	if _, err := follower.External(context.Background(), alert.External{Namespace: testNS, Pod: "kafka-broker-0", Firing: true}); !errors.Is(err, alert.ErrNotLeader) {
		t.Errorf("follower: err %v, want ErrNotLeader", err)
	}
}

// TestRoutedAlertIsNotGrouped: an alert Alertmanager routed to a channel
// is posted there on its own, even in a storm that groups the others.
func TestRoutedAlertIsNotGrouped(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"), brokerPod("kafka-broker-1"), brokerPod("kafka-broker-2"))
	opts := e.options("bot-a")
	opts.GroupThreshold = 2
	opts.GroupWait = time.Hour
	s, _ := e.start(opts, true)
	// Alertmanager names a channel while the pod still looks healthy.
	if out := external(t, s, alert.External{Namespace: testNS, Pod: "kafka-broker-0", Firing: true, Channel: routedChannel}); out != alert.ExternalHealthy {
		t.Fatalf("outcome %q, want %q", out, alert.ExternalHealthy)
	}
	for _, p := range []string{"kafka-broker-0", "kafka-broker-1", "kafka-broker-2"} {
		e.update(crashLooping(brokerPod(p), 4, t0))
	}
	waitFor(t, "the informer to see the crashes", func() bool {
		for _, p := range []string{"kafka-broker-0", "kafka-broker-1", "kafka-broker-2"} {
			if pod, ok := s.pods.Get(podKey(p)); !ok || pod.Status.ContainerStatuses[0].State.Waiting == nil {
				return false
			}
		}
		return true
	})
	sweepNow(t, s)
	alone, groups := e.notes.of("notify"), e.notes.of("group")
	if len(alone) != 1 || alone[0].alert.Pod != "kafka-broker-0" || alone[0].alert.Channel != routedChannel {
		t.Fatalf("single notifications %+v, want broker-0's to %s", alone, routedChannel)
	}
	if len(groups) != 1 || len(groups[0].group.Alerts) != 2 {
		t.Fatalf("groups %+v, want one of broker-1 and broker-2", groups)
	}
}

func podKey(name string) kube.PodKey { return kube.PodKey{Namespace: testNS, Name: name} }
