// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pod status transitions below are pure: they change a *corev1.Pod's
// status in memory and nothing else, so the same logic drives a real API
// server (through pods/status) and client-go's fake clientset.

// firstCrashRestarts is the restart count given to a container that enters
// CrashLoopBackOff for the first time: a loop some restarts old, as a broker
// usually is by the time someone looks. (A real kubelet backs off from the
// second exit, and between its syncs reports the container Terminated, not
// waiting: internal/sweep and internal/recovery handle that shape, which
// their own tests and the real-node stage cover; this simulator keeps the
// waiting state for the whole loop.)
const firstCrashRestarts = 5

// hostIP is the address of the simulated node.
const hostIP = "127.0.0.1"

// SetCrashLooping makes container (the first one when empty) wait in
// CrashLoopBackOff after its previous instance exited with code 1, and
// bumps its restart count. Other containers are left running.
func SetCrashLooping(pod *corev1.Pod, container string, now time.Time) error {
	name, err := containerName(pod, container)
	if err != nil {
		return err
	}
	ts := metav1.NewTime(now.Truncate(time.Second))
	started := metav1.NewTime(ts.Add(-20 * time.Second))
	setRunningPhase(pod, ts)
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		st := containerStatus(pod, c)
		if c.Name == name {
			restarts := st.RestartCount + 1
			if restarts < firstCrashRestarts {
				restarts = firstCrashRestarts
			}
			*st = corev1.ContainerStatus{
				Name: c.Name, Image: st.Image, ImageID: st.ImageID, ContainerID: st.ContainerID,
				RestartCount: restarts,
				Ready:        false,
				Started:      new(false),
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason:  "CrashLoopBackOff",
					Message: fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(%s)", c.Name, pod.Name, pod.Namespace, pod.UID),
				}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 1, Reason: "Error", StartedAt: started, FinishedAt: ts, ContainerID: st.ContainerID,
				}},
			}
			continue
		}
		markRunning(st, ts)
	}
	setConditions(pod, false, ts)
	return nil
}

// SetReady makes every container run and pass its readiness check, keeping
// restart counts and the last termination (as after a successful restart).
func SetReady(pod *corev1.Pod, now time.Time) {
	ts := metav1.NewTime(now.Truncate(time.Second))
	setRunningPhase(pod, ts)
	for i := range pod.Spec.Containers {
		markRunning(containerStatus(pod, &pod.Spec.Containers[i]), ts)
	}
	setConditions(pod, true, ts)
}

// SetRunning marks a pod as started with every container running but not
// (yet) ready: the state of a debug pod while its command runs.
func SetRunning(pod *corev1.Pod, now time.Time) {
	ts := metav1.NewTime(now.Truncate(time.Second))
	setRunningPhase(pod, ts)
	for i := range pod.Spec.Containers {
		st := containerStatus(pod, &pod.Spec.Containers[i])
		markRunning(st, ts)
		st.Ready = false
	}
	setConditions(pod, false, ts)
}

// SetTerminated ends a pod whose containers do not restart: phase
// Succeeded for exit code 0, else Failed, with the container's terminated
// state. A non-empty podReason (e.g. "DeadlineExceeded") is set on the pod.
func SetTerminated(pod *corev1.Pod, exitCode int32, podReason, podMessage string, started, finished time.Time) {
	reason, phase := "Completed", corev1.PodSucceeded
	if exitCode != 0 {
		reason, phase = "Error", corev1.PodFailed
	}
	ts := metav1.NewTime(finished.Truncate(time.Second))
	for i := range pod.Spec.Containers {
		st := containerStatus(pod, &pod.Spec.Containers[i])
		st.Ready = false
		st.Started = new(false)
		st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, ContainerID: st.ContainerID,
			StartedAt: metav1.NewTime(started.Truncate(time.Second)), FinishedAt: ts,
		}}
	}
	pod.Status.Phase = phase
	pod.Status.Reason = podReason
	pod.Status.Message = podMessage
	setConditions(pod, false, ts)
}

func containerName(pod *corev1.Pod, name string) (string, error) {
	if len(pod.Spec.Containers) == 0 {
		return "", fmt.Errorf("pod %s/%s has no containers", pod.Namespace, pod.Name)
	}
	if name == "" {
		return pod.Spec.Containers[0].Name, nil
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return name, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no container %q", pod.Namespace, pod.Name, name)
}

func setRunningPhase(pod *corev1.Pod, ts metav1.Time) {
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP = hostIP
	pod.Status.HostIPs = []corev1.HostIP{{IP: hostIP}}
	pod.Status.Reason, pod.Status.Message = "", ""
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &ts
	}
}

// containerStatus returns c's status in pod, adding one (with an image id
// pinned by digest, as containerd reports it) when it has none yet.
func containerStatus(pod *corev1.Pod, c *corev1.Container) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == c.Name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
		Name:        c.Name,
		Image:       c.Image,
		ImageID:     imageID(c.Image),
		ContainerID: "containerd://" + fakeDigest(string(pod.UID) + "/" + c.Name)[:64],
	})
	return &pod.Status.ContainerStatuses[len(pod.Status.ContainerStatuses)-1]
}

// markRunning sets a running, ready state unless the container already runs.
func markRunning(st *corev1.ContainerStatus, ts metav1.Time) {
	if st.State.Running == nil {
		st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}
	}
	st.Ready = true
	st.Started = new(true)
}

func setConditions(pod *corev1.Pod, ready bool, ts metav1.Time) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	want := []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: status},
		{Type: corev1.PodReady, Status: status},
	}
	for _, w := range want {
		setCondition(pod, w, ts)
	}
}

func setCondition(pod *corev1.Pod, c corev1.PodCondition, ts metav1.Time) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			if pod.Status.Conditions[i].Status != c.Status {
				pod.Status.Conditions[i].Status = c.Status
				pod.Status.Conditions[i].LastTransitionTime = ts
			}
			return
		}
	}
	c.LastTransitionTime = ts
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}
