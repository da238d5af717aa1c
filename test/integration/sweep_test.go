// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	"fmt"
	"github.com/kafka-chatops/kafkabot/internal/alert"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// sweepCall is one call a recordingNotifier received.
type sweepCall struct {
	kind  string // notify, group, resolve, resolve-group, summary
	ref   alert.MessageRef
	alert alert.Alert
}

// recordingNotifier is a sweep.Notifier that records what it is asked to post.
type recordingNotifier struct {
	mu    sync.Mutex
	calls []sweepCall
}

func (r *recordingNotifier) add(c sweepCall) alert.MessageRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.kind == "notify" || c.kind == "group" && c.ref.IsZero() {
		c.ref = alert.MessageRef{Channel: "C0ALERTS", TS: fmt.Sprintf("1700000000.%06d", len(r.calls)+1)}
	}
	r.calls = append(r.calls, c)
	return c.ref
}

func (r *recordingNotifier) Notify(_ context.Context, a alert.Alert) (alert.MessageRef, error) {
	return r.add(sweepCall{kind: "notify", alert: a}), nil
}

func (r *recordingNotifier) NotifyGroup(_ context.Context, g alert.Group) (alert.MessageRef, error) {
	return r.add(sweepCall{kind: "group", ref: g.Ref}), nil
}

func (r *recordingNotifier) Resolve(_ context.Context, ref alert.MessageRef, a alert.Alert) error {
	r.add(sweepCall{kind: "resolve", ref: ref, alert: a})
	return nil
}

func (r *recordingNotifier) ResolveGroup(_ context.Context, ref alert.MessageRef, _ alert.Group) error {
	r.add(sweepCall{kind: "resolve-group", ref: ref})
	return nil
}

func (r *recordingNotifier) Summary(context.Context, alert.Summary) error {
	r.add(sweepCall{kind: "summary"})
	return nil
}

