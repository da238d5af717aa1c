// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/slack-go/slack"
)

// The seed incident: broker node 100 of the foobar cluster crash-loops on
// an UnexpectedAppendOffsetException in __cluster_metadata-0.
const (
	seedNamespace = "kafka"
	seedPod       = "foobar-kafka-broker-0"
	seedUID       = "5f1c9a8e-2b7d-4c61-9a0e-0d3c4b5a6f70"
	seedNode      = "worker-3"
	seedPVC       = "data-foobar-kafka-broker-0"
)

func seedLog(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/34-kraft-metadata-log-unexpected-append-offset.log")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func seedSnapshot(t testing.TB) diagnose.Snapshot {
	log := seedLog(t)
	finished := time.Date(2025, 4, 28, 8, 22, 2, 0, time.UTC)
	return diagnose.Snapshot{
		Namespace: seedNamespace, Pod: seedPod, UID: seedUID, Node: seedNode, Phase: "Running",
		KafkaCluster: "foobar", Role: diagnose.RoleBroker, NodeID: "100", KafkaContainer: "kafka",
		Containers: []diagnose.ContainerState{{
			Name: "kafka", RestartCount: 37, WaitingReason: "CrashLoopBackOff",
			LastTerminated: &diagnose.Termination{Reason: "Error", ExitCode: 1, FinishedAt: finished},
			Image:          "docker.io/bitnami/kafka:3.7.0",
		}},
		Claims:   []diagnose.VolumeClaim{{Volume: "data", ClaimName: seedPVC, MountPath: "/bitnami/kafka", AccessModes: []string{"ReadWriteOnce"}, Phase: "Bound"}},
		Log:      log,
		LogBytes: len(log),
	}
}

// seedDiagnoser stands in for the engine: it reports the metadata-log
// offset mismatch with the log's matching lines as evidence.
type seedDiagnoser struct{}

func (seedDiagnoser) Diagnose(s diagnose.Snapshot) []diagnose.Finding {
	var evidence []string
	for _, l := range strings.Split(s.Log, "\n") {
		if strings.Contains(l, "UnexpectedAppendOffsetException") || strings.Contains(l, "Encountered fatal fault") {
			evidence = append(evidence, l)
		}
	}
	if len(evidence) == 0 {
		return nil
	}
	return []diagnose.Finding{seedFinding(evidence)}
}

func seedFinding(evidence []string) diagnose.Finding {
	return diagnose.Finding{
		Rule: "metadata-log-offset-mismatch", Title: "KRaft metadata log diverged (UnexpectedAppendOffsetException)",
		Severity: diagnose.SeverityCritical, Confidence: 0.95, Risk: diagnose.RiskLow,
		Evidence:    evidence,
		Explanation: "The broker's local copy of __cluster_metadata-0 diverged from the controllers' log.",
		Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0",
			Steps: []string{"Move __cluster_metadata-0 out of the log dir", "Restart the broker so it re-fetches the log"}},
		Offsets: &diagnose.OffsetTriage{FirstOffset: 57876665, NextOffset: 57876669, LogStartOffset: 57054787, LocalDivergence: true},
	}
}

// fakeCluster serves the seed incident. gate, when set, holds Snapshot
// until it is closed (a slow apiserver).
type fakeCluster struct {
	t    testing.TB
	mu   sync.Mutex
	snap diagnose.Snapshot
	gate chan struct{}
	// readErr, when set, is what Snapshot returns (after the gate).
	readErr error

	snapshots int
	finds     int
}

func newFakeCluster(t testing.TB) *fakeCluster { return &fakeCluster{t: t, snap: seedSnapshot(t)} }

func (c *fakeCluster) FindPod(_ context.Context, namespace, name string) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finds++
	if namespace != "" && namespace != seedNamespace {
		return "", "", fmt.Errorf("no Kafka pod %q in namespace %q", name, namespace)
	}
	if !strings.HasSuffix(seedPod, name) {
		return "", "", fmt.Errorf("no Kafka pod matches %q (closest: %s/%s)", name, seedNamespace, seedPod)
	}
	return seedNamespace, seedPod, nil
}

func (c *fakeCluster) Snapshot(ctx context.Context, namespace, pod string) (diagnose.Snapshot, error) {
	c.mu.Lock()
	gate := c.gate
	c.snapshots++
	snap := c.snap
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return diagnose.Snapshot{}, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
		return diagnose.Snapshot{}, c.readErr
	}
	return snap, nil
}

