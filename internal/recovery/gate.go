// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// RuleMetadataLogOffsetMismatch is the rule whose remedy depends on the
// offsets of the UnexpectedAppendOffsetException.
const RuleMetadataLogOffsetMismatch = "metadata-log-offset-mismatch"

// Gate names, as they appear in refusals.
const (
	GateNamespace     = "namespace-in-scope"
	GateSamePod       = "same-pod-uid"
	GateCrashLooping  = "still-crash-looping"
	GateSameFinding   = "same-finding"
	GateBrokerOnly    = "broker-only"
	GateOffsets       = "local-divergence"
	GateClaimsBound   = "claims-bound"
	GateNoRWOP        = "no-readwriteoncepod"
	GateNoRepair      = "no-repair-running"
	GatePeersHealthy  = "no-peer-with-same-error"
	GateQuorumHealthy = "controller-quorum-ready"
)

// GateError is a safety gate that refused a repair: which gate, and what it
// saw. Runbook holds the manual steps to offer instead, when there are any.
type GateError struct {
	Gate    string
	Seen    string
	Runbook []string
}

func (e *GateError) Error() string { return fmt.Sprintf("safety gate %s refused: %s", e.Gate, e.Seen) }

func refuse(gate, format string, args ...any) *GateError {
	return &GateError{Gate: gate, Seen: fmt.Sprintf(format, args...)}
}

// gate is one named safety check, evaluated at click time.
type gate struct {
	name  string
	check func(ctx context.Context, in *gateInput) error
}

// gateInput is what the gates look at. Peers and Leases are read lazily,
// and only once, so that a repair refused by a local gate costs no list.
type gateInput struct {
	req  Request
	snap diagnose.Snapshot
	// findings are the engine's findings on snap; finding is the one that
	// matches the approval (set by the same-finding gate).
	findings []diagnose.Finding
	finding  *diagnose.Finding

	allowed      func(namespace string) bool
	loadPeers    func(ctx context.Context) ([]diagnose.Snapshot, error)
	loadLeases   func(ctx context.Context) ([]coordinationv1.Lease, error)
	diagnosePeer func(ctx context.Context, s diagnose.Snapshot) ([]diagnose.Finding, error)
	// loadEscalations reads the escalation records of the broker's namespace.
	loadEscalations func(ctx context.Context) ([]kube.Escalation, error)

	// now is when the gates run (the Repairer's clock), for "recent".
	now time.Time
	// opts are the gates' settings.
	opts GateOptions

	// resuming is set when a restarted bot re-runs the gates of a repair
	// it resumes: that repair's own Leases do not count as another repair.
	resuming bool
	// lock judges Leases whose record does not verify (they block only
	// until their bound).
	lock *repairLock

	// warnings are gate notes that do not refuse (shown in the thread).
	warnings []string
}

// gates are checked in this order: the cheap local ones first.
var gates = []gate{
	{GateNamespace, checkNamespace},
	{GateSamePod, checkSamePod},
	{GateCrashLooping, checkCrashLooping},
	{GateSameFinding, checkSameFinding},
	{GateNotEscalated, checkNotEscalated},
	{GateBrokerOnly, checkBrokerOnly},
	{GateOffsets, checkOffsets},
	{GateSameFinding, checkSameRemedy},
	{GateClaimsBound, checkClaimsBound},
	{GateNoRWOP, checkNoRWOP},
	{GateNoRepair, checkNoRepair},
	{GatePeersHealthy, checkPeers},
	{GateQuorumHealthy, checkQuorum},
	{GateKafkaHealth, checkKafkaHealth},
}

// checkGates runs every gate in order and returns the first refusal.
func checkGates(ctx context.Context, in *gateInput) error {
	for _, g := range gates {
		if err := g.check(ctx, in); err != nil {
			return err
		}
	}
	return nil
}

func checkNamespace(_ context.Context, in *gateInput) error {
	if !in.allowed(in.req.Namespace) {
		return refuse(GateNamespace, "namespace %q is outside KAFKA_NAMESPACES", in.req.Namespace)
	}
	return nil
}

