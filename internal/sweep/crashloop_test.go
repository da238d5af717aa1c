// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

// Crash-loop detection fed with the statuses a real kubelet (v1.37)
// reports for a fast-crashing Kafka container, as measured on the real
// node with Kafka 3.7.2 (the JVM dies 3 s after it starts): right after
// each exit the container is Terminated (Error, exit code 1) for the whole
// back-off; Waiting{CrashLoopBackOff} shows only for about a second, in
// the sync that restarts it; then it is Running again.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// kafkaRun is how long the crashing Kafka JVM runs before it dies.
const kafkaRun = 3 * time.Second

// kubeletExited returns p with the Kafka container just exited as the
// kubelet reports it: Terminated with exitCode and reason at at after a run
// of run, after restarts restarts, not Ready; LastTerminationState (the
// instance before, if any) stays.
func kubeletExited(p *corev1.Pod, restarts, exitCode int32, reason string, at time.Time, run time.Duration) *corev1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready, cs.Started, cs.RestartCount = false, new(false), restarts
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exitCode, Reason: reason, StartedAt: metav1.NewTime(at.Add(-run)), FinishedAt: metav1.NewTime(at),
		ContainerID: fmt.Sprintf("containerd://run-%d", restarts),
	}}
	return p
}

// kubeletBackOff returns p (the Kafka container terminated) in the sync
// that ends the back-off: waiting in CrashLoopBackOff with the kubelet's
// message, the exit just seen moved to LastTerminationState.
func kubeletBackOff(p *corev1.Pod, backOff time.Duration) *corev1.Pod {
	p, _ = kubeletLeavesExit(p, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
			backOff, p.Status.ContainerStatuses[0].Name, p.Name, p.Namespace, p.UID),
	}})
	return p
}

// kubeletRestarted returns p with the Kafka container started again at at
// (restart count one up), not Ready yet, its last exit in
// LastTerminationState.
func kubeletRestarted(p *corev1.Pod, at time.Time) *corev1.Pod {
	p, cs := kubeletLeavesExit(p, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}})
	cs.RestartCount++
	cs.Started = new(true)
	return p
}

// kubeletLeavesExit returns a copy of p whose Kafka container is in state
// now, its exit (when it was terminated) moved to LastTerminationState, and
// that container's status.
func kubeletLeavesExit(p *corev1.Pod, state corev1.ContainerState) (*corev1.Pod, *corev1.ContainerStatus) {
	p = p.DeepCopy()
	cs := &p.Status.ContainerStatuses[0]
	if cs.State.Terminated != nil {
		cs.LastTerminationState = corev1.ContainerState{Terminated: cs.State.Terminated}
	}
	cs.State = state
	return p, cs
}

// withInitContainer adds an init container to p's spec and status, in
// state st after restarts restarts; policy is its own restart policy (nil:
// an ordinary init container; Always: a sidecar).
func withInitContainer(restarts int32, st corev1.ContainerState, policy *corev1.ContainerRestartPolicy) func(*corev1.Pod) *corev1.Pod {
	return func(p *corev1.Pod) *corev1.Pod {
		p = p.DeepCopy()
		p.Spec.InitContainers = []corev1.Container{{Name: "init-config", Image: "bitnami/os-shell", RestartPolicy: policy}}
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init-config", RestartCount: restarts, State: st}}
		return p
	}
}

// withSidecar adds a metrics sidecar to p's spec and status, after
// restarts restarts, in state st with last as its last state.
func withSidecar(restarts int32, st, last corev1.ContainerState) func(*corev1.Pod) *corev1.Pod {
	return func(p *corev1.Pod) *corev1.Pod {
		p = p.DeepCopy()
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "jmx-exporter", Image: "bitnami/jmx-exporter"})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: "jmx-exporter", RestartCount: restarts, State: st, LastTerminationState: last})
		return p
	}
}

