// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/guard"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// minShapes is the least number of distinct forbidden shapes the suite
// must try (issue 18 asks for at least 25).
const minShapes = 25

// hostileSeq keeps names unique under -count=N.
var hostileSeq atomic.Int64

// botInstall is one install of the bot: its identity and where it works.
type botInstall struct {
	cfg                    *rest.Config
	namespace, sa, kafkaNS string
}

// installAs installs the bot as namespace/sa (deploy/'s names, or an
// installer's own) with one Kafka namespace, params saying whether the
// bot's Namespace carries the policy's parameter label.
func installAs(t *testing.T, env *testenv.Env, namespace, sa string, params bool) botInstall {
	t.Helper()
	n := hostileSeq.Add(1)
	if namespace == testenv.BotNamespace && sa == testenv.BotServiceAccount {
		return botInstall{cfg: env.BotConfig(), namespace: namespace, sa: sa,
			kafkaNS: env.KafkaNamespace(t, fmt.Sprintf("kafka-hostile-%d", n), nil)}
	}
	cfg := env.InstallBot(t, namespace, sa, params)
	return botInstall{cfg: cfg, namespace: namespace, sa: sa,
		kafkaNS: env.KafkaNamespaceOf(t, fmt.Sprintf("kafka-hostile-%d", n), namespace, sa)}
}

// cluster returns the bot's client and the hostile table's view of the
// install, with its targets installed.
func (b botInstall) cluster(t *testing.T, env *testenv.Env) (*kube.Client, hostile.Cluster) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	debug, err := hostile.Layouts(b.kafkaNS, "node-1")[0].DebugPod()
	if err != nil {
		t.Fatal(err)
	}
	c := hostile.Cluster{Bot: cs, Namespace: b.kafkaNS, BotNamespace: b.namespace, SettingsConfigMap: "kafka-bot", DebugPod: debug}
	if err := hostile.Install(testContext(t), env.Clientset, c); err != nil {
		t.Fatal(err)
	}
	return kube.New(cs, kube.Options{Namespaces: []string{b.kafkaNS}}), c
}

// waitForAdmission waits until the self-check in ns finds want: the API
// server loads policies, bindings and parameters asynchronously.
func waitForAdmission(t *testing.T, kc *kube.Client, ns string, want kube.AdmissionState) kube.AdmissionCheck {
	t.Helper()
	var last kube.AdmissionCheck
	testenv.WaitFor(t, fmt.Sprintf("the admission self-check in %s to find %s", ns, want), func(ctx context.Context) (bool, error) {
		last = kc.CheckAdmission(ctx, ns)
		return last.State == want, nil
	})
	return last
}

// TestHostileTokenIsRefused impersonates the bot's ServiceAccount on the
// real API server with deploy/'s RBAC and admission policy, and tries
// every shape of hostile.Shapes: each must be refused, by the layer and
// the rule it names. The bot's real debug pod for each supported layout
// must be admitted, and so must the other writes the bot makes. It runs
// for deploy/'s names and for an install under another namespace and
// ServiceAccount, with the same, unchanged policy.
func TestHostileTokenIsRefused(t *testing.T) {
	env := testenv.Start(t)
	for _, tc := range []struct{ name, namespace, sa string }{
		{"deploy's namespace and ServiceAccount", testenv.BotNamespace, testenv.BotServiceAccount},
		{"another namespace and ServiceAccount", "ops-chatops", "chatops-bot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := installAs(t, env, tc.namespace, tc.sa, true)
			kc, c := b.cluster(t, env)
			nameLayoutBrokers(t, env, b, c) // deploy/'s defaults name the Bitnami and Strimzi brokers only
			waitForAdmission(t, kc, b.kafkaNS, kube.AdmissionEnforced)
			ctx := testContext(t)
			inner := &countingRepairer{}
			if s := guard.New(kc, inner, nil, false, nil).Repair(ctx, recovery.Request{ApprovalID: "a-guarded", Namespace: b.kafkaNS}, nil); inner.n != 1 {
				t.Errorf("with the policy enforced the guard refused the repair: %+v", s)
			}

			t.Run("the bot's own writes are admitted", func(t *testing.T) {
				for _, l := range hostile.Layouts(b.kafkaNS, "node-1") {
					pod, err := l.DebugPod()
					if err != nil {
						t.Fatalf("%s: %v", l.Name, err)
					}
					if _, err := c.Bot.CoreV1().Pods(b.kafkaNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
						t.Errorf("the bot's debug pod for %s was refused: %v", l.Name, err)
					}
				}
				// One for real, then deleted by the bot, as a repair does.
				if _, err := c.Bot.CoreV1().Pods(b.kafkaNS).Create(ctx, c.DebugPod, metav1.CreateOptions{}); err != nil {
					t.Fatalf("creating the debug pod: %v", err)
				}
				if err := c.Bot.CoreV1().Pods(b.kafkaNS).Delete(ctx, c.DebugPod.Name, metav1.DeleteOptions{}); err != nil {
					t.Errorf("the bot could not delete its debug pod: %v", err)
				}
				// Restarting a broker: delete its StatefulSet's pod.
				for _, l := range hostile.Layouts(b.kafkaNS, "node-1") {
					broker := l.Broker.DeepCopy()
					broker.UID, broker.Status, broker.Spec.NodeName = "", corev1.PodStatus{}, ""
					if _, err := env.Clientset.CoreV1().Pods(b.kafkaNS).Create(ctx, broker, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					if err := c.Bot.CoreV1().Pods(b.kafkaNS).Delete(ctx, broker.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
						t.Errorf("the bot may not delete the %s broker %s: %v", l.Name, broker.Name, err)
					}
				}
				lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kube.RepairLeaseName("kafka-broker-0")},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("bot-1")}}
				if _, err := c.Bot.CoordinationV1().Leases(b.kafkaNS).Create(ctx, lease, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Errorf("the bot may not create its repair Lease: %v", err)
				}
				state := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: hostile.StateConfigMap}}
				if _, err := c.Bot.CoreV1().ConfigMaps(b.namespace).Create(ctx, state, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Errorf("the bot may not create its alert-state ConfigMap: %v", err)
				}
			})

			shapes := hostile.Shapes()
			names := map[string]bool{}
			for _, s := range shapes {
				if names[s.Name] {
					t.Errorf("shape %q is listed twice", s.Name)
				}
				names[s.Name] = true
				t.Run(s.Name, func(t *testing.T) {
					if err := s.Check(s.Try(ctx, c)); err != nil {
						t.Errorf("%s (want refused by %s): %v", s.Name, s.Layer, err)
					}
				})
			}
			if len(names) < minShapes {
				t.Errorf("%d distinct shapes, want at least %d", len(names), minShapes)
			}
			t.Logf("%d distinct forbidden shapes tried as %s/%s", len(names), b.namespace, b.sa)
		})
	}
}

