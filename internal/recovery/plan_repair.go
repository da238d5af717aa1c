// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
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
	if req.DryRun || r.opts.DryRun {
		run.kind = dryRunPlan
	}
	plan := run.plan()
	r.audit(ctx, "repair approved", req, slog.Bool("dry_run", run.kind == dryRunPlan), slog.Any("plan", plan.Describe()))
	return run.finish(ctx, Executor{Clock: r.opts.Clock, Reporter: run.rep}.Run(ctx, plan))
}

// repairRun is one repair: its request, the plan it follows, and what each
// step left for the steps after it, grouped by the step that owns it (see
// run_state.go). A step writes its own group, from what its work returned,
// and reads the groups of the steps before it; discoverStep, standing in
// for the steps a stopped bot ran, sets theirs. Warnings for the summary
// go to notes.
type repairRun struct {
	r       *Repairer
	req     Request
	rep     Reporter
	started time.Time
	// kind is the plan the run follows.
	kind planKind
	// recorded is the Lease a resumed repair continues from.
	recorded *coordinationv1.Lease

	// gateResult is what checkGatesStep read. It is embedded because
	// waitKafkaRecovered (gate_kafka.go) reads the snapshot as run.snap.
	gateResult
	spec      debugSpec
	leases    heldLeases
	found     resumePoint
	debug     debugPodState
	result    *ScriptResult
	interlock goState
	broker    brokerState
	// notes are the warnings steps after the gates add to the summary.
	notes []string
	end   runEnd
}

func (r *Repairer) newRun(req Request, rep Reporter) *repairRun {
	run := &repairRun{r: r, req: req, started: r.opts.Clock.Now(),
		debug: debugPodState{name: DebugPodName(req.Pod)}, interlock: goState{restarts: -1}}
	run.rep = &auditReporter{next: rep, run: run}
	return run
}

// brokerRef is the broker pod instance Events are recorded on.
func (run *repairRun) brokerRef() kube.PodRef {
	ref := kube.PodRef{Namespace: run.req.Namespace, Name: run.req.Pod, UID: uidOf(run.req.PodUID)}
	if run.broker.newPod != nil {
		ref.UID = run.broker.newPod.UID
	}
	return ref
}

// planKind names the plan a repairRun follows.
type planKind int

const (
	// repairPlan is an approved repair: the gates, the Lease, the debug
	// pod and its go, the restart and the watch of the new broker.
	repairPlan planKind = iota
	// dryRunPlan stops before the first write: the gates and the debug
	// pod spec, shown.
	dryRunPlan
	// resumePlan finishes a repair a stopped bot left running: what its
	// Lease and the cluster say is done is skipped (see Resume).
	resumePlan
)

// planRow is one step of the repair's plans and the plans that include it.
type planRow struct {
	step func(*repairRun) Step
	// repair and dryRun include the step in those plans.
	repair, dryRun bool
	// resume includes the step in the resumed plan, where it runs only if
	// resume holds when the step is reached: what a resumed repair still
	// has to do is known only once discoverStep has looked. nil leaves the
	// step out.
	resume func(*repairRun) bool
}

// repairSteps describes the three plans, in the order their steps run.
var repairSteps = []planRow{
	{step: (*repairRun).discoverStep, resume: always},
	// A finished debug pod holds the script's result: a resumed repair reads
	// it and records it in the Lease before anything else, so that no gate
	// refusal hides a move and no cleanup deletes its only record.
	{step: (*repairRun).readResultStep, resume: (*repairRun).debugPodFinishedUnread},
	// A resumed repair runs every gate again before any write that could let
	// the script move, unless the move's result is known (then only the
	// restart, the watch of the new pod and the cleanup are left) or the
	// broker was already restarted.
	{step: (*repairRun).checkGatesStep, repair: true, dryRun: true, resume: (*repairRun).moveAhead},
	{step: (*repairRun).buildSpecStep, repair: true, dryRun: true, resume: (*repairRun).rerunNeeded},
	{step: (*repairRun).showDryRunStep, dryRun: true},
	{step: (*repairRun).takeLeaseStep, repair: true},
	{step: (*repairRun).createDebugPodStep, repair: true, resume: always},
	{step: (*repairRun).signalGoStep, repair: true, resume: always},
	{step: (*repairRun).waitDebugPodStep, repair: true, resume: always},
	{step: (*repairRun).readResultStep, repair: true, resume: always},
	{step: (*repairRun).checkStayedStoppedStep, repair: true, resume: always},
	{step: (*repairRun).deleteDebugPodStep, repair: true, resume: always},
	{step: (*repairRun).restartBrokerStep, repair: true, resume: always},
	{step: (*repairRun).waitBrokerStep, repair: true, resume: always},
}

