// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// The interlock: the debug pod's script moves only after the bot's go, given
// while the broker's Kafka container is seen stopped, with the deadline
// before which the kubelet cannot restart it (see godeadline.go).

// goSignaller is the interlock's view of a repair: the approved broker it
// watches, the debug pod it signals, the Lease it records the restart
// count in, and the go state it keeps. It reads nothing else of the run.
type goSignaller struct {
	r   *Repairer
	req Request
	rep Reporter
	// recheck runs the gates about the rest of the cluster again, with
	// fresh reads, before every go.
	recheck func(context.Context) error
	// leases is read when a go is given: the broker's Lease records the
	// restart count (nil in tests that run no Lease).
	leases *heldLeases
	debug  *debugPodState
	state  *goState
}

// goSignaller is the run's interlock view.
func (run *repairRun) goSignaller() *goSignaller {
	return &goSignaller{r: run.r, req: run.req, rep: run.rep, recheck: run.recheckBeforeGo,
		leases: &run.leases, debug: &run.debug, state: &run.interlock}
}

// watchDebugPod waits until cond holds for the debug pod; a deleted or
// replaced debug pod ends the wait with kube.ErrPodDeleted.
func (g *goSignaller) watchDebugPod(ctx context.Context, cond func(*corev1.Pod, *corev1.ContainerStatus) bool) error {
	pod, err := g.watchDebugPodOnly(ctx, g.debug.pod, cond)
	if errors.Is(err, kube.ErrPodDeleted) {
		g.debug.gone = true
	}
	if err != nil {
		return err
	}
	g.debug.pod = pod
	return nil
}

// watchDebugPodOnly is watchDebugPod without touching the debug pod's
// state (safe from another goroutine): it returns the pod that met cond.
func (g *goSignaller) watchDebugPodOnly(ctx context.Context, dbg *corev1.Pod, cond func(*corev1.Pod, *corev1.ContainerStatus) bool) (*corev1.Pod, error) {
	return g.r.kc.WatchPod(ctx, dbg.Namespace, dbg.Name, func(p *corev1.Pod) (bool, error) {
		if p == nil || p.UID != dbg.UID {
			return false, fmt.Errorf("debug pod %s: %w", dbg.Name, kube.ErrPodDeleted)
		}
		return cond(p, containerStatus(p, DebugContainerName)), nil
	})
}

// debugPodDone is the debug pod's end: its repair container terminated (the
// pod's phase is not enough: a sidecar a mesh injected despite the opt-out
// would keep it Running for ever).
func debugPodDone(p *corev1.Pod, c *corev1.ContainerStatus) bool {
	return kube.PodFinished(p) || (c != nil && c.State.Terminated != nil)
}

// endedBeforeGo is the go step's detail when the debug pod ended before any
// go: the script refused (or failed) on its own checks.
const endedBeforeGo = "the debug pod ended before its go (its result says why); nothing was moved"

