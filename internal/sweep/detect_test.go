// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-chatops/kafkabot/internal/alert"
)

func TestDetector(t *testing.T) {
	oom := func(finished time.Time) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "OOMKilled", ExitCode: 137, FinishedAt: metav1.NewTime(finished),
			}}
		}
	}
	restarts := func(n int32) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = n }
	}
	initCrash := func(p *corev1.Pod) {
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
			Name: "init-config", RestartCount: 6,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		}}
	}
	type step struct {
		after  time.Duration // since the previous observation
		change func(*corev1.Pod)
	}
	tests := []struct {
		name          string
		steps         []step
		want          alert.Reason
		wantContainer string
	}{
		{"healthy", []step{{0, nil}}, "", ""},
		{"crash loop", []step{{0, func(p *corev1.Pod) { *p = *crashLooping(p, 4, t0) }}}, alert.ReasonCrashLoop, "kafka"},
		{"init container crash loop", []step{{0, initCrash}}, alert.ReasonCrashLoop, "init-config"},
		{"recent OOMKilled", []step{{0, oom(t0.Add(-time.Minute))}}, alert.ReasonOOMKilled, "kafka"},
		{"old OOMKilled", []step{{0, oom(t0.Add(-time.Hour))}}, "", ""},
		{"4 restarts in 9m", []step{{0, restarts(1)}, {3 * time.Minute, restarts(3)}, {6 * time.Minute, restarts(5)}}, alert.ReasonRestarts, "kafka"},
		{"3 restarts in 9m is not more than 3", []step{{0, restarts(1)}, {9 * time.Minute, restarts(4)}}, "", ""},
		{"restarts spread over an hour", []step{{0, restarts(1)}, {20 * time.Minute, restarts(3)}, {20 * time.Minute, restarts(5)}, {20 * time.Minute, restarts(7)}}, "", ""},
		{"first sight of a pod with many restarts", []step{{0, restarts(50)}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDetector(3, 10*time.Minute)
			pod := brokerPod("kafka-broker-0")
			now := t0
			var det Detection
			for _, s := range tt.steps {
				now = now.Add(s.after)
				if s.change != nil {
					s.change(pod)
				}
				det = d.Observe(pod, now)
			}
			if det.Reason != tt.want || det.Container != tt.wantContainer {
				t.Errorf("Observe = %q on %q (%s), want %q on %q", det.Reason, det.Container, det.Detail, tt.want, tt.wantContainer)
			}
			if det.Unhealthy() != (tt.want != "") {
				t.Errorf("Unhealthy() = %t", det.Unhealthy())
			}
		})
	}
}

func TestDetectorForget(t *testing.T) {
	d := NewDetector(3, 10*time.Minute)
	a, b := brokerPod("a"), brokerPod("b")
	d.Observe(a, t0)
	d.Observe(b, t0)
	d.Forget(map[types.UID]bool{a.UID: true})
	if _, ok := d.history[a.UID]; !ok {
		t.Error("kept pod forgotten")
	}
	if _, ok := d.history[b.UID]; ok {
		t.Error("gone pod remembered")
	}
}
