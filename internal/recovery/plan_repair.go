// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// DefaultRepairTimeout bounds each wait of a repair when RepairOptions.Timeout is 0.
const DefaultRepairTimeout = 10 * time.Minute

// errSettled ends the settle watch when the period passed without trouble.
var errSettled = errors.New("settled")

// leaseSlack is added to the repair timeout to make the Lease duration.
const leaseSlack = 2 * time.Minute

// ErrTimeout marks a wait that ran out of RepairOptions.Timeout.
var ErrTimeout = errors.New("timed out")

// Inspector reads Kafka pods for the gates. *kube.Client is the real one.
type Inspector interface {
	// Snapshot reads one pod with its claims and previous log.
	Snapshot(ctx context.Context, namespace, pod string) (diagnose.Snapshot, error)
	// KafkaPods reads the status (no logs) of every Kafka pod in scope.
	KafkaPods(ctx context.Context) ([]diagnose.Snapshot, error)
}

// RepairOptions configure a Repairer.
type RepairOptions struct {
	// DebugImage is the debug pod's image; "" means the broker's own image,
	// by digest when the kubelet reported one.
	DebugImage string
	// Timeout bounds each wait: for the debug pod to finish, and for the
	// restarted broker to become Ready (DefaultRepairTimeout when 0).
	Timeout time.Duration
	// DryRun makes every repair a dry run.
	DryRun bool
	// AllowRootBroker lets the debug pod run as root for a broker that runs
	// as uid 0 (ALLOW_ROOT_BROKER); without it such a repair is refused
	// before any write and the manual runbook applies.
	AllowRootBroker bool
	// Clock times steps and waits (the real clock when nil).
	Clock clock.Clock
	// Identity names this bot replica as Lease holder (the host name when "").
	Identity string
	// Logger receives the audit lines (slog.Default() when nil).
	Logger *slog.Logger
	// Logs reads container logs (the Kubernetes API when nil).
	Logs kube.LogReader
	// Inspector reads pods for the gates (the Kubernetes API when nil).
	Inspector Inspector
	// Settle is how long the recreated broker must stay Ready (no restart,
	// no crash) before the repair counts as a success. 0 skips the settle
	// watch; the bot's serve and repair commands use REPAIR_SETTLE (2m by
	// default): long enough for a broker that crashes on its first metadata
	// fetch or fails its liveness probe to show it.
	Settle time.Duration
	// RecordKey signs each repair Lease's record (HMAC-SHA256); Resume acts
	// only on Leases whose record verifies with it. The bot passes
	// APPROVAL_SECRET. Without a key no Lease is ever resumed.
	RecordKey []byte
	// ClusterName is the name of the Kubernetes cluster this Repairer
	// works in (CLUSTERS_FILE's name, CLUSTER_NAME for a single cluster).
	// The record MAC covers it, so a Lease copied from another cluster
	// served with the same APPROVAL_SECRET does not verify here.
	ClusterName string
	// Gates are the safety gates' settings.
	Gates GateOptions
}

// Repairer runs approved repairs of crash-looping brokers: it checks the
// safety gates at click time, takes the broker's Lease, runs the debug pod,
// restarts the broker and watches it come back, reporting each step.
type Repairer struct {
	kc      *kube.Client
	engine  *diagnose.Engine
	opts    RepairOptions
	lock    *repairLock
	logs    kube.LogReader
	inspect Inspector
}