func (r *recordingNotifier) of(kind string) []sweepCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sweepCall
	for _, c := range r.calls {
		if c.kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// TestSweepAlertsOnceAndResolvesOnTheRealAPIServer runs the health sweep
// as the bot's ServiceAccount, with deploy/'s RBAC, against a broker that
// the stand-in kubelet makes crash-loop and then recover: the pod watch,
// the leader Lease and the state ConfigMap in the bot's namespace, and the
// diagnosis's reads (pods/log through the kubelet) all go through the real
// API server. It alerts once, does not repeat on the next sweeps, and
// resolves the same alert once the pod has been Ready for the grace period.
func TestSweepAlertsOnceAndResolvesOnTheRealAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	ns := env.KafkaNamespace(t, "kafka-sweep", nil)
	k := startKubelet(t, env, ns)

	const pod = "kafka-broker-4"
	if _, err := k.ProvisionClaim(ctx, ns, "data-"+pod, t.TempDir(), "8Gi"); err != nil {
		t.Fatal(err)
	}
	broker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod,
			Labels: map[string]string{
				"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "kafka",
				"app.kubernetes.io/component": "broker",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kafka-broker",
				UID: "00000000-0000-0000-0000-000000000004", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "kafka", Image: "bitnami/kafka:3.7.0",
				Env:          []corev1.EnvVar{{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "broker"}, {Name: "KAFKA_CFG_NODE_ID", Value: "4"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + pod},
			}}},
		},
	}
	if _, err := env.Clientset.CoreV1().Pods(ns).Create(ctx, broker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the broker to be scheduled", func(ctx context.Context) (bool, error) {
		p, err := env.Clientset.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == k.NodeName(), err
	})
	if err := k.Ready(ctx, ns, pod); err != nil {
		t.Fatal(err)
	}

	// The sweep, as the bot. Its alert clock is fake (grace and repeat);
	// leader election runs on the real clock against the real Lease.
	botCS, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	// A private copy of the bot's namespace (deploy/'s Role and binding):
	// the state ConfigMap has one name the bot may write, kafkabot-alert-state.
	self := env.SelfNamespace(t, "kafka-bot-sweep-it")
	const stateName, leaseName, identity = sweep.DefaultStateName, "kafkabot-leader", "sweep-it-replica"
	const grace = 5 * time.Minute
	clk := clocktesting.NewFakeClock(time.Now())
	notes := &recordingNotifier{}
	logs := &logging.Buffer{}
	s, err := sweep.New(sweep.Options{
		Client:         kube.New(botCS, kube.Options{Namespaces: []string{ns}}),
		Notifier:       notes,
		StateNamespace: self, StateName: stateName,
		LeaderElection: true, LeaseName: leaseName, Identity: identity,
		ResolveGrace: grace, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("sweep Run: %v", err)
		}
		if t.Failed() {
			t.Logf("sweep log:\n%s", logs.String())
		}
	})
	testenv.WaitFor(t, "the sweep to lead", func(context.Context) (bool, error) { return s.Leading(), nil })
	if n := len(notes.of("notify")); n != 0 {
		t.Fatalf("a healthy broker raised %d alerts", n)
	}

	// The broker crash-loops: the pod watch raises one alert.
	if err := k.CrashLoop(ctx, ns, pod, metadataCrash); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the alert", func(context.Context) (bool, error) { return len(notes.of("notify")) > 0, nil })
	first := notes.of("notify")[0]
	a := first.alert
	if a.Namespace != ns || a.Pod != pod || a.Reason != alert.ReasonCrashLoop || a.Rule != "metadata-log-offset-mismatch" {
		t.Errorf("alert %s: pod %s/%s, reason %s, rule %s; want %s/%s in CrashLoopBackOff, metadata-log-offset-mismatch",
			a.Key, a.Namespace, a.Pod, a.Reason, a.Rule, ns, pod)
	}
	if a.ReadError != "" || a.Snapshot.Log != metadataCrash {
		t.Errorf("the diagnosis did not read the log through pods/log (read error %q, log %q)", a.ReadError, a.Snapshot.Log)
	}

	// The next sweeps find it again and stay quiet.
	for range 3 {
		if err := s.SweepNow(ctx); err != nil {
			t.Fatalf("SweepNow: %v", err)
		}
		clk.Step(time.Minute)
	}
	if n := len(notes.of("notify")); n != 1 {
		t.Fatalf("%d alerts after three more sweeps, want still 1", n)
	}

	// The state and the leadership are where deploy/'s RBAC lets the bot keep them.
	cm, err := env.Clientset.CoreV1().ConfigMaps(self).Get(ctx, stateName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("alert state ConfigMap: %v", err)
	}
	if state := strings.Join(mapValues(cm.Data), ""); !strings.Contains(state, a.Key) || !strings.Contains(state, first.ref.TS) {
		t.Errorf("alert state %q lacks the alert %s and its message %s", state, a.Key, first.ref.TS)
	}
	lease, err := env.Clientset.CoordinationV1().Leases(self).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("leader Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != identity {
		t.Errorf("Lease held by %v, want %s", lease.Spec.HolderIdentity, identity)
	}

	// The broker recovers. Nothing resolves while the fake clock stands
	// still; it resolves, at the original message, once the grace has passed.
	readyAt := clk.Now()
	if err := k.Ready(ctx, ns, pod); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.SweepNow(ctx); err != nil {
			t.Fatalf("SweepNow: %v", err)
		}
	}
	if r := notes.of("resolve"); len(r) != 0 {
		t.Fatalf("resolved with no time passed: %+v", r)
	}
	testenv.WaitFor(t, "the alert to resolve", func(ctx context.Context) (bool, error) {
		if err := s.SweepNow(ctx); err != nil {
			return false, err
		}
		if len(notes.of("resolve")) > 0 {
			return true, nil
		}
		clk.Step(time.Minute)
		return false, nil
	})
	if passed := clk.Now().Sub(readyAt); passed < grace {
		t.Errorf("resolved %v after the broker became Ready, inside the %v grace", passed, grace)
	}
	r := notes.of("resolve")
	if len(r) != 1 || r[0].ref != first.ref || r[0].alert.Key != a.Key || r[0].alert.Resolution != alert.ResolutionRecovered {
		t.Errorf("resolutions %+v, want one for %s at %v, recovered", r, a.Key, first.ref)
	}
	if n := len(notes.of("notify")); n != 1 {
		t.Errorf("%d alerts in all, want 1", n)
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
