// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
)

// TestDebugPodsHaveNoNetwork backs README's "the debug pod has no token and
// no privileges, and no network where the network plugin enforces
// NetworkPolicy": in deploy/ and its overlays, every Kafka namespace's
// NetworkPolicy selects the debug pod the bot builds for each supported
// layout, denies all ingress and egress (both policy types, no rule), and
// selects no broker pod (which it would cut off from its cluster).
func TestDebugPodsHaveNoNetwork(t *testing.T) {
	eachBuild(t, func(t *testing.T, objs []map[string]any) {
		var policies int
		for _, o := range objs {
			if o["kind"] != "NetworkPolicy" {
				continue
			}
			var np networkingv1.NetworkPolicy
			convert(t, o, &np)
			if np.Name != "kafka-bot-debug-pods-isolated" {
				continue
			}
			policies++
			for _, problem := range isolationProblems(t, &np) {
				t.Errorf("NetworkPolicy %s/%s: %s", np.Namespace, np.Name, problem)
			}
		}
		if policies == 0 {
			t.Fatal("no debug-pod NetworkPolicy in the build")
		}
	})
}

// isolationProblems says how np fails to cut every connection of the bot's
// debug pods, and only theirs, in np's namespace.
func isolationProblems(t *testing.T, np *networkingv1.NetworkPolicy) []string {
	t.Helper()
	var problems []string
	types := map[networkingv1.PolicyType]bool{}
	for _, pt := range np.Spec.PolicyTypes {
		types[pt] = true
	}
	if !types[networkingv1.PolicyTypeIngress] || !types[networkingv1.PolicyTypeEgress] {
		problems = append(problems, "policyTypes do not include both Ingress and Egress")
	}
	if len(np.Spec.Ingress) != 0 || len(np.Spec.Egress) != 0 {
		problems = append(problems, "it allows some traffic (ingress or egress rules)")
	}
	selector, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if selector.Empty() {
		problems = append(problems, "its pod selector selects every pod of the namespace, brokers included")
	}
	for _, l := range hostile.Layouts(np.Namespace, "node-1") {
		debug, err := l.DebugPod()
		if err != nil {
			t.Fatal(err)
		}
		if !selector.Matches(labels.Set(debug.Labels)) {
			problems = append(problems, "it does not select the "+l.Name+" debug pod (labels "+labels.Set(debug.Labels).String()+")")
		}
		if selector.Matches(labels.Set(l.Broker.Labels)) {
			problems = append(problems, "it selects the "+l.Name+" broker pod")
		}
	}
	return problems
}

// TestIsolationProblems shows the check refuses what the claim excludes.
func TestIsolationProblems(t *testing.T) {
	good := func() *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "isolated", Namespace: "kafka"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/managed-by": "kafkabot"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			},
		}
	}
	cases := []struct {
		name   string
		change func(*networkingv1.NetworkPolicy)
		bad    bool
	}{
		{"as shipped", func(*networkingv1.NetworkPolicy) {}, false},
		{"ingress only", func(np *networkingv1.NetworkPolicy) {
			np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		}, true},
		{"an egress rule", func(np *networkingv1.NetworkPolicy) { np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{}} }, true},
		{"another label", func(np *networkingv1.NetworkPolicy) {
			np.Spec.PodSelector.MatchLabels = map[string]string{"app.kubernetes.io/managed-by": "someone-else"}
		}, true},
		{"every pod", func(np *networkingv1.NetworkPolicy) { np.Spec.PodSelector = metav1.LabelSelector{} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			np := good()
			c.change(np)
			if got := isolationProblems(t, np); (len(got) > 0) != c.bad {
				t.Errorf("isolationProblems = %q, want problems: %v", got, c.bad)
			}
		})
	}
}
