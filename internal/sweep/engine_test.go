// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// logReader reads pods through the real kube.Client (on the fake
// clientset, whose pods/log answers "fake logs") and puts the test's crash
// log in place of that answer.
type logReader struct {
	client *kube.Client
	mu     sync.Mutex
	logs   map[string]string
}

func (r *logReader) set(pod, file string, t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs[pod] = string(b)
}

func (r *logReader) Snapshot(ctx context.Context, namespace, pod string) (diagnose.Snapshot, error) {
	s, err := r.client.Snapshot(ctx, namespace, pod)
	if err != nil {
		return s, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Log = r.logs[pod]
	s.LogBytes = len(s.Log)
	return s, nil
}

// With the real diagnosis engine and real crash logs: the alert carries the
// engine's finding, and a new crash with another cause alerts again.
func TestRealEngineAlertsAndRealertsOnNewCause(t *testing.T) {
	e := newEnv(t, brokerPod("kafka-broker-0"))
	reader := &logReader{client: e.client, logs: map[string]string{}}
	reader.set("kafka-broker-0", "34-kraft-metadata-log-unexpected-append-offset.log", t)
	opts := e.options("bot-a")
	opts.Engine = diagnose.Default()
	opts.Reader = reader
	s, _ := e.start(opts, true)

	e.update(crashLooping(brokerPod("kafka-broker-0"), 4, t0))
	waitFor(t, "the alert", func() bool { return len(e.notes.of("notify")) == 1 })
	first := e.notes.of("notify")[0].alert
	if first.Rule != "metadata-log-offset-mismatch" || first.Snapshot.Log == "" || first.ReadError != "" {
		t.Fatalf("alert rule %q (read error %q), want metadata-log-offset-mismatch with the log", first.Rule, first.ReadError)
	}

	reader.set("kafka-broker-0", "21-lost-found-strimzi-gke.log", t)
	e.clock.Step(5 * time.Minute)
	e.update(crashLooping(brokerPod("kafka-broker-0"), 5, e.clock.Now()))
	waitFor(t, "the second alert", func() bool { return len(e.notes.of("notify")) == 2 })
	settle(t, s)
	second := e.notes.of("notify")[1].alert
	if second.Rule != "lost-and-found-dir" || second.Key == first.Key {
		t.Errorf("second alert %s, want a lost-and-found-dir alert of its own", second.Key)
	}
	if r := e.notes.of("resolve"); len(r) != 1 || r[0].alert.Key != first.Key || r[0].alert.Resolution != alert.ResolutionSuperseded {
		t.Errorf("resolutions %+v, want the first alert superseded", r)
	}
}