func checkSamePod(_ context.Context, in *gateInput) error {
	if in.snap.UID != in.req.PodUID {
		return refuse(GateSamePod, "pod %s was recreated since the diagnosis (UID %s, approved UID %s): diagnose it again",
			in.req.Pod, in.snap.UID, in.req.PodUID)
	}
	return nil
}

func checkCrashLooping(_ context.Context, in *gateInput) error {
	k := in.snap.Kafka()
	if k == nil {
		return refuse(GateCrashLooping, "pod %s has no Kafka container %q", in.req.Pod, in.snap.KafkaContainer)
	}
	if !crashLooping(k, in.now) {
		return refuse(GateCrashLooping, "container %s is not crash-looping any more (%s): nothing to repair, or it is starting",
			k.Name, describeRun(k, in.now))
	}
	return nil
}

// The bounds of a crash-looping container's run between two crashes.
const (
	// kubeletMaxBackOff is the kubelet's cap on the CrashLoopBackOff delay:
	// a container restarted by the crash loop started at most this long
	// after its last crash.
	kubeletMaxBackOff = 5 * time.Minute
	// crashLoopRunBound is how long a restarted, not Ready Kafka container
	// may have run and still count as crash-looping. A real broker runs 20
	// to 40 s (JVM start, log loading, catching up with the quorum) before
	// a fatal fault on a loaded node; three minutes leave room for a larger
	// broker and stay far below the kubelet's own "ran long enough" reset
	// of the back-off (ten minutes).
	crashLoopRunBound = 3 * time.Minute
)

// crashLooping reports whether a Kafka container is in a crash loop at now:
// in CrashLoopBackOff, terminated after restarts, or running between two
// crashes (see runningInCrashLoop).
//
// Accepting a running container is safe because nothing is moved on its
// say-so: the gates only admit the repair. The debug pod's script waits for
// the bot's go, and the interlock (signalGoStep, awaitStoppedKafka) gives
// the go only once this container is stopped again, with the same pod UID
// and enough of the back-off left, with a deadline the script moves by; the
// same-finding gate has read the crashed instance's log (a running
// container's previous one). A container that stops crashing never gets a
// go, and the repair ends at its timeout with nothing moved.
func crashLooping(c *diagnose.ContainerState, now time.Time) bool {
	if c.Running {
		return runningInCrashLoop(c, now)
	}
	return c.WaitingReason == diagnose.WaitingCrashLoopBackOff || (c.Terminated != nil && c.RestartCount > 0)
}

// runningInCrashLoop reports whether a running Kafka container is still
// in its crash loop: not Ready, restarted, its last instance ended in an
// error (a non-zero exit) no longer ago than the kubelet's longest back-off
// plus crashLoopRunBound, and running for no longer than crashLoopRunBound.
// A Ready broker, or one that has run longer, has come back: it is never
// crash-looping.
func runningInCrashLoop(c *diagnose.ContainerState, now time.Time) bool {
	last := c.LastTerminated
	if c.Ready || c.RestartCount == 0 || last == nil || last.ExitCode == 0 || last.FinishedAt.IsZero() {
		return false
	}
	if !c.RunningSince.IsZero() && now.Sub(c.RunningSince) > crashLoopRunBound {
		return false
	}
	return now.Sub(last.FinishedAt) <= kubeletMaxBackOff+crashLoopRunBound
}

// describeRun describes a container's state for a refusal, with how long a
// running one has run and how long ago its last instance ended.
func describeRun(c *diagnose.ContainerState, now time.Time) string {
	s := describeContainer(c)
	if !c.Running {
		return s
	}
	if !c.RunningSince.IsZero() {
		s += fmt.Sprintf(", running for %s", now.Sub(c.RunningSince).Round(time.Second))
	}
	if last := c.LastTerminated; last != nil && !last.FinishedAt.IsZero() {
		s += fmt.Sprintf(", last ended (%s, exit %d) %s ago", last.Reason, last.ExitCode, now.Sub(last.FinishedAt).Round(time.Second))
	}
	return s
}

func describeContainer(c *diagnose.ContainerState) string {
	switch {
	case c.Running && c.Ready:
		return fmt.Sprintf("running and ready, %d restarts", c.RestartCount)
	case c.Running:
		return fmt.Sprintf("running, not ready, %d restarts", c.RestartCount)
	case c.WaitingReason != "":
		return fmt.Sprintf("waiting: %s, %d restarts", c.WaitingReason, c.RestartCount)
	case c.Terminated != nil:
		return fmt.Sprintf("terminated: %s exit %d, %d restarts", c.Terminated.Reason, c.Terminated.ExitCode, c.RestartCount)
	}
	return "no state reported"
}