func TestDetectorRealKubeletStatuses(t *testing.T) {
	crash := t0.Add(-2 * time.Second) // the exit the kubelet just reported
	exited := func(restarts, exitCode int32, reason string, run time.Duration) func(*corev1.Pod) *corev1.Pod {
		return func(p *corev1.Pod) *corev1.Pod {
			if restarts > 0 { // the run before ended the same way
				p = kubeletRestarted(kubeletExited(p, restarts-1, 1, "Error", crash.Add(-run-10*time.Second), kafkaRun), crash.Add(-run))
			}
			return kubeletExited(p, restarts, exitCode, reason, crash, run)
		}
	}
	chain := func(fs ...func(*corev1.Pod) *corev1.Pod) func(*corev1.Pod) *corev1.Pod {
		return func(p *corev1.Pod) *corev1.Pod {
			for _, f := range fs {
				p = f(p)
			}
			return p
		}
	}
	deleting := func(p *corev1.Pod) *corev1.Pod {
		p = p.DeepCopy()
		p.DeletionTimestamp = &metav1.Time{Time: t0.Add(-time.Second)}
		return p
	}
	restartPolicy := func(rp corev1.RestartPolicy) func(*corev1.Pod) *corev1.Pod {
		return func(p *corev1.Pod) *corev1.Pod {
			p = p.DeepCopy()
			p.Spec.RestartPolicy = rp
			return p
		}
	}
	backOff := func(p *corev1.Pod) *corev1.Pod { return kubeletBackOff(p, 40*time.Second) }
	running := func(p *corev1.Pod) *corev1.Pod { return kubeletRestarted(p, t0) }
	always := corev1.ContainerRestartPolicyAlways
	completed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: metav1.NewTime(crash)}}
	initFailed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2,
		StartedAt: metav1.NewTime(crash.Add(-time.Second)), FinishedAt: metav1.NewTime(crash)}}

	sidecarOOM := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137,
		StartedAt: metav1.NewTime(crash.Add(-time.Minute)), FinishedAt: metav1.NewTime(crash)}}
	sidecarRunning := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(crash)}}

	tests := []struct {
		name          string
		pod           func(*corev1.Pod) *corev1.Pod
		want          alert.Reason
		wantContainer string
		wantDetail    string // a part of the Detail; "" checks nothing
	}{
		{"second failed exit (restart count 1)", exited(1, 1, "Error", kafkaRun), alert.ReasonCrashLoop, "kafka",
			"container kafka keeps failing: exit code 1 (Error) at 2026-03-01T08:59:58Z, restarted 1 time; the kubelet restarts it with a back-off"},
		{"a later failed exit", exited(4, 1, "Error", kafkaRun), alert.ReasonCrashLoop, "kafka", "restarted 4 times;"},
		{"the CrashLoopBackOff blip", chain(exited(2, 1, "Error", kafkaRun), backOff), alert.ReasonCrashLoop, "kafka", "is in CrashLoopBackOff after 2 restarts"},
		{"a start failure (containerd StartError, exit 128)", exited(1, 128, "StartError", 0), alert.ReasonCrashLoop, "kafka", "exit code 128 (StartError)"},
		{"the first exit (restart count 0) is not yet a loop", exited(0, 1, "Error", kafkaRun), "", "", ""},
		{"running again after one crash", chain(exited(0, 1, "Error", kafkaRun), running), "", "", ""},
		{"running again in the loop", chain(exited(3, 1, "Error", kafkaRun), running), "", "", ""},
		{"an exit after a stable run (the kubelet reset its back-off)", exited(3, 1, "Error", 2*time.Hour), "", "", ""},
		{"exit 0 under restartPolicy Always loops too", exited(2, 0, "Completed", kafkaRun), alert.ReasonCrashLoop, "kafka", "exit code 0 (Completed)"},
		{"exit 0 under restartPolicy OnFailure is done", chain(restartPolicy(corev1.RestartPolicyOnFailure), exited(2, 0, "Completed", kafkaRun)), "", "", ""},
		{"a deleting pod's killed container", chain(exited(3, 143, "Error", kafkaRun), deleting), "", "", ""},
		{"a deleting pod waiting in CrashLoopBackOff", chain(exited(3, 1, "Error", kafkaRun), backOff, deleting), "", "", ""},
		{"waiting for another reason after crashes", chain(exited(2, 1, "Error", kafkaRun), func(p *corev1.Pod) *corev1.Pod {
			p = kubeletBackOff(p, 0)
			p.Status.ContainerStatuses[0].State.Waiting.Reason = "CreateContainerConfigError"
			return p
		}), "", "", ""},
		{"init container Completed after one failure", withInitContainer(1, completed, nil), "", "", ""},
		{"init container failing again", withInitContainer(2, initFailed, nil), alert.ReasonCrashLoop, "init-config", "exit code 2 (Error)"},
		{"sidecar init container exiting 0 again", withInitContainer(2, completed, &always), alert.ReasonCrashLoop, "init-config", "exit code 0 (Completed)"},
		// OOMKilled goes first: the loop of an OOM-killed broker keeps its reason.
		{"OOMKilled, terminated in the loop", exited(2, 137, "OOMKilled", kafkaRun), alert.ReasonOOMKilled, "kafka", "OOMKilled at 2026-03-01T08:59:58Z"},
		{"OOMKilled, in the CrashLoopBackOff blip", chain(exited(2, 137, "OOMKilled", kafkaRun), backOff), alert.ReasonOOMKilled, "kafka", "OOMKilled"},
		{"OOMKilled, running again", chain(exited(2, 137, "OOMKilled", kafkaRun), running), alert.ReasonOOMKilled, "kafka", "OOMKilled"},
		// Container by container, Kafka first: a sidecar's OOM kill does not hide Kafka's loop, nor the reverse.
		{"Kafka crash-looping, the sidecar OOM-killed", chain(exited(1, 1, "Error", kafkaRun), withSidecar(1, sidecarRunning, sidecarOOM)),
			alert.ReasonCrashLoop, "kafka", "exit code 1 (Error)"},
		{"Kafka OOM-killed, the sidecar crash-looping", chain(exited(1, 137, "OOMKilled", kafkaRun), withSidecar(3, sidecarOOM, sidecarOOM)),
			alert.ReasonOOMKilled, "kafka", "container kafka was OOMKilled"},
		{"Kafka running, the sidecar crash-looping", chain(withSidecar(2, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Error", ExitCode: 1, FinishedAt: metav1.NewTime(crash)}}, corev1.ContainerState{})), alert.ReasonCrashLoop, "jmx-exporter", "exit code 1 (Error)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := tt.pod(brokerPod("kafka-broker-0"))
			det := NewDetector(3, 10*time.Minute).Observe(pod, t0)
			if det.Reason != tt.want || det.Container != tt.wantContainer {
				t.Errorf("Observe = %q on %q (%s), want %q on %q", det.Reason, det.Container, det.Detail, tt.want, tt.wantContainer)
			}
			if !strings.Contains(det.Detail, tt.wantDetail) {
				t.Errorf("Detail = %q, want it to say %q", det.Detail, tt.wantDetail)
			}
		})
	}
}

