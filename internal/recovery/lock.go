// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Annotations of a repair Lease. Together they are the durable record of a
// repair: enough to report in the same Slack thread and finish it after a
// restart, and to refuse an approval that already ran.
const (
	annoApprovalID = "kafkabot/approval-id"
	annoPod        = "kafkabot/pod"
	annoDebugPod   = "kafkabot/debug-pod"
	annoChannel    = "kafkabot/slack-channel"
	annoThreadTS   = "kafkabot/thread-ts"
	annoApprover   = "kafkabot/approver"
	annoRequester  = "kafkabot/requester"
	annoAction     = "kafkabot/action"
	annoTarget     = "kafkabot/target"
	annoRule       = "kafkabot/rule"
	annoPodUID     = "kafkabot/pod-uid"
	annoStep       = "kafkabot/step"
	annoState      = "kafkabot/state"
	annoStartedAt  = "kafkabot/started-at"
	annoFinishedAt = "kafkabot/finished-at"
	annoScript     = "kafkabot/script" // JSON ScriptInput of the debug pod
	annoResult     = "kafkabot/result" // JSON ScriptResult, once read
	// annoGoRestarts is the broker's restart count when the go signal was
	// given, checked again after the move.
	annoGoRestarts = "kafkabot/go-restart-count"
)

// Lease states recorded in the kafkabot/state annotation.
const (
	leaseRunning = "running"
	leaseDone    = "done"
	leaseFailed  = "failed"
)

// ErrAlreadyRan refuses an approval whose repair already ran (or runs).
var ErrAlreadyRan = errors.New("approval already ran")

// ErrRepairRunning refuses a repair of a broker another repair holds.
var ErrRepairRunning = errors.New("a repair of this broker is already running")

// repairLock takes and records per-broker repair Leases.
type repairLock struct {
	kc       *kube.Client
	identity string
	clock    clock.PassiveClock
	// duration is the Lease duration: a holder renews at every step, and no
	// step waits longer than the repair timeout, so a Lease not renewed for
	// this long belongs to a bot that is gone.
	duration time.Duration
	// key signs and verifies the Lease's record (APPROVAL_SECRET); cluster
	// is the Kubernetes cluster's name, which the record MAC covers.
	key     []byte
	cluster string
	// timeout and settle are the Repairer's: they bound how long a genuine
	// repair holds its Lease (unverifiedBound).
	timeout, settle time.Duration

	mu sync.Mutex
	// unverifiedSeen is when this replica first saw each Lease (by
	// namespace/name) whose record does not verify.
	unverifiedSeen map[string]time.Time
}

// unverifiedBound is how long a Lease whose record does not verify blocks
// repairs: the longest a genuine repair holds its Lease (the wait for the
// go and the wait for the debug pod, up to a repair timeout each; the wait
// for the recreated broker, up to maxStartingRounds timeouts; the settle
// period) plus the Lease slack. With the defaults (10 minute timeout, 2
// minute settle) that is 84 minutes.
func (l *repairLock) unverifiedBound() time.Duration {
	return time.Duration(2+maxStartingRounds)*l.timeout + l.settle + leaseSlack
}

// unverifiedUntil reports whether lease's record does not verify and, if
// so, until when it still blocks repairs: unverifiedBound after the earlier
// of its recorded start and when this replica first saw it unverified. Its
// renewals and a start recorded in the future never extend it (anyone who
// may write Leases can forge those); a bot restart restarts the count from
// the recorded start at the latest.
func (l *repairLock) unverifiedUntil(lease *coordinationv1.Lease) (unverified bool, until time.Time, why error) {
	why = l.verify(lease)
	key := lease.Namespace + "/" + lease.Name
	l.mu.Lock()
	defer l.mu.Unlock()
	if why == nil {
		delete(l.unverifiedSeen, key)
		return false, time.Time{}, nil
	}
	if l.unverifiedSeen == nil {
		l.unverifiedSeen = map[string]time.Time{}
	}
	first, ok := l.unverifiedSeen[key]
	if !ok {
		first = l.clock.Now()
		l.unverifiedSeen[key] = first
	}
	if started, err := time.Parse(time.RFC3339, lease.Annotations[annoStartedAt]); err == nil && started.Before(first) {
		first = started
	}
	return true, first.Add(l.unverifiedBound()), why
}

// ErrUnverifiedLeaseExpired marks the note of a Lease whose record does
// not verify and whose bound has passed: it no longer blocks, and is taken
// over.
var ErrUnverifiedLeaseExpired = errors.New("a repair lease whose record does not verify has expired")