// signalGoStep is the interlock: once the debug pod's script waits (its
// container runs), it re-reads the broker by watch until its Kafka
// container is stopped, with the approved UID, and long enough before the
// kubelet may restart it (a CrashLoopBackOff back-off may have expired
// meanwhile: then it waits for the next crash). It records the restart
// count and only then sets the go annotation, with the deadline the script
// must move by (see goDeadline).
func (run *repairRun) signalGoStep() Step {
	req := run.req
	var detail string
	return run.step(fmt.Sprintf("Give the debug pod its go once Kafka on %s is stopped", req.Pod),
		func(context.Context) (bool, error) { return run.result != nil || run.interlock.current != nil, nil },
		func(ctx context.Context) error {
			g := run.goSignaller()
			wctx, cancel := g.r.withTimeout(ctx, "waiting to give the debug pod its go")
			defer cancel()
			err := g.watchDebugPod(wctx, func(p *corev1.Pod, c *corev1.ContainerStatus) bool {
				return p.Annotations[AnnotationGo] != "" || kube.PodFinished(p) ||
					(c != nil && (c.State.Running != nil || c.State.Terminated != nil))
			})
			if err != nil {
				return err
			}
			dbg := g.debug.pod
			if v := dbg.Annotations[AnnotationGo]; v != "" {
				// A resumed repair: the go was given before.
				deadline, _ := parseGoValue(v, labelValue(req.ApprovalID))
				g.state.current = &goSignal{deadline: deadline}
				detail = "the go was already given"
				return nil
			}
			if c := containerStatus(dbg, DebugContainerName); debugPodDone(dbg, c) {
				detail = endedBeforeGo
				return nil
			}
			// The script may refuse on the volume before any go (a check of
			// its own failed): its end is read at once, not after Kafka's
			// next stop.
			c, w, err := g.awaitStoppedKafkaOrDebugDone(ctx, wctx)
			if errors.Is(err, errDebugDone) {
				detail = endedBeforeGo
				return nil
			}
			if err != nil {
				return err
			}
			if err := g.giveGo(ctx, c, w); err != nil {
				return err
			}
			detail = fmt.Sprintf("Kafka on %s is %s (restart count %d, same pod UID): go given, valid until %s (%s)",
				req.Pod, stoppedState(c), c.RestartCount, w.Deadline.UTC().Format(time.RFC3339), w.Basis)
			return nil
		},
		func() string { return detail })
}

// awaitStoppedKafka watches the approved broker until its Kafka container
// is stopped with at least MinGoWindow left before its go deadline (on the
// bot's clock), and returns that status and window. It tells the thread,
// once per restart, why it is still waiting. A deleted or recreated broker
// ends the wait with a refusal.
func (g *goSignaller) awaitStoppedKafka(ctx, wctx context.Context) (*corev1.ContainerStatus, goWindow, error) {
	req := g.req
	toldRunning, toldShort, refreshed := int32(-1), int32(-1), int32(-1)
	var win goWindow
	broker, err := g.r.kc.WatchPod(wctx, req.Namespace, req.Pod, func(p *corev1.Pod) (bool, error) {
		if p == nil || string(p.UID) != req.PodUID {
			return false, refuse(GateSamePod, "%s was deleted or recreated before the move; nothing was moved", req.Pod)
		}
		c := containerStatus(p, kube.KafkaContainerName(p))
		if c == nil {
			return false, nil
		}
		if c.State.Running != nil {
			if toldRunning != c.RestartCount {
				toldRunning = c.RestartCount
				g.rep.Report(ctx, Progress{Step: "Interlock", Status: StepStarted,
					Detail: fmt.Sprintf("Kafka on %s is running again (restart %d: its back-off expired): waiting for it to stop before the move", req.Pod, c.RestartCount)})
			}
			return false, nil
		}
		if c.State.Terminated != nil && refreshed != c.RestartCount {
			refreshed = c.RestartCount
			g.refreshKubeletStatus(ctx, p, c.RestartCount)
		}
		win = goDeadline(c)
		left := win.Deadline.Sub(g.r.opts.Clock.Now())
		if !win.Deadline.IsZero() && left >= MinGoWindow {
			return true, nil
		}
		if toldShort != c.RestartCount && c.State.Waiting != nil {
			toldShort = c.RestartCount
			g.rep.Report(ctx, Progress{Step: "Interlock", Status: StepStarted,
				Detail: fmt.Sprintf("Kafka on %s is %s (restart %d), but the bot cannot be sure it stays stopped for %s (%s): no go now; waiting for its next stop",
					req.Pod, stoppedState(c), c.RestartCount, MinGoWindow, win.Basis)})
		}
		return false, nil
	})
	if err != nil {
		return nil, goWindow{}, err
	}
	return containerStatus(broker, kube.KafkaContainerName(broker)), win, nil
}

