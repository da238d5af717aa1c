// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Debug pod edge cases of issue 12 item 10.

// TestSafety10_DebugPodOptsOutOfMeshInjection: an injected sidecar never
// exits and is refused by our own admission policy; the debug pod carries
// the Istio, Linkerd and Kuma opt-outs. Before the fix it carried none.
func TestSafety10_DebugPodOptsOutOfMeshInjection(t *testing.T) {
	pod, err := DebugPod(bitnamiInput())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"sidecar.istio.io/inject": "false", "linkerd.io/inject": "disabled", "kuma.io/sidecar-injection": "disabled"} {
		if pod.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, pod.Annotations[k], v)
		}
	}
	if pod.Labels["sidecar.istio.io/inject"] != "false" {
		t.Errorf("label sidecar.istio.io/inject = %q, want false (Istio revision-based injection)", pod.Labels["sidecar.istio.io/inject"])
	}
}

// TestSafety10_WaitsOnTheRepairContainerNotThePodPhase: a sidecar keeps
// the pod Running after the script ends. The bot must read the result once
// the repair container has terminated. Before the fix it waited for the pod
// phase, until its timeout.
func TestSafety10_WaitsOnTheRepairContainerNotThePodPhase(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	// After the go the script ends, but an injected sidecar keeps running.
	h.finishAs = func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodRunning
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: "istio-proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		})
	}
	s := awaitSummary(t, repairWithin(t, h, &recorder{}))
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
}

// TestSafety10_RefusesGenericEphemeralVolume: a generic ephemeral volume's
// claim is deleted with the broker pod, so the restart that ends every
// repair would delete the backup too. Before the fix the debug pod mounted
// it.
func TestSafety10_RefusesGenericEphemeralVolume(t *testing.T) {
	in := bitnamiInput()
	in.Broker.Spec.Volumes = append(in.Broker.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{
		Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}},
	}})
	in.ClaimNames = []string{in.Broker.Name + "-scratch"}
	_, err := DebugPod(in)
	var eph *EphemeralVolumeError
	if !errors.As(err, &eph) {
		t.Fatalf("DebugPod on a generic ephemeral volume: %v, want EphemeralVolumeError", err)
	}
	if !strings.Contains(err.Error(), "backup included") {
		t.Errorf("the refusal does not say what would be lost: %v", err)
	}
}

// TestSafety10_ShellLessImageRefusedBeforeTheLease: a broker image without
// a shell cannot run the script; the bot says so, and how to set
// DEBUG_IMAGE, before it writes anything. Before the fix it took the
// Lease and created a debug pod that could never start.
func TestSafety10_ShellLessImageRefusedBeforeTheLease(t *testing.T) {
	c := seedCluster(t)
	const distroless = "gcr.io/distroless/java17-debian12@sha256:9a5b0c3d1e6b8a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c"
	c.broker.Spec.Containers[0].Image = distroless
	c.broker.Status.ContainerStatuses[0].ImageID = distroless
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready"})
	s := h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeGateFailed {
		t.Fatalf("outcome %s:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "DEBUG_IMAGE") || !strings.Contains(s.Text, "has no shell") {
		t.Errorf("the refusal does not say how to set DEBUG_IMAGE:\n%s", s.Text)
	}
	if w := h.writes(); len(w) != 0 {
		t.Errorf("wrote before refusing: %v", w)
	}

	// Evidence beats the name: a broker that runs a shell script has a shell.
	in := bitnamiInput()
	in.Broker.Spec.Containers[1].Image = distroless
	in.Broker.Status.ContainerStatuses = nil
	in.Broker.Spec.Containers[1].Command = []string{"/opt/bitnami/scripts/kafka/entrypoint.sh"}
	if _, err := DebugPod(in); err != nil {
		t.Errorf("a broker running a .sh script: %v", err)
	}
	// DEBUG_IMAGE set: no check of the broker's image.
	in.Broker.Spec.Containers[1].Command = nil
	in.Image = "busybox@sha256:0123456789012345678901234567890123456789012345678901234567890123"
	if _, err := DebugPod(in); err != nil {
		t.Errorf("with DEBUG_IMAGE: %v", err)
	}
}

// TestSafety10_CopiesSELinuxOptions: the debug pod carries the broker's
// SELinux options (container level wins over pod level, as for the
// broker), so the kubelet does not relabel the volume for another context.
func TestSafety10_CopiesSELinuxOptions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pod, ctr  *corev1.SELinuxOptions
		wantLevel string
	}{
		{"pod level", &corev1.SELinuxOptions{Level: "s0:c123,c456"}, nil, "s0:c123,c456"},
		{"container level wins", &corev1.SELinuxOptions{Level: "s0:c1,c2"}, &corev1.SELinuxOptions{Level: "s0:c7,c8", Type: "spc_t"}, "s0:c7,c8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bitnamiInput()
			in.Broker.Spec.SecurityContext.SELinuxOptions = tc.pod
			if tc.ctr != nil {
				in.Broker.Spec.Containers[1].SecurityContext.SELinuxOptions = tc.ctr
			}
			pod, err := DebugPod(in)
			if err != nil {
				t.Fatal(err)
			}
			got := pod.Spec.SecurityContext.SELinuxOptions
			if got == nil || got.Level != tc.wantLevel {
				t.Errorf("pod SELinux options %+v, want level %s", got, tc.wantLevel)
			}
		})
	}
}

// TestContainment6_DebugPodDeadlineLeavesRoomAfterALateGo (issue 27 item 6,
// review finding 13): the kubelet counts activeDeadlineSeconds from the
// pod's start, image pull included, and the script waits KB_GO_WAIT from
// its own start. A go that arrives at the end of the wait must still leave
// time for the move and the result line: the script stops waiting at least
// min(2m, deadline/2) before the deadline. Before the fix the room was 30s.
func TestContainment6_DebugPodDeadlineLeavesRoomAfterALateGo(t *testing.T) {
	for _, deadline := range []time.Duration{time.Minute, 3 * time.Minute, DefaultDebugDeadline, 10 * time.Minute, time.Hour} {
		in := bitnamiInput()
		in.Deadline = deadline
		pod, err := DebugPod(in)
		if err != nil {
			t.Fatal(err)
		}
		var wait string
		for _, e := range pod.Spec.Containers[0].Env {
			if e.Name == EnvGoWait {
				wait = e.Value
			}
		}
		w, err := strconv.Atoi(wait)
		if err != nil {
			t.Fatalf("deadline %s: KB_GO_WAIT %q: %v", deadline, wait, err)
		}
		room := time.Duration(*pod.Spec.ActiveDeadlineSeconds-int64(w)) * time.Second
		if want := min(2*time.Minute, deadline/2); room < want {
			t.Errorf("deadline %s: KB_GO_WAIT %ss leaves %s after the last possible go, want at least %s", deadline, wait, room, want)
		}
		if w < 1 {
			t.Errorf("deadline %s: KB_GO_WAIT %s: the script would not wait at all", deadline, wait)
		}
	}
}
