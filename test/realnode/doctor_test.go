// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
)

// legacyBrokerImage is mkimages' LegacyBrokerImage: the broker stand-in
// named as Bitnami's legacy catalogue's Kafka, a repository outside the
// chart install's debug-image allow-list.
const legacyBrokerImage = "docker.io/bitnamilegacy/kafka:3.9.0-realnode"

// doctorCase is one problem injected into the chart's install: what
// `bot doctor` must then report (each finding and its fix, by text) and how
// many problems in all.
type doctorCase struct {
	name string
	// inject breaks the install and returns what puts it right again.
	inject func(t *testing.T) (restore func())
	want   []string
	// problems is the report's count of problems: the injected ones only.
	problems int
}

// checkDoctor runs `bot doctor` as the chart's `helm test` (helmTest runs
// `helm test kafkabot --logs` and returns its output) on the chart's
// install: first as installed, where it must pass, then once per injected
// problem (a wrong channel, a missing RBAC grant, the admission policy not
// bound, a broker on a bitnamilegacy image outside the allow-list), where
// it must fail and report the problem with what to do. Each problem is put
// right before the next, and the last run finds the install correct again.
func checkDoctor(t *testing.T, helmTest func() (string, error)) {
	start := time.Now()
	passes := func(when string) {
		t.Helper()
		out, err := helmTest()
		if err != nil || !strings.Contains(out, "no problems found") || strings.Contains(out, "✗") {
			t.Fatalf("%s: helm test (bot doctor) did not pass: %v\n%s", when, err, out)
		}
		for _, want := range []string{
			"✓ config: every setting is valid",
			"✓ slack: the bot is a member of #",
			"✓ rbac: Kafka namespace kafka: the bot may make each of its",
			"✓ admission: namespace kafka: admission policy kafka-bot-guard enforced",
			"✓ images: kafka/chart-kafka-broker-0: its repair's debug pod (image " + kafkaImageRepo + ") is admitted",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the doctor's report lacks %q:\n%s", when, want, out)
			}
		}
	}
	passes("the chart's install")
	for _, c := range doctorCases() {
		restore := c.inject(t)
		out, err := helmTest()
		t.Logf("%s: helm test (bot doctor):\n%s", c.name, out)
		if err == nil {
			t.Errorf("%s: helm test (bot doctor) passed:\n%s", c.name, out)
		}
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the doctor's report lacks %q:\n%s", c.name, want, out)
			}
		}
		if summary := fmt.Sprintf("%d problem(s) found", c.problems); !strings.Contains(out, summary) {
			t.Errorf("%s: the doctor's report lacks %q (only the injected problems):\n%s", c.name, summary, out)
		}
		restore()
	}
	passes("the install put right again")
	measure(t, "bot doctor as helm test, on the install and on 4 injected problems", time.Since(start))
}

// doctorCases are the problems of issue 25's "Done when", each as an
// operator would cause it.
func doctorCases() []doctorCase {
	return []doctorCase{
		{
			name: "a wrong channel",
			inject: func(*testing.T) func() {
				// The approval channel's ID is wrong (Slack knows no such
				// channel), and the bot was never invited to the alert channel.
				env.emu.SetChannelMissing(channel)
				env.emu.SetNotInChannel(alertChannel)
				return func() {
					env.emu.RestoreChannel(channel)
					env.emu.RestoreChannel(alertChannel)
				}
			},
			want: []string{
				"✗ slack: channel " + channel + " (APPROVAL_CHANNELS) does not exist, or is private and the bot is not in it",
				"fix: check the ID (channel details -> About, at the bottom), or /invite the bot to that private channel",
				"✗ slack: the bot is not a member of #",
				"(" + alertChannel + ", ALERT_CHANNEL): its posts there fail with not_in_channel",
				"fix: in Slack, run /invite @<the bot's name> in #",
			},
			problems: 2,
		},
		{
			name:   "a missing RBAC grant",
			inject: removePodDelete,
			want: []string{
				"✗ rbac: Kafka namespace kafka: the bot may not delete pods (",
				"fix: install deploy/'s Role and RoleBinding for Kafka namespaces",
			},
			problems: 1,
		},
		{
			name:   "the admission policy not bound",
			inject: unbindPolicy,
			want: []string{
				"✗ admission: namespace kafka: admission policy kafka-bot-guard NOT enforced",
				"repairs are disabled there",
				"fix: install deploy/'s admission policy (Kubernetes 1.30 or later)",
			},
			problems: 1,
		},
		{
			name:   "a bitnamilegacy image outside the allow-list",
			inject: deployLegacyBroker,
			want: []string{
				"✗ images: kafka/legacy-kafka-broker-0 runs image docker.io/bitnamilegacy/kafka, which is not in the debug-image allow-list: the admission policy would refuse its repair after Approve",
				"fix: add docker.io/bitnamilegacy/kafka to the bot namespace's annotation kafkabot.io/debug-image-repositories (the chart's admissionPolicy.debugImageRepositories)",
			},
			problems: 1,
		},
	}
}