// vetUnverified judges a Lease that blocks a new repair if genuine (it
// records a running repair, or this approval): a verified one blocks
// (nil, nil: the caller's rules apply), an unverified one blocks loudly
// until its bound, and after it no longer blocks (expired is the loud note
// to give).
func (l *repairLock) vetUnverified(lease *coordinationv1.Lease) (block, expired error) {
	unverified, until, why := l.unverifiedUntil(lease)
	if !unverified {
		return nil, nil
	}
	a := lease.Annotations
	if l.clock.Now().Before(until) {
		return fmt.Errorf("%w: lease %s records a running repair (approval %s, pod %s) but %v. "+
			"It blocks repairs until %s (the longest a genuine repair holds its lease), then it expires; check who wrote it (the API server's audit log)",
			ErrRepairRunning, lease.Name, orUnknown(a[annoApprovalID]), orUnknown(a[annoPod]), why, until.UTC().Format(time.RFC3339)), nil
	}
	return nil, fmt.Errorf("%w: ⚠️ lease %s recorded a running repair (approval %s, pod %s) but %v; it blocked repairs until %s and is taken over now. "+
		"If a repair of an older bot version or another replica was running there, check its debug pod and backup folder",
		ErrUnverifiedLeaseExpired, lease.Name, orUnknown(a[annoApprovalID]), orUnknown(a[annoPod]), why, until.UTC().Format(time.RFC3339))
}

// heldLock is a Lease this bot replica holds for one repair.
type heldLock struct {
	l     *repairLock
	lease *coordinationv1.Lease
	// lost is set once an update found the Lease held by someone else
	// (fencing): the repair must stop writing.
	lost error
	// tookExpired, when set, says the Lease was taken over from an
	// unverified record whose bound had passed (ErrUnverifiedLeaseExpired).
	tookExpired error
}

// Lost returns why this replica no longer holds the Lease, or nil.
func (h *heldLock) Lost() error {
	if h == nil {
		return nil
	}
	return h.lost
}

// leaseFor builds the Lease of a new repair.
func (l *repairLock) leaseFor(req Request, cluster string, extra map[string]string, now time.Time) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name:      kube.RepairLeaseName(req.Pod),
		Namespace: req.Namespace,
	}}
	l.stamp(lease, req, cluster, extra, now)
	return lease
}

// stamp (re)writes a Lease for a new repair: holder, times, labels and the
// repair's record. resourceVersion is left alone (optimistic concurrency).
func (l *repairLock) stamp(lease *coordinationv1.Lease, req Request, cluster string, extra map[string]string, now time.Time) {
	now = now.Truncate(time.Microsecond)
	identity := l.identity
	seconds := int32(l.duration / time.Second)
	lease.Labels = map[string]string{
		kube.LabelManagedBy: kube.ManagedByBot,
		kube.LabelBroker:    labelValue(req.Pod),
		kube.LabelCluster:   labelValue(cluster),
	}
	lease.Annotations = map[string]string{
		annoApprovalID: req.ApprovalID,
		annoPod:        req.Pod,
		annoChannel:    req.Channel,
		annoThreadTS:   req.ThreadTS,
		annoApprover:   req.Approver,
		annoRequester:  req.Requester,
		annoAction:     req.Action,
		annoTarget:     req.Target,
		annoRule:       req.Rule,
		annoPodUID:     req.PodUID,
		annoStep:       "taking the repair lease",
		annoState:      leaseRunning,
		annoStartedAt:  now.UTC().Format(time.RFC3339),
	}
	if !req.ExpiresAt.IsZero() {
		lease.Annotations[annoExpiresAt] = req.ExpiresAt.UTC().Format(time.RFC3339)
	}
	for k, v := range extra {
		lease.Annotations[k] = v
	}
	l.sign(lease)
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity:       &identity,
		LeaseDurationSeconds: &seconds,
		AcquireTime:          &metav1.MicroTime{Time: now},
		RenewTime:            &metav1.MicroTime{Time: now},
	}
}

// Acquire takes the broker's Lease for req. It refuses, without writing,
// an approval that already ran and a broker whose repair is running. A
// finished Lease of another approval is taken over with an update guarded
// by its resourceVersion, so of two replicas only one can win.
func (l *repairLock) Acquire(ctx context.Context, req Request, cluster string, extra map[string]string) (*heldLock, error) {
	var expired error
	held, err := l.takeLease(ctx, l.leaseFor(req, cluster, extra, l.clock.Now()), "another bot replica",
		func(existing *coordinationv1.Lease) error {
			var err error
			if err, expired = l.refuseTaken(existing, req.ApprovalID); err != nil {
				return err
			}
			l.stamp(existing, req, cluster, extra, l.clock.Now())
			return nil
		})
	if held != nil {
		held.tookExpired = expired
	}
	return held, err
}

