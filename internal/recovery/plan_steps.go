// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// GateNodeID refuses a repair when the broker's node id is unknown: the
// script could not check that the volume belongs to that node.
const GateNodeID = "node-id-known"

// Gates of the debug pod's shape, checked while it is built (before the
// Lease): an image without a shell, a claim that dies with the broker.
const (
	GateDebugImage  = "debug-image-has-shell"
	GateNoEphemeral = "no-generic-ephemeral-volume"
)

// step builds one main step of a repair. A failure is remembered for the
// Lease's final state; a failure caused by the bot's own shutdown marks the
// repair interrupted, so cleanup leaves it for Resume.
func (run *repairRun) step(describe string, done func(context.Context) (bool, error), do func(context.Context) error, detail func() string) Step {
	return funcStep{describe: describe, done: done, detail: detail, do: func(ctx context.Context) error {
		// Fencing: once another holder took a Lease, this replica writes
		// nothing more.
		if err := run.fenced(); err != nil {
			if run.end.failed == nil {
				run.end = runEnd{failed: err}
			}
			return err
		}
		err := do(ctx)
		if err != nil && run.end.failed == nil {
			run.end = runEnd{failed: err, interrupted: ctx.Err() != nil}
		}
		return err
	}}
}

// gateReadBackoff bounds the retries of the gates' reads after a transient
// API error: four attempts within about two seconds.
var gateReadBackoff = wait.Backoff{Steps: 4, Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1}

// checkGatesStep re-reads the broker and runs every safety gate.
func (run *repairRun) checkGatesStep() Step {
	req := run.req
	return run.step(fmt.Sprintf("Re-check %s/%s and the safety gates", req.Namespace, req.Pod), nil,
		func(ctx context.Context) error {
			res, err := run.r.readGates(ctx, req, run.kind == resumePlan)
			if res != nil {
				run.gateResult = *res
			}
			return err
		},
		func() string { return strings.Join(run.warnings, "\n") })
}

// readGates re-reads the approved broker and runs every safety gate on it.
// The result is nil when the broker could not be read, and set (with the
// first refusal) once the gates ran.
func (r *Repairer) readGates(ctx context.Context, req Request, resuming bool) (*gateResult, error) {
	// Everything here only reads: ride out a blip of transient API errors
	// (throttling, 5xx, timeouts) before giving up.
	var snap diagnose.Snapshot
	err := retry.OnError(gateReadBackoff, kube.IsTransient, func() error {
		var err error
		snap, err = r.inspect.Snapshot(ctx, req.Namespace, req.Pod)
		return err
	})
	switch {
	case errors.Is(err, kube.ErrNamespaceNotAllowed):
		return nil, refuse(GateNamespace, "namespace %q is outside KAFKA_NAMESPACES", req.Namespace)
	case errors.Is(err, kube.ErrPodNotFound):
		return nil, refuse(GateSamePod, "pod %s/%s no longer exists", req.Namespace, req.Pod)
	case err != nil:
		return nil, fmt.Errorf("re-reading %s/%s: %w", req.Namespace, req.Pod, err)
	}
	var in *gateInput
	err = retry.OnError(gateReadBackoff, kube.IsTransient, func() error {
		in = r.gateInput(req, snap)
		in.resuming = resuming
		return checkGates(ctx, in)
	})
	return &gateResult{snap: snap, finding: in.finding, warnings: in.warnings}, err
}

// goGates are the gates about the rest of the broker's cluster, which can
// turn between the click and the go (up to the repair timeout, more with
// new gos): giveGo runs them again, with fresh reads, before every go.
var goGates = []gate{
	{GateNotEscalated, checkNotEscalated},
	{GatePeersHealthy, checkPeers},
	{GateQuorumHealthy, checkQuorum},
}

// recheckBeforeGo re-runs goGates through the same reads as the click's
// gates (peers, their previous logs, escalation records), riding out a
// blip of transient API errors, and returns the first refusal.
func (run *repairRun) recheckBeforeGo(ctx context.Context) error {
	return retry.OnError(gateReadBackoff, kube.IsTransient, func() error {
		in := run.r.gateInput(run.req, run.snap)
		in.resuming, in.finding = run.kind == resumePlan, run.finding
		for _, g := range goGates {
			if err := g.check(ctx, in); err != nil {
				return err
			}
		}
		return nil
	})
}

