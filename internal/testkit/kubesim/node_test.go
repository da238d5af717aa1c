// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSchedulable(t *testing.T) {
	labels := nodeLabels("node-a")
	affinity := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	byName := func(op corev1.NodeSelectorOperator, names ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: op, Values: names}}}
	}
	byLabel := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want bool
	}{
		{"no constraints", corev1.PodSpec{}, true},
		{"matching nodeSelector", corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}, true},
		{"other node's hostname", corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: "node-b"}}, false},
		{"affinity on this node's name", corev1.PodSpec{Affinity: affinity(byName(corev1.NodeSelectorOpIn, "node-a"))}, true},
		{"affinity on another node's name", corev1.PodSpec{Affinity: affinity(byName(corev1.NodeSelectorOpIn, "node-b"))}, false},
		{"any term may match", corev1.PodSpec{Affinity: affinity(byName(corev1.NodeSelectorOpIn, "node-b"), byLabel(corev1.LabelHostname, corev1.NodeSelectorOpIn, "node-a"))}, true},
		{"NotIn this node", corev1.PodSpec{Affinity: affinity(byLabel(corev1.LabelHostname, corev1.NodeSelectorOpNotIn, "node-a"))}, false},
		{"Exists", corev1.PodSpec{Affinity: affinity(byLabel("kubernetes.io/arch", corev1.NodeSelectorOpExists))}, true},
		{"empty term matches nothing", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorTerm{})}, false},
		{"another scheduler's pod", corev1.PodSpec{SchedulerName: "volcano"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Schedulable(&corev1.Pod{Spec: tt.spec}, labels); got != tt.want {
				t.Errorf("Schedulable = %v, want %v", got, tt.want)
			}
		})
	}
}
