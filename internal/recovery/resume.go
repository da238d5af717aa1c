// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// resumeRecheck bounds how long Resume waits before looking again at a
// repair another replica holds.
const resumeRecheck = 15 * time.Second

// Resume finishes the repairs a stopped bot left running. Call it once at
// start-up, in the background; it returns when no running repair is left
// to it, or when ctx ends.
//
// Which repairs: every repair Lease in state "running" in the namespaces in
// scope. A Lease held by this replica's own identity (the same replica,
// restarted), handed off (no holder: its bot stopped mid-repair and said
// so), or whose holder stopped renewing it (renew time plus duration,
// that is the repair timeout plus two minutes, has passed) is taken over at
// once, with an update guarded by its resourceVersion, so only one replica
// takes it. A Lease another replica still renews is left to that replica:
// Resume looks again every resumeRecheck until it is handed off or expires.
//
// What it does, reporting in the repair's own Slack thread ("bot restarted
// during step X") and recording each step like a fresh repair:
//   - the script's result is recorded in the Lease: continue after it
//     (delete the debug pod, restart the broker unless it was already
//     restarted, watch it come back);
//   - the debug pod exists: wait for it to finish if it still runs, read
//     its result, and continue the same way;
//   - the debug pod is gone and the result unknown, and the broker pod is
//     still the approved one and still crash-looping: run the script again
//     with the recorded input and backup name. The script is idempotent: if
//     the first run moved the target it reports already-moved, which counts
//     as success, so nothing is ever moved twice;
//   - the debug pod is gone, the result unknown and the broker pod was
//     recreated or is running: stop (failed). The files may or may not have
//     moved and the broker may be live; a person must look.
//
// A finished debug pod's result is read and recorded before any gate runs;
// the gates run again before any resumed step that could let the script
// move (not once the result is known). A gate refusal after a go was given
// says the move may have happened and points at the backup, never that
// nothing was changed.
//
// Resume never starts a repair that was not approved.
func (r *Repairer) Resume(ctx context.Context, newReporter func(channel, threadTS string) Reporter) error {
	tried := map[string]bool{}
	seen := map[string]observedLease{}
	for {
		leases, err := r.runningLeases(ctx)
		if err != nil {
			return err
		}
		var next time.Time
		for i := range leases {
			l := &leases[i]
			key := l.Namespace + "/" + l.Name + "/" + l.Annotations[annoApprovalID]
			if tried[key] {
				continue
			}
			// Never act on (or post to the channel of) a record this bot
			// did not sign: anyone with Lease write access could forge one.
			if err := r.lock.verify(l); err != nil {
				tried[key] = true
				r.opts.Logger.WarnContext(ctx, "not resuming a repair lease: its record does not verify; a person must look at it",
					"lease", l.Namespace+"/"+l.Name, "error", err)
				continue
			}
			// A Lease without a holder was handed off by a bot that stopped
			// mid-repair: take it at once.
			if h := holder(l); h != "" && h != r.opts.Identity {
				stale, until := r.lock.staleByLocalTime(l, seen)
				if !stale {
					if next.IsZero() || until.Before(next) {
						next = until
					}
					continue
				}
			}
			tried[key] = true
			r.resumeOne(ctx, l, newReporter)
		}
		if next.IsZero() {
			return nil
		}
		r.opts.Logger.InfoContext(ctx, "a repair is still held by a live bot replica; looking again when its lease expires", "at", next)
		// Look again at the expiry, or sooner: a holder that stops hands its
		// Lease off (clears the holder) well before it would expire.
		wait := min(next.Sub(r.opts.Clock.Now()), resumeRecheck)
		select {
		case <-r.opts.Clock.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("resuming repairs: %w", context.Cause(ctx))
		}
	}
}