// ResolvePod is FindPod, then the seed pod's status and a read that is
// Snapshot (so finds and snapshots count resolutions and reads).
func (c *fakeCluster) ResolvePod(ctx context.Context, namespace, name string) (diagnose.Snapshot, func(context.Context) (diagnose.Snapshot, error), error) {
	ns, pod, err := c.FindPod(ctx, namespace, name)
	if err != nil {
		return diagnose.Snapshot{}, nil, err
	}
	c.mu.Lock()
	status := c.snap
	c.mu.Unlock()
	status.Log, status.LogBytes = "", 0
	return status, func(ctx context.Context) (diagnose.Snapshot, error) { return c.Snapshot(ctx, ns, pod) }, nil
}

func (c *fakeCluster) KafkaPods(context.Context) ([]diagnose.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ready := c.snap
	ready.Pod, ready.UID = "foobar-kafka-broker-1", "uid-1"
	ready.Containers = []diagnose.ContainerState{{Name: "kafka", Ready: true, Running: true, RestartCount: 0}}
	ctrl := ready
	ctrl.Pod, ctrl.Role = "foobar-kafka-controller-0", diagnose.RoleController
	other := ready
	other.Namespace, other.KafkaCluster, other.Pod = "streaming", "events", "events-kafka-0"
	return []diagnose.Snapshot{c.snap, ready, ctrl, other}, nil
}

func (c *fakeCluster) counts() (finds, snapshots int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finds, c.snapshots
}

// fakeRepairer records requests and reports a few steps.
type fakeRepairer struct {
	mu       sync.Mutex
	requests []recovery.Request
}

var fakeSteps = []string{
	"Check the volume holds meta.properties with node.id 100",
	"Move __cluster_metadata-0 to the volume root backup",
	"Restart foobar-kafka-broker-0",
}

func (r *fakeRepairer) Repair(ctx context.Context, req recovery.Request, rep recovery.Reporter) recovery.Summary {
	r.mu.Lock()
	r.requests = append(r.requests, req)
	r.mu.Unlock()
	for _, s := range fakeSteps {
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepStarted})
		rep.Report(ctx, recovery.Progress{Step: s, Status: recovery.StepDone, Detail: "took 1s"})
	}
	sum := recovery.Summary{Outcome: recovery.OutcomeRepaired, Text: "Backup at /bitnami/kafka/kafkabot-backup-20261129; broker Ready."}
	rep.Finish(ctx, sum)
	return sum
}

func (r *fakeRepairer) calls() []recovery.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recovery.Request(nil), r.requests...)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recordingAPI answers every Web API call with success and records what
// the bot said: a poster for tests that drive the handlers without a
// Slack. Its zero value is ready.
type recordingAPI struct {
	mu         sync.Mutex
	posts      []sentText // chat.postMessage, in order
	ephemerals []sentText // chat.postEphemeral and response_url posts
	updates    int
}

// sentText is one message the bot sent: where, to whom, and its text.
type sentText struct {
	Channel, Thread, User, Text string
}

func (a *recordingAPI) PostMessageContext(_ context.Context, ch string, opts ...slack.MsgOption) (string, string, error) {
	_, vals, _ := slack.UnsafeApplyMsgOptions("", ch, "", opts...)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.posts = append(a.posts, sentText{Channel: ch, Thread: vals.Get("thread_ts"), Text: vals.Get("text")})
	return ch, fmt.Sprintf("%d.000100", len(a.posts)), nil
}

func (a *recordingAPI) UpdateMessageContext(context.Context, string, string, ...slack.MsgOption) (string, string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.updates++
	return "", "", "", nil
}

func (a *recordingAPI) PostEphemeralContext(_ context.Context, ch, user string, opts ...slack.MsgOption) (string, error) {
	_, vals, _ := slack.UnsafeApplyMsgOptions("", ch, "", opts...)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ephemerals = append(a.ephemerals, sentText{Channel: ch, User: user, Text: vals.Get("text")})
	return "", nil
}

func (a *recordingAPI) SendMessageContext(context.Context, string, ...slack.MsgOption) (string, string, string, error) {
	return "", "", "", nil
}

// sent returns copies of the posts and ephemerals so far.
func (a *recordingAPI) sent() (posts, ephemerals []sentText) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.posts), slices.Clone(a.ephemerals)
}
