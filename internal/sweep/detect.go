// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Detection is what Detector.Observe concluded about one pod.
type Detection struct {
	// Reason is "" when the pod shows none of the detected failures.
	Reason alert.Reason
	// Container is the container the reason is about.
	Container string
	// Detail says the reason for people.
	Detail string
	// Restarts is the sum of the pod's container restart counts.
	Restarts int32
	// Ready is the pod's Ready condition.
	Ready bool
}

// Unhealthy reports whether the pod should alert.
func (d Detection) Unhealthy() bool { return d.Reason != "" }

// restartSample is a pod's total restart count at one observation.
type restartSample struct {
	at    time.Time
	count int32
}

// Detector decides from a pod's status whether it is crash-looping. It
// remembers each pod's restart counts to tell a restart rate; that memory
// is per process (a restarted bot starts a new baseline, and the crash-loop
// rule still catches a pod that keeps crashing).
type Detector struct {
	// RestartThreshold and RestartWindow: more than RestartThreshold
	// restarts within RestartWindow is unhealthy. RestartWindow also bounds
	// how long an OOMKilled termination counts.
	RestartThreshold int
	RestartWindow    time.Duration

	history map[types.UID][]restartSample
}

// NewDetector returns a Detector for "more than threshold restarts within window".
func NewDetector(threshold int, window time.Duration) *Detector {
	return &Detector{RestartThreshold: threshold, RestartWindow: window, history: map[types.UID][]restartSample{}}
}

// Observe records the pod's restart count at now and returns its detection.
//
// A pod being deleted (DeletionTimestamp set) is never unhealthy: the
// kubelet is stopping its containers on purpose and will not restart them,
// and its replacement is a new pod, observed on its own. Otherwise the
// first of these rules that holds gives the reason, checked container by
// container (the Kafka one first, so a sidecar's trouble does not hide
// Kafka's), then for the pod:
//   - OOMKilled: the container was OOM-killed within RestartWindow. It
//     goes before the container's crash loop because it says why the
//     container keeps ending, and because it holds through the whole loop
//     (the kill is the current or the last termination whether the
//     container is terminated, waiting or running again), so an OOM loop
//     keeps one reason instead of switching with the instant it is read;
//   - CrashLoopBackOff: the container is in a crash loop as a real
//     kubelet shows one (diagnose.ContainerState.CrashLoop): waiting in
//     CrashLoopBackOff, or terminated in a failure after at least one
//     restart, the state the API server shows for most of each back-off;
//   - FrequentRestarts: more than RestartThreshold restarts within
//     RestartWindow.
func (d *Detector) Observe(pod *corev1.Pod, now time.Time) Detection {
	det := Detection{Ready: kube.PodReady(pod)}
	statuses := append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		det.Restarts += cs.RestartCount
	}
	restarts := d.record(pod.UID, det.Restarts, now)
	if pod.DeletionTimestamp != nil {
		return det
	}

	kafka := kube.KafkaContainerName(pod)
	for _, cs := range preferContainer(statuses, kafka) {
		if t := d.recentOOMKill(cs, now); t != nil {
			det.Reason, det.Container = alert.ReasonOOMKilled, cs.Name
			det.Detail = fmt.Sprintf("container %s was OOMKilled at %s", cs.Name, t.FinishedAt.UTC().Format(time.RFC3339))
			return det
		}
		c := kube.ContainerStateOf(&cs)
		t, ok := c.CrashLoop(restartsAfterExit0(pod, cs.Name))
		if !ok {
			continue
		}
		det.Reason, det.Container = alert.ReasonCrashLoop, cs.Name
		if c.WaitingReason == diagnose.WaitingCrashLoopBackOff {
			det.Detail = fmt.Sprintf("container %s is in CrashLoopBackOff after %d restarts", cs.Name, cs.RestartCount)
		} else {
			det.Detail = fmt.Sprintf("container %s keeps failing: exit code %d (%s) at %s, restarted %d %s; the kubelet restarts it with a back-off",
				cs.Name, t.ExitCode, t.Reason, t.FinishedAt.UTC().Format(time.RFC3339), cs.RestartCount, plural(cs.RestartCount, "time", "times"))
		}
		return det
	}
	if d.RestartThreshold > 0 && restarts > int32(d.RestartThreshold) {
		det.Reason, det.Container = alert.ReasonRestarts, kafka
		det.Detail = fmt.Sprintf("restarted %d times within %v", restarts, d.RestartWindow)
	}
	return det
}

// recentOOMKill returns the container's current or last termination when
// it was an OOM kill within RestartWindow, else nil.
func (d *Detector) recentOOMKill(cs corev1.ContainerStatus, now time.Time) *corev1.ContainerStateTerminated {
	for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t != nil && t.Reason == string(alert.ReasonOOMKilled) && now.Sub(t.FinishedAt.Time) <= d.RestartWindow {
			return t
		}
	}
	return nil
}

// restartsAfterExit0 reports whether the kubelet restarts the named
// container after it exits 0: its own restart policy when it has one (a
// sidecar init container's Always), else, for a regular container, the
// pod's (Always when unset). An ordinary init container runs to completion
// once; a container missing from the spec counts as not restarted.
func restartsAfterExit0(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			if c.RestartPolicy != nil {
				return *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
			}
			return pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Spec.RestartPolicy == ""
		}
	}
	return false
}

// plural returns one when n is 1, else many.
func plural(n int32, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// preferContainer returns statuses with the named container first.
func preferContainer(statuses []corev1.ContainerStatus, name string) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(statuses))
	for _, cs := range statuses {
		if cs.Name == name {
			out = append(out, cs)
		}
	}
	for _, cs := range statuses {
		if cs.Name != name {
			out = append(out, cs)
		}
	}
	return out
}

// record adds an observation and returns how many restarts happened within
// the window (at least: since the oldest sample still in it).
func (d *Detector) record(uid types.UID, count int32, now time.Time) int32 {
	h := d.history[uid]
	if len(h) == 0 || h[len(h)-1].count != count {
		h = append(h, restartSample{at: now, count: count})
	}
	// Keep one sample at or before the window's start as the baseline.
	start := now.Add(-d.RestartWindow)
	for len(h) > 1 && !h[1].at.After(start) {
		h = h[1:]
	}
	d.history[uid] = h
	return count - h[0].count
}

// Forget drops the restart history of pods not in keep (deleted pods).
func (d *Detector) Forget(keep map[types.UID]bool) {
	for uid := range d.history {
		if !keep[uid] {
			delete(d.history, uid)
		}
	}
}