// takeLease creates lease or, when it exists, takes the existing one over:
// claim refuses it (an error, nothing written) or restamps it for this
// repair, and the update is guarded by its resourceVersion, so of two
// takers only one wins; rival names the loser's rival in that refusal.
func (l *repairLock) takeLease(ctx context.Context, lease *coordinationv1.Lease, rival string, claim func(existing *coordinationv1.Lease) error) (*heldLock, error) {
	created, err := l.kc.CreateLease(ctx, lease)
	if err == nil {
		return &heldLock{l: l, lease: created}, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("taking lease %s: %w", lease.Name, err)
	}
	existing, err := l.kc.GetLease(ctx, lease.Namespace, lease.Name)
	if err != nil {
		return nil, fmt.Errorf("taking lease %s: %w", lease.Name, err)
	}
	if err := claim(existing); err != nil {
		return nil, err
	}
	updated, err := l.kc.UpdateLease(ctx, existing)
	if err != nil {
		if mine := l.ownWrite(ctx, existing, err); mine != nil {
			return &heldLock{l: l, lease: mine}, nil
		}
	}
	if apierrors.IsConflict(err) {
		return nil, fmt.Errorf("%w: %s took lease %s at the same moment", ErrRepairRunning, rival, lease.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("taking lease %s: %w", lease.Name, err)
	}
	return &heldLock{l: l, lease: updated}, nil
}

// ownWrite handles a Lease update that failed with a conflict or an error
// that may hide an applied write (the answer was lost; a retry of it then
// conflicts): it reads the Lease back and returns it when it holds the
// write sent (this holder, the same acquire time, the same approval), else
// nil. Without it, a take-over whose answer was lost left the Lease
// running under this replica's identity while the thread said "refused",
// and the next start resumed a repair nobody was told about.
func (l *repairLock) ownWrite(ctx context.Context, sent *coordinationv1.Lease, err error) *coordinationv1.Lease {
	if !apierrors.IsConflict(err) && !kube.IsTransient(err) && !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	cur, getErr := l.kc.GetLease(ctx, sent.Namespace, sent.Name)
	if getErr != nil || !kube.SameAcquisition(cur, sent) || cur.Annotations[annoApprovalID] != sent.Annotations[annoApprovalID] {
		return nil
	}
	return cur
}

// refuseTaken returns why an existing repair Lease blocks approvalID, or
// nil when it records a finished repair of another approval, or when its
// record does not verify and its bound passed (expired is then the loud
// note to give).
func (l *repairLock) refuseTaken(lease *coordinationv1.Lease, approvalID string) (block, expired error) {
	a := lease.Annotations
	state := a[annoState]
	if state == leaseRunning || state == "" || a[annoApprovalID] == approvalID {
		if block, expired = l.vetUnverified(lease); block != nil || expired != nil {
			return block, expired
		}
	}
	return refuseVerified(lease, approvalID), nil
}

// refuseVerified is refuseTaken's rule for a Lease whose record verifies.
func refuseVerified(lease *coordinationv1.Lease, approvalID string) error {
	a := lease.Annotations
	state := a[annoState]
	if a[annoApprovalID] == approvalID {
		return fmt.Errorf("%w: approval %s already ran on this broker (state %s, step %q, approved by %s)",
			ErrAlreadyRan, approvalID, state, a[annoStep], a[annoApprover])
	}
	if state == leaseRunning || state == "" {
		return fmt.Errorf("%w (approved by %s, step %q, started %s)", ErrRepairRunning, a[annoApprover], a[annoStep], a[annoStartedAt])
	}
	return nil
}

// SetStep records the step reached and renews the Lease.
func (h *heldLock) SetStep(ctx context.Context, step string) error {
	return h.update(ctx, func(l *coordinationv1.Lease) { l.Annotations[annoStep] = step })
}

// SetAnnotation stores one annotation and renews the Lease.
func (h *heldLock) SetAnnotation(ctx context.Context, key, value string) error {
	return h.update(ctx, func(l *coordinationv1.Lease) { l.Annotations[key] = value })
}

// RecordJSON stores v as JSON in annotation key and renews the Lease.
func (h *heldLock) RecordJSON(ctx context.Context, key string, v any) error {
	s, err := jsonString(v)
	if err != nil {
		return err
	}
	return h.update(ctx, func(l *coordinationv1.Lease) { l.Annotations[key] = s })
}

// Release marks the repair finished (state done or failed) and gives the
// Lease up. The Lease stays as the record that this approval ran.
func (h *heldLock) Release(ctx context.Context, state string) error {
	return h.update(ctx, func(l *coordinationv1.Lease) {
		l.Annotations[annoState] = state
		l.Annotations[annoFinishedAt] = h.l.clock.Now().UTC().Format(time.RFC3339)
		l.Spec.HolderIdentity = nil
	})
}

// HandOff gives up a running repair's Lease without finishing it, when the
// bot stops mid-repair: the state stays running and the holder is cleared,
// so Resume on any replica takes it over at once instead of waiting for the
// Lease to expire.
func (h *heldLock) HandOff(ctx context.Context) error {
	return h.update(ctx, func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = nil })
}