// cleanupSteps always run after a repair or a resumed repair: the debug pod
// goes, and the Lease is released (or left running for Resume when the bot
// itself is stopping). A dry run wrote nothing to clean up.
var cleanupSteps = []planRow{
	{step: (*repairRun).cleanupDebugPodStep, repair: true, resume: always},
	{step: (*repairRun).releaseLeaseStep, repair: true, resume: always},
}

func always(*repairRun) bool { return true }

// plan builds the run's plan from repairSteps and cleanupSteps.
func (run *repairRun) plan() Plan {
	return Plan{Steps: run.stepsOf(repairSteps), Cleanup: run.stepsOf(cleanupSteps)}
}

func (run *repairRun) stepsOf(rows []planRow) []Step {
	var out []Step
	for _, row := range rows {
		switch {
		case run.kind == repairPlan && row.repair, run.kind == dryRunPlan && row.dryRun:
			out = append(out, row.step(run))
		case run.kind == resumePlan && row.resume != nil:
			out = append(out, onlyIf(func() bool { return row.resume(run) }, row.step(run)))
		}
	}
	return out
}

// onlyIf makes s count as done unless cond holds when it is reached.
func onlyIf(cond func() bool, s Step) Step {
	fs := s.(funcStep)
	inner := fs.done
	fs.done = func(ctx context.Context) (bool, error) {
		if !cond() {
			return true, nil
		}
		if inner == nil {
			return false, nil
		}
		return inner(ctx)
	}
	return fs
}

// withTimeout bounds a wait by the repair timeout on the Repairer's clock.
func (r *Repairer) withTimeout(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	timeout := r.opts.Timeout
	t := r.opts.Clock.NewTimer(timeout)
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
		if run.interlock.given {
			// A resumed repair, or a refusal before a new go: an earlier go
			// may have let the script move.
			fmt.Fprintf(&b, "Not repaired: %v. A go was given to the debug pod of this repair before, so the move may have happened; see the backup %s at the root of %s's volume, and the broker's log, before anything else.\n",
				res.Err, orUnknown(run.spec.script.BackupName), run.req.Pod)
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
		fmt.Fprintf(&b, "%s crashed again after the repair: %v. Stopped; no other broker was touched. Escalate.\n", run.req.Pod, run.broker.crash)
	default:
		if run.end.interrupted {
			fmt.Fprintf(&b, "The bot stopped during %q of %s; the repair lease stays running so a restarted bot resumes it.\n", res.FailedStep, target)
		} else {
			fmt.Fprintf(&b, "Repair of %s stopped at %q: %v.\n", target, res.FailedStep, res.Err)
		}
	}
	if run.result != nil && run.result.Destination != "" {
		fmt.Fprintf(&b, "Backup: %s (%d bytes, %d files), moved from %s; it stays on the volume until someone deletes it.\n",
			run.result.Destination, run.result.Bytes, run.result.Files, run.result.Source)
	}
	if p := run.broker.newPod; p != nil {
		fmt.Fprintf(&b, "New pod %s (UID %s): %s.\n", p.Name, p.UID, podState(p))
	}
	for _, w := range append(slices.Clip(run.warnings), run.notes...) {
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
	case res.Err == nil && run.kind == dryRunPlan:
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