// NewRepairer builds a Repairer; zero options get the defaults documented
// on RepairOptions.
func NewRepairer(kc *kube.Client, engine *diagnose.Engine, opts RepairOptions) *Repairer {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultRepairTimeout
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Identity == "" {
		opts.Identity, _ = os.Hostname()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	r := &Repairer{kc: kc, engine: engine, opts: opts, logs: opts.Logs, inspect: opts.Inspector}
	if r.logs == nil {
		r.logs = kc
	}
	if r.inspect == nil {
		r.inspect = kc
	}
	r.lock = &repairLock{kc: kc, identity: opts.Identity, clock: opts.Clock, duration: opts.Timeout + leaseSlack,
		key: opts.RecordKey, cluster: opts.ClusterName, timeout: opts.Timeout, settle: opts.Settle}
	return r
}

// Repair runs an approved repair and reports every step to rep; it ends
// with rep.Finish and returns the same Summary. It never proceeds to
// another broker: one approval, one broker.
func (r *Repairer) Repair(ctx context.Context, req Request, rep Reporter) Summary {
	run := r.newRun(req, rep)
	plan := run.plan()
	if req.DryRun || r.opts.DryRun {
		plan = run.dryRunPlan()
	}
	r.audit(ctx, "repair approved", req, slog.Bool("dry_run", run.dryRun), slog.Any("plan", plan.Describe()))
	return run.finish(ctx, Executor{Clock: r.opts.Clock, Reporter: run.rep}.Run(ctx, plan))
}

// repairRun is the state of one repair, shared by its steps.
type repairRun struct {
	r       *Repairer
	req     Request
	rep     Reporter
	started time.Time
	dryRun  bool

	// Read at the gates (or, on resume, from the Lease and the cluster).
	snap     diagnose.Snapshot
	finding  *diagnose.Finding
	warnings []string
	broker   *corev1.Pod
	script   ScriptInput
	spec     *corev1.Pod

	lock *heldLock
	// clusterLock is the per-cluster Lease held for the repair.
	clusterLock *heldLock
	// resuming is set for a repair a restarted bot resumes.
	resuming bool
	// debugPod is the debug pod created or found; debugGone is true once
	// it is known to be deleted.
	debugPod  *corev1.Pod
	debugGone bool
	// debugPodName is the debug pod's name recorded in a resumed Lease;
	// needRerun is set when a resumed repair must run the script again.
	debugPodName string
	needRerun    bool
	// goSent is true once the debug pod has its go signal; baseRestarts is
	// the broker's restart count seen then (-1 when unknown), checked again
	// after the move (stayedChecked).
	goSent       bool
	baseRestarts int32
	// goGiven is true once any debug pod of this repair had a go (in this
	// run, or before a restart): from then on the move may have happened,
	// and no summary says "nothing was changed".
	goGiven bool
	// goDeadline is the deadline of the go last given (zero when unknown).
	goDeadline    time.Time
	stayedChecked bool
	result        *ScriptResult
	// brokerReplaced is true once the approved broker pod was deleted.
	brokerReplaced bool
	newPod         *corev1.Pod
	recoveryLines  []string
	crash          *CrashAgainError

	// failed is the first step error; interrupted is true when the bot
	// itself is stopping (the Lease then stays "running" for Resume).
	failed      error
	interrupted bool
}

func (r *Repairer) newRun(req Request, rep Reporter) *repairRun {
	run := &repairRun{r: r, req: req, started: r.opts.Clock.Now(), debugPodName: DebugPodName(req.Pod), baseRestarts: -1}
	run.rep = &auditReporter{next: rep, run: run}
	return run
}

// brokerRef is the broker pod instance Events are recorded on.
func (run *repairRun) brokerRef() kube.PodRef {
	ref := kube.PodRef{Namespace: run.req.Namespace, Name: run.req.Pod, UID: uidOf(run.req.PodUID)}
	if run.newPod != nil {
		ref.UID = run.newPod.UID
	}
	return ref
}

// plan is the full repair of an approved broker.
func (run *repairRun) plan() Plan {
	return Plan{
		Steps:   append([]Step{run.checkGatesStep(), run.buildSpecStep(), run.takeLeaseStep()}, run.debugPodAndRestartSteps()...),
		Cleanup: run.cleanupSteps(),
	}
}

// debugPodAndRestartSteps are the steps a repair and a resumed repair share:
// run the debug pod to its end, read its result, remove it, restart the
// broker and watch the new pod.
func (run *repairRun) debugPodAndRestartSteps() []Step {
	return []Step{
		run.createDebugPodStep(),
		run.signalGoStep(),
		run.waitDebugPodStep(),
		run.readResultStep(),
		run.checkStayedStoppedStep(),
		run.deleteDebugPodStep(),
		run.restartBrokerStep(),
		run.waitBrokerStep(),
	}
}

// cleanupSteps always run: the debug pod goes, and the Lease is released
// (or left running for Resume when the bot itself is stopping).
func (run *repairRun) cleanupSteps() []Step {
	return []Step{run.cleanupDebugPodStep(), run.releaseLeaseStep()}
}

// dryRunPlan stops before the first write: gates and the debug pod spec.
func (run *repairRun) dryRunPlan() Plan {
	run.dryRun = true
	return Plan{Steps: []Step{run.checkGatesStep(), run.buildSpecStep(), run.showDryRunStep()}}
}

// withTimeout bounds a wait by the repair timeout on the Repairer's clock.
func (run *repairRun) withTimeout(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	timeout := run.r.opts.Timeout
	t := run.r.opts.Clock.NewTimer(timeout)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			cancel(fmt.Errorf("%s: %w after %s", what, ErrTimeout, timeout))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// finish turns the executor's result into the Summary, reports it and
// writes the audit line.
func (run *repairRun) finish(ctx context.Context, res Result) Summary {
	s := Summary{Outcome: run.outcome(res)}
	var b strings.Builder
	who := fmt.Sprintf("approved by %s, requested by %s", orUnknown(run.req.Approver), orUnknown(run.req.Requester))
	target := fmt.Sprintf("%s/%s (%s %s)", run.req.Namespace, run.req.Pod, run.req.Action, run.req.Target)
	switch s.Outcome {
	case OutcomeRepaired:
		fmt.Fprintf(&b, "Repaired %s, %s.\n", target, who)
	case OutcomeDryRun:
		fmt.Fprintf(&b, "Dry run of %s: the gates pass; nothing was changed.\n", target)
	case OutcomeGateFailed:
		if run.goGiven {
			// A resumed repair, or a refusal before a new go: an earlier go
			// may have let the script move.
			fmt.Fprintf(&b, "Not repaired: %v. A go was given to the debug pod of this repair before, so the move may have happened; see the backup %s at the root of %s's volume, and the broker's log, before anything else.\n",
				res.Err, orUnknown(run.script.BackupName), run.req.Pod)
		} else {
			fmt.Fprintf(&b, "Not repaired: %v. Nothing was changed on %s.\n", res.Err, target)
		}
		var ge *GateError
		if errors.As(res.Err, &ge) && len(ge.Runbook) > 0 {
			b.WriteString("Manual runbook:\n")
			for i, step := range ge.Runbook {
				fmt.Fprintf(&b, "%d. %s\n", i+1, step)
			}
		}
	case OutcomeCrashAgain:
		fmt.Fprintf(&b, "%s crashed again after the repair: %v. Stopped; no other broker was touched. Escalate.\n", run.req.Pod, run.crash)
	default:
		if run.interrupted {
			fmt.Fprintf(&b, "The bot stopped during %q of %s; the repair lease stays running so a restarted bot resumes it.\n", res.FailedStep, target)
		} else {
			fmt.Fprintf(&b, "Repair of %s stopped at %q: %v.\n", target, res.FailedStep, res.Err)
		}
	}
	if run.result != nil && run.result.Destination != "" {
		fmt.Fprintf(&b, "Backup: %s (%d bytes, %d files), moved from %s; it stays on the volume until someone deletes it.\n",
			run.result.Destination, run.result.Bytes, run.result.Files, run.result.Source)
	}
	if run.newPod != nil {
		fmt.Fprintf(&b, "New pod %s (UID %s): %s.\n", run.newPod.Name, run.newPod.UID, podState(run.newPod))
	}
	for _, w := range run.warnings {
		fmt.Fprintf(&b, "Warning: %s\n", w)
	}
	if len(res.Steps) > 0 {
		parts := make([]string, 0, len(res.Steps))
		for _, st := range res.Steps {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", st.Step, st.Status, roundDuration(st.Duration)))
		}
		fmt.Fprintf(&b, "Steps: %s. Total %s.", strings.Join(parts, "; "), roundDuration(run.r.opts.Clock.Since(run.started)))
	}
	s.Text = strings.TrimSpace(b.String())
	run.r.audit(ctx, "repair finished", run.req, slog.String("outcome", string(s.Outcome)),
		slog.String("stopped_at", res.FailedStep), slog.Any("error", res.Err))
	run.rep.Finish(ctx, s)
	return s
}

func (run *repairRun) outcome(res Result) Outcome {
	var ge *GateError
	var ce *CrashAgainError
	switch {
	case res.Err == nil && run.dryRun:
		return OutcomeDryRun
	case res.Err == nil:
		return OutcomeRepaired
	case errors.As(res.Err, &ge):
		return OutcomeGateFailed
	case errors.As(res.Err, &ce):
		return OutcomeCrashAgain
	}
	return OutcomeFailed
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// podState describes a pod's state in a few words.
func podState(pod *corev1.Pod) string {
	if kube.PodReady(pod) {
		return "Ready"
	}
	for _, c := range pod.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("%s, container %s waiting: %s (%d restarts)", pod.Status.Phase, c.Name, w.Reason, c.RestartCount)
		}
		if t := c.State.Terminated; t != nil {
			return fmt.Sprintf("%s, container %s terminated: %s exit %d", pod.Status.Phase, c.Name, t.Reason, t.ExitCode)
		}
	}
	return "phase " + string(pod.Status.Phase) + ", not Ready"
}

// CrashAgainError is a broker that crashed again after the repair.
type CrashAgainError struct {
	Pod string
	// State is what the new pod showed; Finding is the engine's top finding
	// on it (nil when none matched).
	State   string
	Finding *diagnose.Finding
}

func (e *CrashAgainError) Error() string {
	if e.Finding == nil {
		return fmt.Sprintf("new pod %s is crash-looping (%s) with no known finding", e.Pod, e.State)
	}
	msg := fmt.Sprintf("new pod %s is crash-looping (%s): %s (%s)", e.Pod, e.State, e.Finding.Title, e.Finding.Rule)
	if o := e.Finding.Offsets; o != nil && o.NextOffset == o.LogStartOffset {
		msg += "; next offset equals log start offset: the controllers hold a misaligned snapshot"
	}
	return msg
}

// leasesOf reads the repair Leases of a namespace.
func (r *Repairer) leasesOf(ctx context.Context, namespace string) ([]coordinationv1.Lease, error) {
	return r.kc.ListLeases(ctx, namespace, kube.LabelManagedBy+"="+kube.ManagedByBot)
}