// refreshKubeletStatus sets the broker pod's AnnotationStatusRefresh to
// "<repair id>.<restart count>", once per stop, so that its kubelet syncs the
// pod again and publishes the back-off it applies to this stop.
//
// Why: a kubelet (pkg/kubelet, v1.37) writes a pod's status at the start of
// each sync, and after a container exits the next sync comes only when its
// back-off expires (at most a minute later, plus jitter). For the whole
// back-off the API server therefore shows the container Terminated, without
// the "back-off 40s restarting failed container" waiting message the go's
// deadline is computed from; the message appears only as the kubelet
// restarts the container, when no window is left. Any change of the pod's
// annotations makes the kubelet sync it at once (its pod config source
// compares annotations), and that sync reports the waiting state with the
// current back-off. On a real node with real Kafka this took the go from a
// broker's sixth stop (back-off 2m40s, read at the kubelet's 60 to 90 s
// resync) to its next one.
//
// The write changes nothing the kubelet, the StatefulSet controller or
// Kafka act on. A failed write (an admission policy older than this bot)
// is said once in the thread; the bot then waits for the kubelet's own
// resync as before.
func (g *goSignaller) refreshKubeletStatus(ctx context.Context, broker *corev1.Pod, restarts int32) {
	value := labelValue(g.req.ApprovalID) + "." + strconv.Itoa(int(restarts))
	if _, err := g.r.kc.AnnotatePod(ctx, broker.Namespace, broker.Name, broker.UID, AnnotationStatusRefresh, value); err != nil {
		g.r.opts.Logger.WarnContext(ctx, "asking the kubelet to publish the broker's back-off", "pod", broker.Name, "error", err)
		if !g.state.refreshFailed {
			g.state.refreshFailed = true
			g.rep.Report(ctx, Progress{Step: "Interlock", Status: StepStarted,
				Detail: fmt.Sprintf("could not annotate %s to have its kubelet publish the back-off now (%v): waiting for the kubelet's own status update, up to a minute later", broker.Name, err)})
		}
	}
}

// giveGo records the broker's restart count in the Lease and sets the
// debug pod's go annotation with the window's deadline; then the
// interlock's state holds the go.
func (g *goSignaller) giveGo(ctx context.Context, c *corev1.ContainerStatus, w goWindow) error {
	if err := g.recheck(ctx); err != nil {
		var ge *GateError
		if errors.As(err, &ge) {
			ge.Seen = "right before the go: " + ge.Seen
		}
		return err
	}
	if lock := g.leases.broker; lock != nil {
		if err := lock.SetAnnotation(ctx, annoGoRestarts, strconv.Itoa(int(c.RestartCount))); err != nil {
			return fmt.Errorf("recording the broker's restart count in the lease: %w", err)
		}
	}
	dbg := g.debug.pod
	if _, err := g.r.kc.AnnotatePod(ctx, dbg.Namespace, dbg.Name, dbg.UID, AnnotationGo, goValue(labelValue(g.req.ApprovalID), w.Deadline)); err != nil {
		return err
	}
	g.state.gave(c.RestartCount, w.Deadline)
	return nil
}

// stoppedState names a stopped container's state.
func stoppedState(c *corev1.ContainerStatus) string {
	switch {
	case c.State.Waiting != nil:
		return "waiting (" + c.State.Waiting.Reason + ")"
	case c.State.Terminated != nil:
		return "terminated (" + c.State.Terminated.Reason + ")"
	}
	return "not running"
}

// errGoExpired ends a wait for the debug pod when its go's deadline has
// passed; errDebugDone ends a wait for the broker when the debug pod has
// finished meanwhile.
var (
	errGoExpired = errors.New("the go's deadline passed")
	errDebugDone = errors.New("the debug pod finished")
)