func checkSameFinding(_ context.Context, in *gateInput) error {
	var seen []string
	for i, f := range in.findings {
		seen = append(seen, f.Rule)
		if f.Rule == in.req.Rule {
			in.finding = &in.findings[i]
		}
	}
	if in.finding == nil {
		if len(seen) == 0 {
			seen = []string{"no finding"}
		}
		return refuse(GateSameFinding, "the approved finding %s is no longer diagnosed on %s (now: %s)",
			in.req.Rule, in.req.Pod, strings.Join(seen, ", "))
	}
	return nil
}

// checkSameRemedy makes sure the finding's remedy is still the approved
// automated action and target.
func checkSameRemedy(_ context.Context, in *gateInput) error {
	r := in.finding.Remedy
	if !r.Automated || r.Action != in.req.Action || r.Target != in.req.Target {
		return refuse(GateSameFinding, "the remedy of %s is now %q on %q (automated %t), not the approved %q on %q",
			in.req.Rule, r.Action, r.Target, r.Automated, in.req.Action, in.req.Target)
	}
	return nil
}

// checkBrokerOnly allows broker-only KRaft nodes, and ZooKeeper-mode brokers
// for the actions that are not about the KRaft metadata log. Controllers,
// combined nodes and nodes of unknown role get the manual runbook.
func checkBrokerOnly(_ context.Context, in *gateInput) error {
	role := in.snap.Role
	if role == diagnose.RoleBroker || (role == diagnose.RoleZooKeeper && in.req.Action != diagnose.ActionMoveMetadataLog) {
		return nil
	}
	seen := string(role)
	if role == diagnose.RoleUnknown {
		seen = "unknown"
	}
	e := refuse(GateBrokerOnly, "%s has role %s: the bot repairs only broker-only nodes; follow the manual runbook", in.req.Pod, seen)
	e.Runbook = in.finding.Remedy.Steps
	return e
}

// checkOffsets applies the triage rule of the metadata-log offset mismatch:
// only next offset > log start offset means the broker's own copy diverged.
func checkOffsets(_ context.Context, in *gateInput) error {
	if in.req.Rule != RuleMetadataLogOffsetMismatch {
		return nil
	}
	o := in.finding.Offsets
	if o == nil {
		return refuse(GateOffsets, "the offsets of the UnexpectedAppendOffsetException could not be read from the log; not repairing blind")
	}
	if !o.LocalDivergence || o.NextOffset <= o.LogStartOffset {
		e := refuse(GateOffsets, "next offset %d is not greater than log start offset %d: the controllers hold a misaligned snapshot; "+
			"wiping this broker would re-download it and crash again, and wiping more brokers spreads the outage. Escalate.",
			o.NextOffset, o.LogStartOffset)
		e.Runbook = in.finding.Remedy.Steps
		return e
	}
	return nil
}

func checkClaimsBound(_ context.Context, in *gateInput) error {
	if len(in.snap.Claims) == 0 {
		return refuse(GateClaimsBound, "the Kafka container of %s mounts no PersistentVolumeClaim", in.req.Pod)
	}
	for _, c := range in.snap.Claims {
		if c.Phase != "Bound" {
			phase := c.Phase
			if phase == "" {
				phase = "missing"
			}
			return refuse(GateClaimsBound, "claim %s is %s, not Bound", c.ClaimName, phase)
		}
	}
	return nil
}

func checkNoRWOP(_ context.Context, in *gateInput) error {
	for _, c := range in.snap.Claims {
		if slices.Contains(c.AccessModes, "ReadWriteOncePod") {
			return refuse(GateNoRWOP, "claim %s is ReadWriteOncePod: no other pod may mount it while %s exists, "+
				"so the debug pod cannot run. Repair by hand (e.g. an ephemeral container in the broker pod, or "+
				"stop the broker first).", c.ClaimName, in.req.Pod)
		}
	}
	return nil
}