// gateInput prepares the gates' view of a fresh snapshot.
func (r *Repairer) gateInput(req Request, snap diagnose.Snapshot) *gateInput {
	return &gateInput{
		req:      req,
		snap:     snap,
		findings: r.engine.Diagnose(snap),
		allowed:  r.kc.NamespaceAllowed,
		now:      r.opts.Clock.Now(),
		opts:     r.opts.Gates,
		lock:     r.lock,
		loadPeers: onceValue(func(ctx context.Context) ([]diagnose.Snapshot, error) {
			return r.inspect.KafkaPods(ctx)
		}),
		loadLeases: onceValue(func(ctx context.Context) ([]coordinationv1.Lease, error) {
			return r.leasesOf(ctx, req.Namespace)
		}),
		loadEscalations: func(ctx context.Context) ([]kube.Escalation, error) { return r.kc.Escalations(ctx, req.Namespace) },
		diagnosePeer: func(ctx context.Context, s diagnose.Snapshot) ([]diagnose.Finding, error) {
			full, err := r.inspect.Snapshot(ctx, s.Namespace, s.Pod)
			if err != nil {
				return nil, err
			}
			return r.engine.Diagnose(full), nil
		},
	}
}

// onceValue memoises a successful load.
func onceValue[T any](load func(context.Context) (T, error)) func(context.Context) (T, error) {
	var (
		mu   sync.Mutex
		done bool
		v    T
	)
	return func(ctx context.Context) (T, error) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return v, nil
		}
		got, err := load(ctx)
		if err != nil {
			return got, err
		}
		v, done = got, true
		return v, nil
	}
}

// buildSpecStep builds the script input and the debug pod spec; it writes
// nothing.
func (run *repairRun) buildSpecStep() Step {
	return run.step("Build the debug pod and script", nil,
		func(ctx context.Context) error {
			spec, err := run.r.buildDebugSpec(ctx, run.req, run.snap, run.spec.script)
			run.spec = spec
			return err
		},
		func() string {
			sp := run.spec
			if sp.pod == nil {
				return ""
			}
			return fmt.Sprintf("debug pod %s on node %s, image %s; %s %s, backup folder %s at the volume root",
				sp.pod.Name, sp.broker.Spec.NodeName, firstImage(sp.pod), sp.script.Action, sp.script.Target, sp.script.BackupName)
		})
}

// buildDebugSpec re-reads the approved broker pod and builds the script
// input (a resumed repair keeps the recorded one) and the debug pod spec
// for it. The spec returned holds the script input as far as it was
// built, also on failure.
func (r *Repairer) buildDebugSpec(ctx context.Context, req Request, snap diagnose.Snapshot, recorded ScriptInput) (debugSpec, error) {
	out := debugSpec{script: recorded}
	broker, err := r.kc.FetchPod(ctx, req.Namespace, req.Pod)
	if err != nil {
		return out, err
	}
	if string(broker.UID) != req.PodUID {
		return out, refuse(GateSamePod, "pod %s was recreated a moment ago (UID %s)", req.Pod, broker.UID)
	}
	if out.script.BackupName == "" {
		if snap.NodeID == "" {
			return out, refuse(GateNodeID, "the node id of %s is unknown, so the script could not check that the volume belongs to it", req.Pod)
		}
		out.script = ScriptInput{
			Action: req.Action, Target: req.Target, NodeID: snap.NodeID,
			ClusterID: kube.ClusterIDOf(broker),
			MountRoot: DefaultMountRoot, BackupName: BackupName(req.ApprovalID, r.opts.Clock.Now()),
		}
		if !clusterIDRE.MatchString(out.script.ClusterID) {
			out.script.ClusterID = "" // not a Kafka cluster id: check agreement only
		}
	}
	if err := out.script.Validate(); err != nil {
		return out, fmt.Errorf("script input: %w", err)
	}
	in := DebugPodInput{
		Broker: broker, KafkaContainer: snap.KafkaContainer, Image: r.opts.DebugImage,
		RepairID: labelValue(req.ApprovalID), Script: out.script, Deadline: r.opts.Timeout,
		ClaimAccessModes: map[string][]corev1.PersistentVolumeAccessMode{},
		AllowRoot:        r.opts.AllowRootBroker,
	}
	for _, c := range snap.Claims {
		in.ClaimNames = append(in.ClaimNames, c.ClaimName)
		for _, m := range c.AccessModes {
			in.ClaimAccessModes[c.ClaimName] = append(in.ClaimAccessModes[c.ClaimName], corev1.PersistentVolumeAccessMode(m))
		}
	}
	spec, err := DebugPod(in)
	var noShell *NoShellError
	var eph *EphemeralVolumeError
	switch {
	case errors.As(err, &noShell):
		return out, refuse(GateDebugImage, "%v", noShell)
	case errors.As(err, &eph):
		return out, refuse(GateNoEphemeral, "%v", eph)
	case err != nil:
		return out, fmt.Errorf("building the debug pod: %w", err)
	}
	out.broker, out.pod = broker, spec
	return out, nil
}

