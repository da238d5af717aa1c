// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// rootCases are brokers whose Kafka container ("kafka", beside a sidecar)
// does or does not run as uid 0 by its spec.
var rootCases = []struct {
	name       string
	pod, kafka *int64 // runAsUser of the pod and of the Kafka container
	sidecar    *int64
	wantRoot   bool
	wantUID    *int64
}{
	{name: "no uid anywhere (the image's USER)"},
	{name: "pod uid 1001", pod: ptr.To[int64](1001), wantUID: ptr.To[int64](1001)},
	{name: "container uid 0", kafka: ptr.To[int64](0), wantRoot: true, wantUID: ptr.To[int64](0)},
	{name: "pod uid 0", pod: ptr.To[int64](0), wantRoot: true, wantUID: ptr.To[int64](0)},
	{name: "pod uid 0, container 1001 wins", pod: ptr.To[int64](0), kafka: ptr.To[int64](1001), wantUID: ptr.To[int64](1001)},
	{name: "pod uid 1001, container 0 wins", pod: ptr.To[int64](1001), kafka: ptr.To[int64](0), wantRoot: true, wantUID: ptr.To[int64](0)},
	{name: "only a sidecar runs as root", pod: ptr.To[int64](1001), sidecar: ptr.To[int64](0), wantUID: ptr.To[int64](1001)},
}

func rootCasePod(pod, kafka, sidecar *int64) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "metrics"}, {Name: "kafka"}}}}
	p.Namespace, p.Name = "kafka", "foobar-kafka-broker-0"
	if pod != nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: pod}
	}
	if sidecar != nil {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: sidecar}
	}
	if kafka != nil {
		p.Spec.Containers[1].SecurityContext = &corev1.SecurityContext{RunAsUser: kafka}
	}
	return p
}

func TestCheckRootBroker(t *testing.T) {
	for _, tc := range rootCases {
		t.Run(tc.name, func(t *testing.T) {
			p := rootCasePod(tc.pod, tc.kafka, tc.sidecar)
			if got := RunAsUser(p, "kafka"); (got == nil) != (tc.wantUID == nil) || (got != nil && *got != *tc.wantUID) {
				t.Errorf("RunAsUser = %v, want %v", got, tc.wantUID)
			}
			err := CheckRootBroker(p, "kafka", false)
			var rb *RootBrokerError
			if got := errors.As(err, &rb); got != tc.wantRoot {
				t.Fatalf("CheckRootBroker = %v, want a RootBrokerError: %t", err, tc.wantRoot)
			}
			if tc.wantRoot && (rb.Pod != p.Name || !strings.Contains(err.Error(), "ALLOW_ROOT_BROKER=true") ||
				!strings.Contains(rb.Reason(), "ALLOW_ROOT_BROKER=true")) {
				t.Errorf("the refusal does not name the pod and the setting: %v / %s", err, rb.Reason())
			}
			if err := CheckRootBroker(p, "kafka", true); err != nil {
				t.Errorf("with ALLOW_ROOT_BROKER: %v", err)
			}
		})
	}
}

// TestInspectRefusesRootBrokerRepair: the pod a diagnosis reads carries the
// root-broker refusal in its Snapshot unless the client is told
// ALLOW_ROOT_BROKER, for every way a diagnosis reads a pod (Inspect, and
// ResolvePod's read).
func TestInspectRefusesRootBrokerRepair(t *testing.T) {
	for _, allow := range []bool{false, true} {
		objs := inspSeedObjects()
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok && p.Name == "foobar-kafka-broker-0" {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}
			}
		}
		cs := fake.NewClientset(objs...)
		(&inspLogServer{previous: inspReadCrashLog(t)}).install(cs)
		c := New(cs, Options{Namespaces: []string{"kafka"}, AllowRootBroker: allow})
		in, err := c.Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
		if err != nil {
			t.Fatal(err)
		}
		_, read, err := c.ResolvePod(context.Background(), "kafka", "foobar-kafka-broker-0")
		if err != nil {
			t.Fatal(err)
		}
		resolved, err := read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for how, s := range map[string]string{"Inspect": in.Snapshot.RepairRefusal, "ResolvePod": resolved.RepairRefusal} {
			if allow && s != "" {
				t.Errorf("%s with ALLOW_ROOT_BROKER: refusal %q, want none", how, s)
			}
			if !allow && !strings.Contains(s, "runs as uid 0") {
				t.Errorf("%s: refusal %q, want the root-broker refusal", how, s)
			}
		}
	}
}