// removePodDelete takes "delete" on pods out of the chart's Role in the
// Kafka namespace, as a hand-edited install would, and returns what puts
// the Role back.
func removePodDelete(t *testing.T) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	roles := env.admin.RbacV1().Roles(kafkaNS)
	role, err := roles.Get(ctx, "kafka-bot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	original := role.DeepCopy()
	removed := false
	for i, r := range role.Rules {
		if len(r.Resources) == 1 && r.Resources[0] == "pods" {
			var verbs []string
			for _, v := range r.Verbs {
				if v == "delete" {
					removed = true
					continue
				}
				verbs = append(verbs, v)
			}
			role.Rules[i].Verbs = verbs
		}
	}
	if !removed {
		t.Fatalf("the chart's Role grants no delete on pods: %+v", role.Rules)
	}
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		now, err := roles.Get(ctx, "kafka-bot", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		now.Rules = original.Rules
		if _, err := roles.Update(ctx, now, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// unbindPolicy deletes the admission policy's binding (the policy stays),
// waits until the bot's writes are no longer checked, and returns what
// recreates the binding as the chart installed it and waits until they are
// again.
func unbindPolicy(t *testing.T) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bindings := env.admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	binding, err := bindings.Get(ctx, hostile.PolicyName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bindings.Delete(ctx, hostile.PolicyName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEnforced(ctx, t, false)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		again := binding.DeepCopy()
		again.ObjectMeta = metav1.ObjectMeta{Name: binding.Name, Labels: binding.Labels, Annotations: binding.Annotations}
		if _, err := bindings.Create(ctx, again, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitEnforced(ctx, t, true)
	}
}

// waitEnforced waits until the admission self-check, as the bot's
// ServiceAccount, finds the policy enforced in the Kafka namespace (or,
// with want false, not enforced): the API server applies a binding's
// change a moment after it is stored.
func waitEnforced(ctx context.Context, t *testing.T, want bool) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + botNS + ":kafka-bot",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + botNS, "system:authenticated"},
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bot := kube.New(cs, kube.Options{Namespaces: []string{kafkaNS}})
	var last kube.AdmissionCheck
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		last = bot.CheckAdmission(ctx, kafkaNS)
		return last.Enforced() == want, nil
	}); err != nil {
		t.Fatalf("the admission policy's enforcement did not become %v: %v; last check: %s", want, err, last)
	}
}

// deployLegacyBroker runs a Kafka cluster on the bitnamilegacy image (a
// healthy one: the doctor needs no crash to see the image) until the
// broker's container runs, and returns what removes it.
func deployLegacyBroker(t *testing.T) func() {
	t.Helper()
	s := newScenario(t, "legacy", bitnami, "100")
	s.image = legacyBrokerImage
	s.freshVolumes()
	s.deploy()
	if err := waitFor(s.ctx(), 2*time.Minute, func() (bool, error) {
		p, err := s.pod(s.broker)
		if err != nil {
			return false, nil
		}
		for _, st := range p.Status.ContainerStatuses {
			if st.State.Running != nil && strings.HasPrefix(st.ImageID, "docker.io/bitnamilegacy/kafka@sha256:") {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("%s did not run on %s: %v", s.broker, legacyBrokerImage, err)
	}
	return s.remove
}