func firstImage(pod *corev1.Pod) string {
	if len(pod.Spec.Containers) == 0 {
		return "?"
	}
	return pod.Spec.Containers[0].Image
}

// showDryRunStep reports the exact debug pod spec and the script.
func (run *repairRun) showDryRunStep() Step {
	return run.step("Show what would run (dry run)", nil, func(ctx context.Context) error {
		y, err := yaml.Marshal(run.spec.pod)
		if err != nil {
			return fmt.Errorf("rendering the debug pod spec: %w", err)
		}
		run.rep.Report(ctx, Progress{Step: "Debug pod spec (dry run)", Status: StepSkipped, Detail: string(y)})
		run.rep.Report(ctx, Progress{Step: "Script the debug pod runs (dry run)", Status: StepSkipped, Detail: Script})
		return nil
	}, nil)
}

// fenced returns why this replica lost one of its Leases, or nil.
func (run *repairRun) fenced() error {
	if err := run.leases.broker.Lost(); err != nil {
		return err
	}
	return run.leases.cluster.Lost()
}

// takeLeaseStep takes the cluster's repair Lease (create or
// compare-and-swap), then the broker's, recording the repair. Of two
// approvals on two brokers of one cluster, only one gets past the first.
func (run *repairRun) takeLeaseStep() Step {
	return run.step(fmt.Sprintf("Take the repair lease %s (after its cluster's)", kube.RepairLeaseName(run.req.Pod)),
		func(context.Context) (bool, error) { return run.leases.broker != nil, nil },
		func(ctx context.Context) error {
			held, notes, err := run.r.takeLeases(ctx, run.req, run.snap, run.spec)
			if err != nil {
				return err
			}
			run.leases, run.notes = held, append(run.notes, notes...)
			return nil
		},
		func() string {
			if run.leases.cluster == nil {
				return ""
			}
			return "holding " + run.leases.cluster.lease.Name + " for cluster " + KafkaClusterKeyOf(run.snap).String()
		})
}

// takeLeases takes the cluster's repair Lease, then the broker's, recording
// the script input and the debug pod; it returns them held, with a warning
// for each one taken over from a record that does not verify.
func (r *Repairer) takeLeases(ctx context.Context, req Request, snap diagnose.Snapshot, spec debugSpec) (heldLeases, []string, error) {
	// The cluster is the one of the snapshot the gates just read (the plan
	// is built before it exists).
	key := KafkaClusterKeyOf(snap)
	script, err := jsonString(spec.script)
	if err != nil {
		return heldLeases{}, nil, err
	}
	cl, err := r.lock.AcquireCluster(ctx, req, key)
	if errors.Is(err, ErrAlreadyRan) || errors.Is(err, ErrRepairRunning) {
		return heldLeases{}, nil, &GateError{Gate: GateNoRepair, Seen: err.Error()}
	}
	if err != nil {
		return heldLeases{}, nil, err
	}
	extra := map[string]string{annoScript: script, annoDebugPod: spec.pod.Name, annoClusterLease: cl.lease.Name}
	held, err := r.lock.Acquire(ctx, req, snap.KafkaCluster, extra)
	if err != nil {
		// Give the cluster back: this repair never started.
		if rerr := cl.Release(context.WithoutCancel(ctx), leaseDone); rerr != nil {
			r.opts.Logger.WarnContext(ctx, "releasing the cluster's repair lease", "lease", cl.lease.Name, "error", rerr)
		}
	}
	if errors.Is(err, ErrAlreadyRan) || errors.Is(err, ErrRepairRunning) {
		return heldLeases{}, nil, &GateError{Gate: GateNoRepair, Seen: err.Error()}
	}
	if err != nil {
		return heldLeases{}, nil, err
	}
	var notes []string
	for _, took := range []error{cl.tookExpired, held.tookExpired} {
		if took != nil {
			notes = append(notes, took.Error())
			r.opts.Logger.WarnContext(ctx, "took over a repair lease whose record does not verify, after its bound",
				"approval_id", req.ApprovalID, "error", took)
		}
	}
	return heldLeases{broker: held, cluster: cl}, notes, nil
}