// TestRealKubeletCrashLoopAlertsAtSecondExit feeds the sweeper, through the
// informer and the group wait, the statuses of a real crash loop in the
// order the kubelet writes them. Transient statuses are replaced before the
// group wait ends (the evaluation never sees them: the kubelet restarts a
// first exit at once, and the CrashLoopBackOff blip lasts about a second);
// held ones are what the cache has when the evaluation runs. The alert
// must come at the second failed exit (restart count 1), not at the fifth
// restart (the restart-rate rule) nor never (the blip).
func TestRealKubeletCrashLoopAlertsAtSecondExit(t *testing.T) {
	const pod = "kafka-broker-0"
	e := newEnv(t, brokerPod(pod))
	opts := e.options("bot-a")
	opts.GroupWait = DefaultGroupWait
	s, _ := e.start(opts, true)
	settleStepping(t, e, s, opts.GroupWait)

	type step struct {
		what       string
		status     func(*corev1.Pod, time.Time) *corev1.Pod
		held       bool
		wantAlerts int // notifications once a held status was evaluated
	}
	exited := func(restarts int32) func(*corev1.Pod, time.Time) *corev1.Pod {
		return func(p *corev1.Pod, now time.Time) *corev1.Pod {
			return kubeletExited(p, restarts, 1, "Error", now, kafkaRun)
		}
	}
	backOff := func(d time.Duration) func(*corev1.Pod, time.Time) *corev1.Pod {
		return func(p *corev1.Pod, _ time.Time) *corev1.Pod { return kubeletBackOff(p, d) }
	}
	steps := []step{
		{"first exit", exited(0), false, 0},
		{"restarted at once", kubeletRestarted, true, 0},
		{"second exit", exited(1), true, 1},
		{"back-off 10s ends", backOff(10 * time.Second), false, 1},
		{"restarted", kubeletRestarted, true, 1},
		{"third exit", exited(2), true, 1},
		{"back-off 20s ends", backOff(20 * time.Second), false, 1},
		{"restarted", kubeletRestarted, true, 1},
		{"fourth exit", exited(3), true, 1},
	}
	key := kube.PodKey{Namespace: testNS, Name: pod}
	cur, _ := s.pods.Get(key)
	for i, st := range steps {
		next := st.status(cur, e.clock.Now())
		e.update(next)
		waitFor(t, "the informer to cache the status of "+st.what, func() bool {
			p, ok := s.pods.Get(key)
			return ok && apiequality.Semantic.DeepEqual(p.Status, next.Status)
		})
		cur = next
		if !st.held {
			continue
		}
		// The informer notifies the queue after its cache holds the status:
		// wait for an expected alert, then let every queued change settle.
		waitFor(t, st.what+" to be evaluated", func() bool {
			e.clock.Step(opts.GroupWait)
			return len(e.notes.of("notify")) >= st.wantAlerts
		})
		settleStepping(t, e, s, opts.GroupWait)
		if n := len(e.notes.of("notify")); n != st.wantAlerts {
			t.Fatalf("step %d (%s, restart count %d): %d notifications, want %d", i, st.what,
				cur.Status.ContainerStatuses[0].RestartCount, n, st.wantAlerts)
		}
	}
	a := e.notes.of("notify")[0].alert
	if a.Reason != alert.ReasonCrashLoop || !strings.Contains(a.Detail, "exit code 1 (Error)") || !strings.Contains(a.Detail, "restarted 1 time;") {
		t.Errorf("alert reason %q, detail %q; want %s at the second exit (restarted 1 time)", a.Reason, a.Detail, alert.ReasonCrashLoop)
	}
}