// runningLeases lists the repair Leases in state running in scope.
func (r *Repairer) runningLeases(ctx context.Context) ([]coordinationv1.Lease, error) {
	namespaces := r.kc.Options().Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""} // all namespaces
	}
	var out []coordinationv1.Lease
	for _, ns := range namespaces {
		leases, err := r.leasesOf(ctx, ns)
		if err != nil {
			return nil, fmt.Errorf("resuming repairs: %w", err)
		}
		for _, l := range leases {
			if strings.HasPrefix(l.Name, "kafkabot-repair-") && l.Annotations[annoState] == leaseRunning {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// resumeOne takes over one running Lease and finishes its repair.
func (r *Repairer) resumeOne(ctx context.Context, lease *coordinationv1.Lease, newReporter func(channel, threadTS string) Reporter) {
	req := requestOf(lease)
	held, err := r.lock.takeOver(ctx, lease)
	if err != nil {
		r.opts.Logger.WarnContext(ctx, "not resuming a repair: could not take over its lease", "lease", lease.Name, "error", err,
			"conflict", apierrors.IsConflict(err))
		return
	}
	run := r.newRun(req, newReporter(req.Channel, req.ThreadTS))
	run.leases.broker = held
	run.kind, run.recorded = resumePlan, lease
	// Too late: past the approval's expiry plus the repair timeout, nobody
	// is waiting for this repair any more, and the cluster may have moved
	// on. Stop, say so in the thread, and let a person decide.
	expires, err := recordedExpiry(lease)
	if deadline := expires.Add(r.opts.Timeout); err != nil || !r.opts.Clock.Now().Before(deadline) {
		why := fmt.Sprintf("the approval expired at %s and the repair timeout (%s) has passed since", expires.UTC().Format(time.RFC3339), r.opts.Timeout)
		if err != nil {
			why = err.Error()
		}
		tooLate := fmt.Errorf("not resuming approval %s: %s; nothing more was done. Check %s and the backup %s before anything else",
			req.ApprovalID, why, req.Pod, lease.Annotations[annoDebugPod])
		run.end.failed = tooLate
		run.finish(ctx, Executor{Clock: r.opts.Clock, Reporter: run.rep}.Run(ctx, Plan{
			Steps:   []Step{funcStep{describe: "Check the approval is still fresh enough to resume", do: func(context.Context) error { return tooLate }}},
			Cleanup: []Step{run.releaseLeaseStep()},
		}))
		return
	}
	if name := lease.Annotations[annoClusterLease]; name != "" {
		if cl, err := r.kc.GetLease(ctx, lease.Namespace, name); err == nil && cl.Annotations[annoApprovalID] == req.ApprovalID {
			if held, err := r.lock.takeOver(ctx, cl); err == nil {
				run.leases.cluster = held
			} else {
				r.opts.Logger.WarnContext(ctx, "resuming without the cluster's repair lease", "lease", name, "error", err)
			}
		}
	}
	run.debug.name = lease.Annotations[annoDebugPod]
	if n, err := strconv.ParseInt(lease.Annotations[annoGoRestarts], 10, 32); err == nil && n >= 0 {
		// A go was given before the restart; its deadline is read from the
		// debug pod.
		run.interlock = goState{current: &goSignal{}, restarts: int32(n), given: true}
	}
	r.audit(ctx, "repair resumed", req, slog.String("step", lease.Annotations[annoStep]), slog.String("previous_holder", holder(lease)))
	run.rep.Report(ctx, Progress{
		Step:   "Resume",
		Status: StepStarted,
		Detail: fmt.Sprintf("bot restarted during step %q; resuming approval %s (approved by %s)", lease.Annotations[annoStep], req.ApprovalID, orUnknown(req.Approver)),
	})
	run.finish(ctx, Executor{Clock: r.opts.Clock, Reporter: run.rep}.Run(ctx, run.plan()))
}

// debugPodFinishedUnread reports a debug pod that finished before its
// result was read.
func (run *repairRun) debugPodFinishedUnread() bool {
	dbg := run.debug.pod
	return run.result == nil && dbg != nil && debugPodDone(dbg, containerStatus(dbg, DebugContainerName))
}

// moveAhead reports a resumed repair whose move may still happen: its
// result is unknown and the broker was not restarted yet.
func (run *repairRun) moveAhead() bool { return !run.broker.replaced && run.result == nil }

// rerunNeeded reports a resumed repair that must run the script again.
func (run *repairRun) rerunNeeded() bool { return run.found == resumeRerun }

// discoverStep reads what the stopped bot left: the recorded script input
// and result, the debug pod, and the broker pod. It stands in for the steps
// the stopped bot ran: it sets their state as it finds it.
func (run *repairRun) discoverStep() Step {
	req := run.req
	var detail string
	return run.step("Find the debug pod and the broker's state", nil,
		func(ctx context.Context) error {
			// What was found is kept also when discover then fails: the
			// summary names the recorded backup, and the cleanup deletes a
			// debug pod found.
			d, err := run.r.discover(ctx, req, run.recorded, run.debug.name)
			run.spec.script, run.result, run.broker.replaced = d.script, d.result, d.brokerReplaced
			if d.debugPod != nil {
				run.debug.pod = d.debugPod
				// The script may have moved on its go.
				run.interlock.given = run.interlock.given || d.debugPod.Annotations[AnnotationGo] != ""
			}
			if err != nil {
				return err
			}
			run.found = d.point
			switch d.point {
			case resumeAfterResult:
				detail = fmt.Sprintf("the script's result is recorded: %s %s", d.result.Status, d.result.Destination)
			case resumeDebugPod:
				detail = fmt.Sprintf("debug pod %s is %s: reading its result when it finishes", d.debugPod.Name, d.debugPod.Status.Phase)
			case resumeRerun:
				// The new debug pod needs its own go.
				run.interlock.current = nil
				detail = fmt.Sprintf("debug pod %s is gone and its result unknown: running the idempotent script again (backup %s)", run.debug.name, d.script.BackupName)
			}
			return nil
		},
		func() string { return detail })
}

// discovered is what a stopped bot left of a repair, as far as discover
// read it.
type discovered struct {
	script ScriptInput
	// result is the script's result recorded in the Lease, nil when none.
	result *ScriptResult
	// debugPod is the recorded debug pod, nil when gone.
	debugPod *corev1.Pod
	// brokerReplaced is true when the approved broker pod is gone.
	brokerReplaced bool
	point          resumePoint
}

// discover reads the recorded script input and result from lease, finds
// the debug pod by its recorded name and the approved broker pod, and
// decides where the repair resumes; a debug pod gone without a result on a
// broker recreated meanwhile is an error: a person must look.
func (r *Repairer) discover(ctx context.Context, req Request, lease *coordinationv1.Lease, debugName string) (discovered, error) {
	var d discovered
	a := lease.Annotations
	if err := json.Unmarshal([]byte(a[annoScript]), &d.script); err != nil {
		return d, fmt.Errorf("the lease holds no readable script input: %w", err)
	}
	if d.script.SkipNodeIDCheck || d.script.NodeID == "" {
		return d, refuse(GateNodeID, "the lease's script input skips the node id check; a resumed repair never does")
	}
	if s := a[annoResult]; s != "" {
		var res ScriptResult
		if err := json.Unmarshal([]byte(s), &res); err != nil {
			return d, fmt.Errorf("the lease holds an unreadable script result: %w", err)
		}
		d.result = &res
	}
	pods, err := r.kc.ListPodsByLabel(ctx, req.Namespace, kube.LabelManagedBy+"="+kube.ManagedByBot)
	if err != nil {
		return d, err
	}
	for i := range pods {
		if pods[i].Name == debugName {
			d.debugPod = &pods[i]
		}
	}
	broker, err := r.kc.FetchPod(ctx, req.Namespace, req.Pod)
	switch {
	case apierrors.IsNotFound(err):
		d.brokerReplaced = true
	case err != nil:
		return d, err
	default:
		d.brokerReplaced = string(broker.UID) != req.PodUID
	}
	switch {
	case d.result != nil:
		d.point = resumeAfterResult
	case d.debugPod != nil:
		d.point = resumeDebugPod
	case d.brokerReplaced:
		return d, fmt.Errorf("debug pod %s is gone, its result unknown, and %s was recreated meanwhile: the move may or may not have happened. "+
			"Check for %s at the root of the broker's volume before doing anything else", debugName, req.Pod, d.script.BackupName)
	default:
		d.point = resumeRerun
	}
	return d, nil
}