// debugName is the debug pod's name: the pod's, else the spec's, else the
// expected or recorded one.
func (run *repairRun) debugName() string {
	switch {
	case run.debug.pod != nil:
		return run.debug.pod.Name
	case run.spec.pod != nil:
		return run.spec.pod.Name
	}
	return run.debug.name
}

// createDebugPodStep creates the debug pod (skipped when it exists or its
// result is known).
func (run *repairRun) createDebugPodStep() Step {
	return run.step(fmt.Sprintf("Create debug pod %s", run.debugName()),
		func(context.Context) (bool, error) { return run.result != nil || run.debug.pod != nil, nil },
		func(ctx context.Context) error {
			pod, err := run.r.kc.CreateRepairPod(ctx, run.spec.pod)
			if err != nil {
				return err
			}
			run.debug.pod = pod
			return nil
		}, nil)
}

// containerStatus returns the status of the named container, or nil.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// checkStayedStoppedStep checks, after the move, that the broker's Kafka
// did not start while the script moved: same UID, same restart count as
// when the go was given, not running. If it did, the rename may have
// happened under a live JVM; the thread says so loudly.
func (run *repairRun) checkStayedStoppedStep() Step {
	req := run.req
	var detail string
	return run.step(fmt.Sprintf("Check that Kafka on %s stayed stopped during the move", req.Pod),
		func(context.Context) (bool, error) {
			return run.result == nil || run.interlock.restarts < 0 || run.broker.replaced, nil
		},
		func(ctx context.Context) error {
			restarts := run.interlock.restarts
			problem, err := run.r.kafkaRanDuringMove(ctx, req, restarts)
			if err != nil {
				return err
			}
			if problem == "" {
				detail = fmt.Sprintf("restart count still %d: Kafka did not run during the move", restarts)
				return nil
			}
			loud := "⚠️ INTERLOCK: " + problem + ": the rename may have happened under a running Kafka. " +
				"Check the broker's log around the move before anything else; the backup keeps what was moved."
			run.notes = append(run.notes, loud)
			run.r.opts.Logger.WarnContext(ctx, loud, "pod", req.Pod, "approval_id", req.ApprovalID)
			detail = loud
			return nil
		},
		func() string { return detail })
}

// kafkaRanDuringMove re-reads the approved broker and says how its Kafka
// may have run since the go was given at restart count restarts ("" when
// it stayed stopped).
func (r *Repairer) kafkaRanDuringMove(ctx context.Context, req Request, restarts int32) (string, error) {
	broker, err := r.kc.FetchPod(ctx, req.Namespace, req.Pod)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s was deleted during the move", req.Pod), nil
	case err != nil:
		return "", err
	case string(broker.UID) != req.PodUID:
		return fmt.Sprintf("%s was recreated during the move (UID %s)", req.Pod, broker.UID), nil
	}
	c := containerStatus(broker, kube.KafkaContainerName(broker))
	switch {
	case c == nil:
		return "the broker reports no Kafka container status", nil
	case c.RestartCount != restarts:
		return fmt.Sprintf("Kafka on %s restarted during the move (restart count %d -> %d)", req.Pod, restarts, c.RestartCount), nil
	case c.State.Running != nil:
		return fmt.Sprintf("Kafka on %s is running now", req.Pod), nil
	}
	return "", nil
}

// readResultStep reads the script's result line from the debug pod's log
// and records it in the Lease.
func (run *repairRun) readResultStep() Step {
	return run.step("Read the repair script's result",
		func(context.Context) (bool, error) { return run.result != nil, nil },
		func(ctx context.Context) error {
			res, err := readScriptResult(ctx, run.r.logs, run.debug.pod)
			if err != nil {
				return err
			}
			run.result = &res
			if lock := run.leases.broker; lock != nil {
				if err := lock.RecordJSON(ctx, annoResult, res); err != nil {
					return fmt.Errorf("recording the result in the lease: %w", err)
				}
			}
			return nil
		},
		func() string {
			res := run.result
			if res == nil {
				return ""
			}
			verb := "Moved"
			if res.Status == StatusAlreadyMoved {
				verb = "Already moved by an earlier run:"
			}
			return fmt.Sprintf("%s %s to %s (%d bytes, %d files)", verb, res.Source, res.Destination, res.Bytes, res.Files)
		})
}