// checkNoRepair refuses when the approval already ran, or when a repair of
// this broker or another broker of its cluster is running.
func checkNoRepair(ctx context.Context, in *gateInput) error {
	leases, err := in.loadLeases(ctx)
	if err != nil {
		return err
	}
	own := kube.RepairLeaseName(in.req.Pod)
	cluster := labelValue(in.snap.KafkaCluster)
	// The broker's own Lease first, then the brokers' Leases (they name
	// the step reached), then the clusters'.
	ordered := slices.Clone(leases)
	rank := func(l *coordinationv1.Lease) int {
		switch {
		case l.Name == own:
			return 0
		case strings.HasPrefix(l.Name, "kafkabot-repair-"):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(ordered, func(a, b coordinationv1.Lease) int { return rank(&a) - rank(&b) })
	for i := range ordered {
		l := &ordered[i]
		if in.resuming && l.Annotations[annoApprovalID] == in.req.ApprovalID {
			continue // the resumed repair's own Leases
		}
		if l.Name == own {
			block, expired := in.lock.refuseTaken(l, in.req.ApprovalID)
			if block != nil {
				return &GateError{Gate: GateNoRepair, Seen: block.Error()}
			}
			if expired != nil {
				in.warnings = append(in.warnings, expired.Error())
			}
			continue
		}
		if l.Labels[kube.LabelCluster] != cluster || l.Annotations[annoState] != leaseRunning {
			continue
		}
		block, expired := in.lock.vetUnverified(l)
		switch {
		case block != nil:
			return &GateError{Gate: GateNoRepair, Seen: block.Error()}
		case expired != nil:
			in.warnings = append(in.warnings, expired.Error())
			continue
		}
		return refuse(GateNoRepair, "broker %s of the same cluster is under repair (approved by %s, step %q): one broker at a time",
			l.Annotations[annoPod], l.Annotations[annoApprover], l.Annotations[annoStep])
	}
	return nil
}

// GateOptions are the settings of the safety gates.
type GateOptions struct {
	// AllowNoVisibleController lets the quorum gate proceed, with a
	// warning, when the bot sees no controller pod of the cluster
	// (REPAIR_WITHOUT_VISIBLE_CONTROLLER). By default it refuses.
	AllowNoVisibleController bool
	// Kafka asks Kafka itself before the move and after the restart (see
	// gate_kafka.go); nil = not asked, and the thread says so.
	Kafka KafkaHealth
	// KafkaCatchUpTimeout bounds the post-repair wait for Kafka to see the
	// broker back (KAFKA_CATCHUP_TIMEOUT).
	KafkaCatchUpTimeout time.Duration
}

// SettingNoVisibleController is the setting that lets a repair proceed
// when no controller is visible; the quorum gate's refusal names it.
const SettingNoVisibleController = "REPAIR_WITHOUT_VISIBLE_CONTROLLER"

// KafkaClusterKeyOf is the group of pods the gates treat as the broker's
// cluster (see kube.KafkaClusterKey): peers, the per-cluster lock and the
// escalation record all use it.
func KafkaClusterKeyOf(s diagnose.Snapshot) kube.KafkaClusterKey {
	return kube.KafkaClusterKeyOf(s.Namespace, s.KafkaCluster)
}

// peersOf returns the other Kafka pods of the broker's cluster: the same
// namespace and cluster label. Without a cluster label, every Kafka pod of
// the namespace counts (the conservative reading). The bot's own debug pods
// never count, whatever they are labelled (kube.KafkaPods leaves them out
// by label; a snapshot has no labels, so here by their name, which the
// admission policy requires of every pod the bot's identity creates).
func peersOf(in *gateInput, all []diagnose.Snapshot) []diagnose.Snapshot {
	key := KafkaClusterKeyOf(in.snap)
	var out []diagnose.Snapshot
	for _, s := range all {
		if strings.HasPrefix(s.Pod, debugPodPrefix) {
			continue
		}
		if s.Pod != in.snap.Pod && key.Includes(s.Namespace, s.KafkaCluster) {
			out = append(out, s)
		}
	}
	return out
}

// PeerRecentWindow is how long after its Kafka container last ended a peer
// still counts as failing, whatever its state now: a crash-looping broker
// is Running for seconds to minutes in each cycle.
const PeerRecentWindow = time.Hour

// recentlyFailed reports whether a peer's Kafka container is failing or
// failed recently: crash-looping, ended now, waiting after restarts, or
// restarted with its last end inside PeerRecentWindow (or at a time the
// kubelet no longer reports). Such a peer has its previous log read.
func recentlyFailed(c *diagnose.ContainerState, now time.Time) bool {
	switch {
	case crashLooping(c, now), c.Terminated != nil:
		return true
	case c.RestartCount == 0 && c.LastTerminated == nil:
		return false
	case !c.Running:
		return true // waiting to start again after an end
	case c.LastTerminated == nil || c.LastTerminated.FinishedAt.IsZero():
		return true // restarted at a time we cannot tell: count it
	}
	return now.Sub(c.LastTerminated.FinishedAt) < PeerRecentWindow
}

// checkPeers refuses when another node of the cluster failed with the same
// finding: the same fault on two nodes points at the controllers, and
// wiping brokers one by one would spread the outage. Every peer that is
// crash-looping or restarted recently has its previous log read, whatever
// its state now (a crash-looping peer is Running between crashes).
func checkPeers(ctx context.Context, in *gateInput) error {
	all, err := in.loadPeers(ctx)
	if err != nil {
		return err
	}
	for _, p := range peersOf(in, all) {
		k := p.Kafka()
		if k == nil || !recentlyFailed(k, in.now) {
			continue
		}
		findings, err := in.diagnosePeer(ctx, p)
		if err != nil {
			return refuse(GatePeersHealthy, "%s failed recently too (%s) and could not be diagnosed (%v): not repairing while a peer's state is unknown",
				p.Pod, describeContainer(k), err)
		}
		for _, f := range findings {
			if f.Rule == in.req.Rule {
				return refuse(GatePeersHealthy, "%s shows the same fatal error (%s; now %s): the cause is likely on the controller side; escalate instead of wiping brokers",
					p.Pod, f.Rule, describeContainer(k))
			}
		}
	}
	return nil
}

// checkQuorum refuses when a controller of the cluster the bot can see is
// not Ready. Peers whose role the bot cannot tell (a Bitnami
// "controller-eligible" pod may be a controller or a combined node) count
// as possible controllers: one that is not Ready refuses too. When it sees
// none (controllers in another namespace, outside KAFKA_NAMESPACES, or
// labelled so the bot cannot group them), it refuses too: it cannot tell
// whether a wiped broker could catch up. A site with such a layout opts out
// with REPAIR_WITHOUT_VISIBLE_CONTROLLER=true; then the gate proceeds and
// warns in the thread.
func checkQuorum(ctx context.Context, in *gateInput) error {
	all, err := in.loadPeers(ctx)
	if err != nil {
		return err
	}
	var controllers, notReady []string
	for _, p := range peersOf(in, all) {
		if p.Role != diagnose.RoleController && p.Role != diagnose.RoleCombined && p.Role != diagnose.RoleUnknown {
			continue
		}
		controllers = append(controllers, p.Pod)
		if k := p.Kafka(); k == nil || !k.Ready {
			notReady = append(notReady, p.Pod)
		}
	}
	if len(notReady) > 0 {
		return refuse(GateQuorumHealthy, "controller (or unknown-role) pod(s) %s of %d seen are not Ready: the quorum may be unhealthy; a wiped broker could not catch up",
			strings.Join(notReady, ", "), len(controllers))
	}
	if len(controllers) == 0 && !in.opts.AllowNoVisibleController {
		return refuse(GateQuorumHealthy, "no controller pod of cluster %s is visible to the bot, so the controller quorum's health cannot be checked; "+
			"check `kafka-metadata-quorum describe --status` and repair by hand, or, if the controllers run where the bot cannot see them, "+
			"set %s=true to let repairs proceed without this check", KafkaClusterKeyOf(in.snap), SettingNoVisibleController)
	}
	if len(controllers) == 0 {
		in.warnings = append(in.warnings, fmt.Sprintf("%s: no controller pod of this cluster is visible to the bot, so quorum health was not checked "+
			"(%s=true); check `kafka-metadata-quorum describe --status` if in doubt", GateQuorumHealthy, SettingNoVisibleController))
	}
	return nil
}