// waitDebugPodStep watches the debug pod until its repair container has
// terminated. When the go's deadline passes first (the kubelet had not yet
// projected it into the pod, or the script was slow), the script no longer
// moves on it: the bot waits for Kafka's next stop and gives a new go (same
// repair id, new deadline), as often as needed within the repair timeout.
func (run *repairRun) waitDebugPodStep() Step {
	var detail string
	return run.step(fmt.Sprintf("Wait for debug pod %s to finish (up to %s)", run.debugName(), run.r.opts.Timeout),
		func(context.Context) (bool, error) { return run.result != nil, nil },
		func(ctx context.Context) error {
			g := run.goSignaller()
			wctx, cancel := g.r.withTimeout(ctx, "waiting for the debug pod")
			defer cancel()
			deadline := g.state.deadline()
			if deadline.IsZero() && g.debug.pod != nil {
				deadline, _ = parseGoValue(g.debug.pod.Annotations[AnnotationGo], labelValue(g.req.ApprovalID))
			}
			for resignals := 0; ; resignals++ {
				err := g.watchDebugPodUntilGoExpires(wctx, deadline)
				if !errors.Is(err, errGoExpired) {
					if err == nil && resignals > 0 {
						detail = fmt.Sprintf("after %d new go signal(s)", resignals)
					}
					return err
				}
				g.rep.Report(ctx, Progress{Step: "Interlock", Status: StepStarted,
					Detail: fmt.Sprintf("the go's deadline %s passed and the debug pod has not finished (the kubelet may not have delivered the go yet): the script will not move on it; waiting for Kafka on %s to stop again to give a new go",
						deadline.UTC().Format(time.RFC3339), g.req.Pod)})
				c, w, err := g.awaitStoppedKafkaOrDebugDone(ctx, wctx)
				if errors.Is(err, errDebugDone) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := g.giveGo(ctx, c, w); err != nil {
					return err
				}
				deadline = w.Deadline
				g.rep.Report(ctx, Progress{Step: "Interlock", Status: StepStarted,
					Detail: fmt.Sprintf("Kafka on %s is %s (restart count %d, same pod UID): new go given, valid until %s (%s)",
						g.req.Pod, stoppedState(c), c.RestartCount, w.Deadline.UTC().Format(time.RFC3339), w.Basis)})
			}
		},
		func() string { return detail })
}

// watchDebugPodUntilGoExpires waits for the debug pod's end; it returns
// errGoExpired once the bot's clock is a second past the go's deadline
// (none when the deadline is zero, unknown) and the pod has not finished.
func (g *goSignaller) watchDebugPodUntilGoExpires(wctx context.Context, deadline time.Time) error {
	dctx, cancel := context.WithCancelCause(wctx)
	defer cancel(context.Canceled)
	if !deadline.IsZero() {
		t := g.r.opts.Clock.NewTimer(deadline.Add(time.Second).Sub(g.r.opts.Clock.Now()))
		defer t.Stop()
		go func() {
			select {
			case <-t.C():
				cancel(errGoExpired)
			case <-dctx.Done():
			}
		}()
	}
	err := g.watchDebugPod(dctx, debugPodDone)
	if err != nil && wctx.Err() == nil && errors.Is(context.Cause(dctx), errGoExpired) {
		return errGoExpired
	}
	return err
}

// awaitStoppedKafkaOrDebugDone is awaitStoppedKafka that also ends, with
// errDebugDone (the debug pod updated), when the debug pod finishes first:
// the script moved on the earlier go, or gave up.
func (g *goSignaller) awaitStoppedKafkaOrDebugDone(ctx, wctx context.Context) (*corev1.ContainerStatus, goWindow, error) {
	bctx, cancel := context.WithCancelCause(wctx)
	defer cancel(context.Canceled)
	type ended struct {
		pod *corev1.Pod
		err error
	}
	dbgEnd := make(chan ended, 1)
	dbg := g.debug.pod
	go func() {
		pod, err := g.watchDebugPodOnly(bctx, dbg, debugPodDone)
		if err == nil {
			cancel(errDebugDone)
		}
		dbgEnd <- ended{pod, err}
	}()
	c, w, err := g.awaitStoppedKafka(ctx, bctx)
	cancel(context.Canceled)
	d := <-dbgEnd
	if d.err == nil {
		g.debug.pod = d.pod
		return nil, goWindow{}, errDebugDone
	}
	if errors.Is(d.err, kube.ErrPodDeleted) {
		g.debug.gone = true
		return nil, goWindow{}, d.err
	}
	return c, w, err
}