// readScriptResult reads the result line of the script from the finished
// debug pod's log: an error unless the script moved the target (or had
// moved it before).
func readScriptResult(ctx context.Context, logs kube.LogReader, pod *corev1.Pod) (ScriptResult, error) {
	container := ""
	if len(pod.Spec.Containers) > 0 {
		container = pod.Spec.Containers[0].Name
	}
	log, err := logs.ReadContainerLog(ctx, pod.Namespace, pod.Name, container, false)
	if err != nil {
		return ScriptResult{}, err
	}
	res, err := ParseScriptResult(log)
	if err != nil {
		hint := ""
		if c := containerStatus(pod, DebugContainerName); c != nil && c.State.Terminated != nil {
			if t := c.State.Terminated; t.ExitCode == 126 || t.ExitCode == 127 || t.Reason == "StartError" || t.Reason == "ContainerCannotRun" {
				hint = fmt.Sprintf(" The repair container could not start its shell (%s, exit %d): the image has no sh; set DEBUG_IMAGE to an image with a POSIX sh (e.g. busybox by digest).", t.Reason, t.ExitCode)
			}
		}
		return ScriptResult{}, fmt.Errorf("debug pod %s ended in phase %s: %w; its log ends:\n%s%s", pod.Name, pod.Status.Phase, err, lastLines(log, 5), hint)
	}
	if !res.OK() {
		return ScriptResult{}, fmt.Errorf("the script %s (%s): %s; nothing was moved. Its log ends:\n%s", res.Status, res.Reason, res.Explain(), lastLines(log, 5))
	}
	if res.Status == StatusCheckOK {
		return ScriptResult{}, fmt.Errorf("the script ran in check mode: nothing was moved")
	}
	return res, nil
}

// deleteDebugPodStep deletes the debug pod once its result is read.
func (run *repairRun) deleteDebugPodStep() Step {
	return run.step(fmt.Sprintf("Delete debug pod %s", run.debugName()), run.debugPodGone, run.deleteDebugPod, nil)
}

// cleanupDebugPodStep deletes the debug pod whatever happened, unless the
// bot itself is stopping (Resume then finds it).
func (run *repairRun) cleanupDebugPodStep() Step {
	return funcStep{
		describe: "Delete the debug pod",
		done: func(ctx context.Context) (bool, error) {
			if run.end.interrupted || run.fenced() != nil {
				return true, nil // the bot is stopping, or another holder owns the repair now
			}
			return run.debugPodGone(ctx)
		},
		do: run.deleteDebugPod,
	}
}

func (run *repairRun) debugPodGone(context.Context) (bool, error) {
	return run.debug.pod == nil || run.debug.gone, nil
}

func (run *repairRun) deleteDebugPod(ctx context.Context) error {
	dbg := run.debug.pod
	if err := run.r.kc.DeletePodUID(ctx, dbg.Namespace, dbg.Name, dbg.UID); err != nil {
		return err
	}
	run.debug.gone = true
	return nil
}

// restartBrokerStep deletes the approved broker pod (only that UID) so
// its StatefulSet or StrimziPodSet recreates it at once.
func (run *repairRun) restartBrokerStep() Step {
	return run.step(fmt.Sprintf("Restart %s (delete the pod; its controller recreates it)", run.req.Pod),
		func(context.Context) (bool, error) { return run.broker.replaced, nil },
		func(ctx context.Context) error {
			if err := run.r.restartBroker(ctx, run.req); err != nil {
				return err
			}
			run.broker.replaced = true
			return nil
		}, nil)
}

