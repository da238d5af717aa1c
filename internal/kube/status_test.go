// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

func TestKafkaPods(t *testing.T) {
	objs := append(findCluster(),
		inspBitnamiPod("kafka", "foobar-kafka-broker-10", "broker"),
		inspBitnamiPod("kafka", "foobar-kafka-broker-2", "broker"),
		findStrimziPod("alpha-pool-0", "alpha", true, false), // cluster "alpha" sorts before "my-cluster"
	)
	cs := fake.NewClientset(objs...)
	c := New(cs, Options{Namespaces: []string{"kafka", "strimzi"}})

	snaps, err := c.KafkaPods(context.Background())
	if err != nil {
		t.Fatalf("KafkaPods: %v", err)
	}
	var got []string
	for _, s := range snaps {
		got = append(got, s.Namespace+"/"+s.KafkaCluster+"/"+s.Pod)
	}
	want := []string{
		"kafka/foobar/foobar-kafka-broker-0",
		"kafka/foobar/foobar-kafka-broker-1",
		"kafka/foobar/foobar-kafka-broker-2",
		"kafka/foobar/foobar-kafka-broker-10",
		"kafka/foobar/foobar-kafka-controller-0",
		"strimzi/alpha/alpha-pool-0",
		"strimzi/my-cluster/my-cluster-dual-role-3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("KafkaPods =\n%q\nwant (Kafka pods of allowed namespaces only, by namespace, cluster, natural name)\n%q", got, want)
	}

	// Status only: the seed pod's state is there, its log and events are not.
	seed := snaps[0]
	if k := seed.Kafka(); k == nil || k.WaitingReason != "CrashLoopBackOff" || k.RestartCount != 12 || k.LastTerminated == nil {
		t.Errorf("seed pod status = %+v, want CrashLoopBackOff with 12 restarts and a last termination", k)
	}
	if seed.Role != diagnose.RoleBroker || seed.NodeID != "100" || seed.Node != "node-a" {
		t.Errorf("seed pod role %q node id %q node %q", seed.Role, seed.NodeID, seed.Node)
	}
	if seed.Log != "" || seed.Events != nil || len(seed.Claims) != 1 || seed.Claims[0].ClaimName != "data-foobar-kafka-broker-0" {
		t.Errorf("seed pod: log %q, events %q, claims %+v; want no log or events, the claim from the spec", seed.Log, seed.Events, seed.Claims)
	}

	// Only pod lists: one unfiltered list per allowed namespace (the
	// built-in selectors would cost one list each).
	actions := inspActionList(cs)
	if len(actions) != 2 {
		t.Errorf("%d requests, want 2: %q", len(actions), actions)
	}
	for _, a := range actions {
		if a != "list pods" {
			t.Errorf("unexpected request %q", a)
		}
	}
}

func TestStatusInitNotes(t *testing.T) {
	pod := inspBitnamiPod("kafka", "foobar-kafka-broker-0", "broker")
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "auto-discovery", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
		{
			Name: "kafka-init", RestartCount: 4,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
		},
		{Name: "later", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
	}
	got := statusInitNotes(pod)
	want := []string{"init container kafka-init is waiting CrashLoopBackOff, last exit 1 (Error) after 4 restarts: Kafka cannot start until it succeeds"}
	if !slices.Equal(got, want) {
		t.Errorf("statusInitNotes = %q, want %q", got, want)
	}
}