// update applies change to the Lease and renews it. On a conflict it
// re-reads the Lease and applies change again only while the Lease is
// still held by this replica for the same approval.
func (h *heldLock) update(ctx context.Context, change func(*coordinationv1.Lease)) error {
	if h.lost != nil {
		return h.lost
	}
	approval := h.lease.Annotations[annoApprovalID]
	for attempt := 0; ; attempt++ {
		next := h.lease.DeepCopy()
		if next.Annotations == nil {
			next.Annotations = map[string]string{}
		}
		change(next)
		next.Spec.RenewTime = &metav1.MicroTime{Time: h.l.clock.Now().Truncate(time.Microsecond)}
		updated, err := h.l.kc.UpdateLease(ctx, next)
		if err == nil {
			h.lease = updated
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 2 {
			return err
		}
		fresh, getErr := h.l.kc.GetLease(ctx, h.lease.Namespace, h.lease.Name)
		if getErr != nil {
			return getErr
		}
		if holder(fresh) != h.l.identity || fresh.Annotations[annoApprovalID] != approval {
			h.lost = fmt.Errorf("%w: %s is held by %q for approval %s", ErrLeaseLost, fresh.Name, holder(fresh), fresh.Annotations[annoApprovalID])
			return h.lost
		}
		h.lease = fresh
	}
}

// takeOver makes this replica the holder of a running Lease left by a
// stopped replica (resume). The update is guarded by the resourceVersion
// read, so only one replica takes it over.
func (l *repairLock) takeOver(ctx context.Context, lease *coordinationv1.Lease) (*heldLock, error) {
	next := lease.DeepCopy()
	identity := l.identity
	now := &metav1.MicroTime{Time: l.clock.Now().Truncate(time.Microsecond)}
	next.Spec.HolderIdentity = &identity
	next.Spec.RenewTime = now
	next.Spec.AcquireTime = now
	updated, err := l.kc.UpdateLease(ctx, next)
	if err != nil {
		if mine := l.ownWrite(ctx, next, err); mine != nil {
			return &heldLock{l: l, lease: mine}, nil
		}
		return nil, fmt.Errorf("taking over lease %s: %w", lease.Name, err)
	}
	return &heldLock{l: l, lease: updated}, nil
}

// stale reports whether a Lease's holder stopped renewing it.
func (l *repairLock) stale(lease *coordinationv1.Lease) bool {
	return !l.clock.Now().Before(expiry(lease))
}

// expiry is when a Lease's holder is presumed gone.
func expiry(lease *coordinationv1.Lease) time.Time {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return time.Time{}
	}
	return lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
}

func holder(lease *coordinationv1.Lease) string {
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// requestOf rebuilds the Request a running Lease records.
func requestOf(lease *coordinationv1.Lease) Request {
	a := lease.Annotations
	return Request{
		ApprovalID: a[annoApprovalID], Namespace: lease.Namespace, Pod: a[annoPod],
		PodUID: a[annoPodUID], Rule: a[annoRule], Action: a[annoAction], Target: a[annoTarget],
		Requester: a[annoRequester], Approver: a[annoApprover], Channel: a[annoChannel], ThreadTS: a[annoThreadTS],
	}
}

// labelValue bounds a string to a valid label value (63 characters of
// [A-Za-z0-9._-], alphanumeric at both ends).
func labelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	for len(b) > 0 && !isAlnum(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && !isAlnum(b[0]) {
		b = b[1:]
	}
	return string(b)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// uidOf converts a recorded UID.
func uidOf(s string) types.UID { return types.UID(s) }

// jsonString encodes v for an annotation.
func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding %T: %w", v, err)
	}
	return string(b), nil
}