// restartBroker deletes the approved broker pod, never a live one.
func (r *Repairer) restartBroker(ctx context.Context, req Request) error {
	// Re-read it first: a broker Running and Ready is left alone.
	cur, err := r.kc.FetchPod(ctx, req.Namespace, req.Pod)
	if err == nil && string(cur.UID) == req.PodUID && kube.PodReady(cur) {
		if c := containerStatus(cur, kube.KafkaContainerName(cur)); c != nil && c.State.Running != nil {
			return fmt.Errorf("%s is Running and Ready: the bot never deletes a live broker; it was not restarted, check it", req.Pod)
		}
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return r.kc.DeletePodUID(ctx, req.Namespace, req.Pod, uidOf(req.PodUID))
}

// recoveryMarkers are the broker log lines that show a metadata log being
// rebuilt and the broker coming back (kraft-recovery.md §2.2).
var recoveryMarkers = []string{
	"Initialized snapshots",
	"has caught up",
	"Transitioning from STARTING to RECOVERY",
	"Transitioning from RECOVERY to RUNNING",
	"has been unfenced",
	"Kafka Server started",
	"started (kafka.server",
}

// maxRecoveryLines bounds the log lines a report quotes.
const maxRecoveryLines = 8

// waitBrokerStep watches the recreated broker pod until it is Ready, or
// crash-loops again (then it diagnoses it and stops the repair).
func (run *repairRun) waitBrokerStep() Step {
	req := run.req
	describe := fmt.Sprintf("Watch the new %s until Ready (up to %s, longer while Kafka is still starting)", req.Pod, run.r.opts.Timeout)
	return run.step(describe, nil,
		func(ctx context.Context) error {
			var pod *corev1.Pod
			var err error
			// A large broker's log recovery after an unclean stop can take
			// far longer than the repair timeout: while the new pod's Kafka
			// runs without crashing, wait another timeout, renewing the
			// Lease, up to maxStartingRounds timeouts in all.
			for round := 1; ; round++ {
				wctx, cancel := run.r.withTimeout(ctx, "waiting for the new broker pod to become Ready")
				pod, err = run.r.kc.WaitPodReplaced(wctx, req.Namespace, req.Pod, uidOf(req.PodUID), func(p *corev1.Pod) bool {
					return kube.PodReady(p) || podCrashing(p)
				})
				cancel()
				if pod != nil && string(pod.UID) != req.PodUID {
					run.broker.newPod = pod
				}
				if !errors.Is(err, ErrTimeout) || round >= maxStartingRounds {
					break
				}
				// Timed out: read the pod once to see whether Kafka is starting.
				cur, ferr := run.r.kc.FetchPod(ctx, req.Namespace, req.Pod)
				if ferr != nil || string(cur.UID) == req.PodUID || !kafkaStarting(cur) {
					break
				}
				run.broker.newPod = cur
				run.rep.Report(ctx, Progress{Step: "Interlock", Status: StepStarted, Detail: fmt.Sprintf(
					"%s is still starting after %s (Kafka runs, not Ready yet: log recovery takes long on a large broker); waiting up to another %s",
					req.Pod, time.Duration(round)*run.r.opts.Timeout, run.r.opts.Timeout)})
				if lock := run.leases.broker; lock != nil {
					if lerr := lock.SetStep(ctx, describe); lerr != nil {
						return lerr
					}
				}
			}
			if err != nil {
				if run.broker.newPod != nil {
					return fmt.Errorf("%w; last state of the new pod: %s", err, podState(run.broker.newPod))
				}
				return fmt.Errorf("%w; no new pod appeared", err)
			}
			container := kube.KafkaContainerName(pod)
			if !kube.PodReady(pod) {
				return run.crashAgain(ctx, pod)
			}
			if settled, err := run.settle(ctx, pod); err != nil {
				return err
			} else if settled != nil {
				return run.crashAgain(ctx, settled)
			}
			run.waitKafkaRecovered(ctx)
			log, err := run.r.logs.ReadContainerLog(ctx, pod.Namespace, pod.Name, container, false)
			if err != nil {
				run.broker.recoveryLines = []string{"(could not read the new pod's log: " + err.Error() + ")"}
				return nil
			}
			run.broker.recoveryLines = matchingLines(log, recoveryMarkers, maxRecoveryLines)
			return nil
		},
		func() string {
			b := run.broker
			if b.newPod == nil {
				return ""
			}
			s := fmt.Sprintf("New pod UID %s is %s.", b.newPod.UID, podState(b.newPod))
			if len(b.recoveryLines) > 0 {
				s += " Its log:\n" + strings.Join(b.recoveryLines, "\n")
			}
			return s
		})
}

// crashAgain diagnoses a recreated broker that crashes and stops.
func (run *repairRun) crashAgain(ctx context.Context, pod *corev1.Pod) error {
	ce := &CrashAgainError{Pod: pod.Name, State: podState(pod)}
	if snap, err := run.r.inspect.Snapshot(ctx, pod.Namespace, pod.Name); err == nil {
		if findings := run.r.engine.Diagnose(snap); len(findings) > 0 {
			ce.Finding = &findings[0]
		}
	}
	run.broker.crash = ce
	run.notes = append(run.notes, run.r.escalate(ctx, run.req, pod, ce))
	return ce
}

// podCrashing reports whether a pod's Kafka container crashed: in
// CrashLoopBackOff, terminated with an error, or restarted after one.
func podCrashing(pod *corev1.Pod) bool {
	name := kube.KafkaContainerName(pod)
	for _, c := range pod.Status.ContainerStatuses {
		if name != "" && c.Name != name {
			continue
		}
		if w := c.State.Waiting; w != nil && w.Reason == diagnose.WaitingCrashLoopBackOff {
			return true
		}
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			return true
		}
		if t := c.LastTerminationState.Terminated; c.RestartCount > 0 && t != nil && t.ExitCode != 0 && !c.Ready {
			return true
		}
	}
	return false
}

