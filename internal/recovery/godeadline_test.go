// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSafety04_GoDeadlineFromTheKubeletsBackOff: the go's deadline is the
// broker's last exit plus the back-off the kubelet reports, less
// GoSafetyMargin, rounded down to the second; when the back-off cannot be
// read it assumes the shortest one a kubelet may use, so the deadline is
// never later than the kubelet's restart. Before the fix the go had no
// deadline at all.
func TestSafety04_GoDeadlineFromTheKubeletsBackOff(t *testing.T) {
	exit := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	msg := func(d string) string {
		return "back-off " + d + " restarting failed container=kafka pod=kafka-0_prod(0f4c6a1e-6d1b-4c53-9d0e-5b1f2f7a9c11)"
	}
	waiting := func(reason, message string) *corev1.ContainerStatus {
		return &corev1.ContainerStatus{Name: "kafka", RestartCount: 4,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(exit)}},
		}
	}
	shortest := exit.Add(shortestBackOff - GoSafetyMargin)
	for _, tc := range []struct {
		name string
		c    *corev1.ContainerStatus
		want time.Time // zero: no deadline
	}{
		{"10s", waiting("CrashLoopBackOff", msg("10s")), exit.Add(5 * time.Second)},
		{"older kubelets' capital B", waiting("CrashLoopBackOff", "B"+msg("40s")[1:]), exit.Add(35 * time.Second)},
		{"40s", waiting("CrashLoopBackOff", msg("40s")), exit.Add(35 * time.Second)},
		{"1m20s", waiting("CrashLoopBackOff", msg("1m20s")), exit.Add(75 * time.Second)},
		{"2m40s", waiting("CrashLoopBackOff", msg("2m40s")), exit.Add(155 * time.Second)},
		{"5m0s the default ceiling", waiting("CrashLoopBackOff", msg("5m0s")), exit.Add(295 * time.Second)},
		{"1s reduced back-off feature gate", waiting("CrashLoopBackOff", msg("1s")), shortest},
		{"above the ceiling is not believed", waiting("CrashLoopBackOff", msg("10m0s")), shortest},
		{"hours are not believed", waiting("CrashLoopBackOff", msg("1h0m0s")), shortest},
		{"fractional seconds", waiting("CrashLoopBackOff", msg("40.5s")), shortest},
		{"milliseconds", waiting("CrashLoopBackOff", msg("500ms")), shortest},
		{"zero", waiting("CrashLoopBackOff", msg("0s")), shortest},
		{"another container's back-off", waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container=sidecar pod=kafka-0_prod(u)"), shortest},
		{"no container name", waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container"), shortest},
		{"trailing text", waiting("CrashLoopBackOff", msg("40s")+" extra"), shortest},
		{"leading text", waiting("CrashLoopBackOff", "x "+msg("40s")), shortest},
		{"newline smuggled", waiting("CrashLoopBackOff", msg("40s")+"\nback-off 5m0s"), shortest},
		{"empty message", waiting("CrashLoopBackOff", ""), shortest},
		{"not CrashLoopBackOff", waiting("ContainerCreating", msg("5m0s")), shortest},
		{"image pull back-off", waiting("ImagePullBackOff", "Back-off pulling image"), shortest},
		{"terminated, no waiting state yet", &corev1.ContainerStatus{Name: "kafka",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(exit)}}}, shortest},
		{"waiting without a last termination", &corev1.ContainerStatus{Name: "kafka",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg("5m0s")}}}, time.Time{}},
		{"running", &corev1.ContainerStatus{Name: "kafka",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, time.Time{}},
		{"no status", nil, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := goDeadline(tc.c)
			if !got.Deadline.Equal(tc.want) {
				t.Errorf("deadline %v, want %v (%s)", got.Deadline, tc.want, got.Basis)
			}
			if got.Basis == "" {
				t.Error("no basis for the thread")
			}
		})
	}
}

// TestSafety04_GoDeadlineRoundsDownAndKeepsTheMargin: finishedAt with a
// fraction of a second (the kubelet's status has whole seconds, the
// runtime's may not) never pushes the deadline later.
func TestSafety04_GoDeadlineRoundsDownAndKeepsTheMargin(t *testing.T) {
	exit := time.Date(2026, 12, 1, 19, 0, 0, 900_000_000, time.UTC)
	c := &corev1.ContainerStatus{Name: "kafka",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: "back-off 20s restarting failed container=kafka pod=kafka-0_prod(u)"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(exit)}},
	}
	w := goDeadline(c)
	restart := exit.Add(20 * time.Second)
	if got := restart.Sub(w.Deadline); got < GoSafetyMargin || got >= GoSafetyMargin+time.Second {
		t.Errorf("deadline %v is %v before the earliest restart %v, want %v to %v", w.Deadline, got, restart, GoSafetyMargin, GoSafetyMargin+time.Second)
	}
	if w.Deadline.Nanosecond() != 0 {
		t.Errorf("deadline %v is not a whole second", w.Deadline)
	}
}

// TestSafety04_GoValueIsStrict: the go annotation is "<repair id>.<unix
// seconds>" and nothing else is read back as a go for this repair.
func TestSafety04_GoValueIsStrict(t *testing.T) {
	deadline := time.Unix(1796150000, 0)
	v := goValue("appr-1.x", deadline)
	if v != "appr-1.x.1796150000" {
		t.Fatalf("goValue = %q", v)
	}
	if got, ok := parseGoValue(v, "appr-1.x"); !ok || !got.Equal(deadline) {
		t.Errorf("parseGoValue(%q) = %v, %v", v, got, ok)
	}
	if strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
		t.Errorf("%q is outside the script's charset", v)
	}
	for _, bad := range []string{"", "appr-1.x", "appr-1.x.", "appr-1.x.-5", "appr-1.x.12a", "appr-1.x.12345678901",
		"appr-2.1796150000", "appr-1.1796150000", " appr-1.x.1796150000", "appr-1.x.1796150000\n"} {
		if got, ok := parseGoValue(bad, "appr-1.x"); ok {
			t.Errorf("parseGoValue(%q) accepted, deadline %v", bad, got)
		}
	}
}
