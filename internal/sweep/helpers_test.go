// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
)

const (
	testNS      = "kafka"
	testBotNS   = "kafka-bot"
	testCluster = "prod"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// brokerPod returns a Ready Bitnami-style broker pod of the test cluster.
func brokerPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: testNS, UID: types.UID("uid-" + name),
			Labels: map[string]string{
				"app.kubernetes.io/name":      "kafka",
				"app.kubernetes.io/instance":  testCluster,
				"app.kubernetes.io/component": "broker",
			},
		},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "kafka", Image: "bitnami/kafka:3.9"}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "kafka", Ready: true, Image: "bitnami/kafka:3.9",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
}

// crashLooping sets the pod to CrashLoopBackOff after restarts restarts.
func crashLooping(p *corev1.Pod, restarts int32, at time.Time) *corev1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready, cs.RestartCount = false, restarts
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"}}
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		Reason: "Error", ExitCode: 1, FinishedAt: metav1.NewTime(at),
	}}
	return p
}

// recovered sets the pod Running and Ready again, keeping its restart count.
func recovered(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready = true
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	return p
}

// stubEngine returns the findings the test set for each pod.
type stubEngine struct {
	mu       sync.Mutex
	findings map[string][]diagnose.Finding
}

func newStubEngine() *stubEngine { return &stubEngine{findings: map[string][]diagnose.Finding{}} }

func (e *stubEngine) set(pod string, f ...diagnose.Finding) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.findings[pod] = f
}

func (e *stubEngine) Diagnose(s diagnose.Snapshot) []diagnose.Finding {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.findings[s.Pod]; ok {
		return f
	}
	return []diagnose.Finding{metadataFinding("")}
}

// metadataFinding is the finding of a corrupt metadata log; target varies
// the remedy (a changed finding of the same rule).
func metadataFinding(target string) diagnose.Finding {
	return diagnose.Finding{
		Rule: "metadata-log-offset-mismatch", Title: "Metadata log diverged", Severity: diagnose.SeverityCritical,
		Risk: diagnose.RiskMedium, Evidence: []string{"UnexpectedAppendOffsetException"},
		Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0" + target},
	}
}

func lostFoundFinding() diagnose.Finding {
	return diagnose.Finding{
		Rule: "foreign-dir-in-log-dir", Title: "lost+found in the log dir", Severity: diagnose.SeverityHigh,
		Risk: diagnose.RiskLow, Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveForeignDir, Target: "lost+found"},
	}
}

// sent is one call the recorder received.
type sent struct {
	kind  string // notify, group, resolve, resolve-group, summary
	ref   alert.MessageRef
	alert alert.Alert
	group alert.Group
	sum   alert.Summary
}

// recorder is a Notifier that records calls; refs are numbered messages.
type recorder struct {
	mu   sync.Mutex
	next int
	log  []sent
}

func (r *recorder) add(s sent) alert.MessageRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.kind == "notify" || s.kind == "group" && s.ref.IsZero() {
		r.next++
		s.ref = alert.MessageRef{Channel: "CALERTS", TS: fmt.Sprintf("1700000000.%06d", r.next)}
	}
	r.log = append(r.log, s)
	return s.ref
}

func (r *recorder) Notify(_ context.Context, a alert.Alert) (alert.MessageRef, error) {
	return r.add(sent{kind: "notify", alert: a}), nil
}

func (r *recorder) NotifyGroup(_ context.Context, g alert.Group) (alert.MessageRef, error) {
	return r.add(sent{kind: "group", group: g, ref: g.Ref}), nil
}

func (r *recorder) Resolve(_ context.Context, ref alert.MessageRef, a alert.Alert) error {
	r.add(sent{kind: "resolve", ref: ref, alert: a})
	return nil
}

func (r *recorder) ResolveGroup(_ context.Context, ref alert.MessageRef, g alert.Group) error {
	r.add(sent{kind: "resolve-group", ref: ref, group: g})
	return nil
}

func (r *recorder) Summary(_ context.Context, s alert.Summary) error {
	r.add(sent{kind: "summary", sum: s})
	return nil
}

// of returns the calls of the given kind.
func (r *recorder) of(kind string) []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sent
	for _, s := range r.log {
		if s.kind == kind {
			out = append(out, s)
		}
	}
	return out
}

func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.log {
		out = append(out, s.kind)
	}
	return out
}

// env is one fake cluster shared by the sweepers of a test.
type env struct {
	t      *testing.T
	cs     *fake.Clientset
	client *kube.Client
	clock  *clocktesting.FakeClock
	engine *stubEngine
	notes  *recorder
}

func newEnv(t *testing.T, pods ...*corev1.Pod) *env {
	t.Helper()
	objs := make([]runtime.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	cs := fakeapi.New(objs...)
	return &env{
		t: t, cs: cs,
		client: kube.New(cs, kube.Options{}),
		clock:  clocktesting.NewFakeClock(t0),
		engine: newStubEngine(),
		notes:  &recorder{},
	}
}

// options returns the test defaults: no group wait, no leader election.
func (e *env) options(identity string) Options {
	return Options{
		Client: e.client, Engine: e.engine, Notifier: e.notes,
		StateNamespace: testBotNS, Identity: identity, Clock: e.clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// start runs a sweeper until the test ends (or stop is called) and waits
// until it leads, unless wantLead is false.
func (e *env) start(opts Options, wantLead bool) (s *Sweeper, stop func()) {
	e.t.Helper()
	s, err := New(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("Run: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	if wantLead {
		waitFor(e.t, "sweeper "+opts.Identity+" to lead", s.Leading)
	}
	return s, stop
}

func (e *env) update(p *corev1.Pod) {
	e.t.Helper()
	if _, err := e.cs.CoreV1().Pods(p.Namespace).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) create(p *corev1.Pod) {
	e.t.Helper()
	if _, err := e.cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// waitFor waits until cond holds. It fails the test after a generous
// deadline; it asserts nothing about how long things take.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sweepNow runs a full sweep and fails the test on error.
func sweepNow(t *testing.T, s *Sweeper) {
	t.Helper()
	if err := s.SweepNow(context.Background()); err != nil {
		t.Fatalf("SweepNow: %v", err)
	}
}

// settle waits until the worker has nothing queued or in flight, so that
// watch-driven evaluations of earlier changes are done.
func settle(t *testing.T, s *Sweeper) {
	t.Helper()
	idle := func() bool { return s.pods.Queue().Len() == 0 && s.busy.Load() == 0 }
	for range 3 { // the worker marks itself busy just after taking a key
		waitFor(t, "the pod queue to drain", idle)
		time.Sleep(10 * time.Millisecond)
	}
	waitFor(t, "the pod queue to drain", idle)
}

// settleStepping is settle for a sweeper with a group wait: it steps the
// fake clock while it waits.
func settleStepping(t *testing.T, e *env, s *Sweeper, step time.Duration) {
	t.Helper()
	idle := func() bool {
		e.clock.Step(step)
		return s.pods.Queue().Len() == 0 && s.busy.Load() == 0
	}
	for range 3 {
		waitFor(t, "the pod queue to drain", idle)
		time.Sleep(10 * time.Millisecond)
	}
	waitFor(t, "the pod queue to drain", idle)
}

func notifiedPods(ss []sent) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.alert.Pod)
	}
	slices.Sort(out)
	return out
}