// releaseLeaseStep records the outcome in the Lease and gives it up,
// unless the bot itself is stopping (Resume then finishes the repair).
func (run *repairRun) releaseLeaseStep() Step {
	return funcStep{
		describe: "Release the repair lease",
		done: func(context.Context) (bool, error) {
			return run.leases.broker == nil || run.fenced() != nil, nil
		},
		do: func(ctx context.Context) error {
			if run.end.interrupted {
				// The bot is stopping: the repair stays running for Resume,
				// and the holder is cleared so that any replica resumes it at
				// once (a Deployment replaces a deleted pod under a new name,
				// which would otherwise wait for the Lease to expire).
				return run.leases.broker.HandOff(ctx)
			}
			state := leaseDone
			if run.end.failed != nil {
				state = leaseFailed
			}
			err := run.leases.broker.Release(ctx, state)
			if run.leases.cluster != nil {
				err = errors.Join(err, run.leases.cluster.Release(ctx, state))
			}
			return err
		},
	}
}

// matchingLines returns the last max lines of log containing one of markers.
func matchingLines(log string, markers []string, max int) []string {
	var out []string
	for line := range strings.Lines(log) {
		line = strings.TrimRight(line, "\r\n")
		for _, m := range markers {
			if strings.Contains(line, m) {
				out = append(out, line)
				break
			}
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// settle watches a recreated broker that became Ready for the settle
// period: success is "Ready, and still Ready after it" (no restart, no
// crash, not replaced). It returns the pod state that broke the period, or
// nil when it settled.
func (run *repairRun) settle(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	d := run.r.opts.Settle
	if d <= 0 {
		return nil, nil
	}
	restarts := int32(-1)
	if c := containerStatus(pod, kube.KafkaContainerName(pod)); c != nil {
		restarts = c.RestartCount
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The period starts before it is reported, so whoever reads the report
	// (a person, or a test stepping a fake clock) knows the timer runs.
	t := run.r.opts.Clock.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			cancel(errSettled)
		case <-sctx.Done():
		}
	}()
	run.rep.Report(ctx, Progress{Step: "Settle", Status: StepStarted,
		Detail: fmt.Sprintf("%s is Ready; watching that it stays Ready for %s", pod.Name, d)})
	var broke *corev1.Pod
	_, err := run.r.kc.WatchPod(sctx, pod.Namespace, pod.Name, func(p *corev1.Pod) (bool, error) {
		if p == nil || p.UID != pod.UID {
			return false, fmt.Errorf("%s was deleted or replaced during the settle period", pod.Name)
		}
		c := containerStatus(p, kube.KafkaContainerName(p))
		if !kube.PodReady(p) || podCrashing(p) || (c != nil && c.RestartCount != restarts) {
			broke = p
			return true, nil
		}
		return false, nil
	})
	switch {
	case broke != nil:
		return broke, nil
	case errors.Is(context.Cause(sctx), errSettled):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return nil, nil
}

// maxStartingRounds bounds the wait for a recreated broker whose Kafka is
// still starting, in repair timeouts (10 minutes each by default).
const maxStartingRounds = 6

// kafkaStarting reports whether a pod's Kafka container runs, has not
// crashed, and is not Ready yet: it is starting (log recovery).
func kafkaStarting(pod *corev1.Pod) bool {
	c := containerStatus(pod, kube.KafkaContainerName(pod))
	return c != nil && c.State.Running != nil && !podCrashing(pod) && !kube.PodReady(pod)
}