// TestWithoutThePolicyRepairsAreDisabled: where the policy does not hold,
// the self-check says so. Two ways: an install whose namespace lacks the
// policy's parameter label (the policy does not know this ServiceAccount),
// and the policy's binding removed from the cluster. In both, the shapes
// the policy refuses get through (so it is the policy that refuses them),
// while the RBAC ones stay refused.
func TestWithoutThePolicyRepairsAreDisabled(t *testing.T) {
	env := testenv.Start(t)
	check := func(t *testing.T, b botInstall) {
		kc, c := b.cluster(t, env)
		got := waitForAdmission(t, kc, b.kafkaNS, kube.AdmissionMissing)
		if got.Enforced() {
			t.Fatalf("self-check %v", got)
		}
		ctx := testContext(t)
		// What bot serve does with that: the approval is refused, nothing runs.
		inner := &countingRepairer{}
		g := guard.New(kc, inner, nil, false, nil)
		g.Startup(ctx, []string{b.kafkaNS})
		s := g.Repair(ctx, recovery.Request{ApprovalID: "a-unguarded", Namespace: b.kafkaNS, Pod: "kafka-broker-0"}, nil)
		if s.Outcome != recovery.OutcomeGateFailed || inner.n != 0 || !strings.Contains(g.Notice(), "Repairs are disabled") {
			t.Errorf("without the policy: repair outcome %s (ran %d), notice %q; want refused and disabled", s.Outcome, inner.n, g.Notice())
		}
		var admitted int
		for _, s := range hostile.Shapes() {
			err := s.Try(ctx, c)
			switch s.Layer {
			case hostile.ByRBAC:
				if e := s.Check(err); e != nil {
					t.Errorf("%s: %v", s.Name, e)
				}
			case hostile.ByPolicy:
				if err == nil {
					admitted++
				} else if hostile.RefusedByPolicy(err) {
					t.Errorf("%s: refused by the policy that should not apply: %v", s.Name, err)
				}
			}
		}
		if admitted == 0 {
			t.Error("no policy shape got through without the policy: the table does not test the policy")
		}
		t.Logf("without the policy %d forbidden shapes were admitted; the self-check said: %v", admitted, got)
	}

	t.Run("namespace without the policy's parameter label", func(t *testing.T) {
		check(t, installAs(t, env, "chatops-unguarded", "kafka-bot", false))
	})

	t.Run("policy binding removed", func(t *testing.T) {
		ctx := testContext(t)
		binding, err := env.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, hostile.PolicyName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := installAs(t, env, testenv.BotNamespace, testenv.BotServiceAccount, true)
		if err := env.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		kc, _ := b.cluster(t, env)
		t.Cleanup(func() {
			restoreBinding(t, env, binding)
			waitForAdmission(t, kc, b.kafkaNS, kube.AdmissionEnforced)
		})
		check(t, b)
	})
}

// countingRepairer counts the repairs the guard let through.
type countingRepairer struct{ n int }

func (c *countingRepairer) Repair(context.Context, recovery.Request, recovery.Reporter) recovery.Summary {
	c.n++
	return recovery.Summary{Outcome: recovery.OutcomeRepaired}
}

// restoreBinding recreates a deleted policy binding as it was.
func restoreBinding(t *testing.T, env *testenv.Env, b *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fresh := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: b.Name, Labels: b.Labels}, Spec: b.Spec}
	if _, err := env.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, fresh, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("restoring the policy binding: %v", err)
	}
}
