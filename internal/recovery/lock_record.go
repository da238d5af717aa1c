// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// More annotations of a repair Lease.
const (
	// annoExpiresAt is when the approval expired (RFC 3339): a resume past
	// it plus the repair timeout is refused.
	annoExpiresAt = "kafkabot/approval-expires-at"
	// annoClusterLease names the per-cluster Lease the repair holds.
	annoClusterLease = "kafkabot/cluster-lease"
	// annoRecordMAC is an HMAC-SHA256, keyed with APPROVAL_SECRET, over the
	// Kubernetes cluster's name and the Lease's record (recordFields): a
	// Lease written by anyone else, or copied from another cluster, does
	// not verify, so Resume never acts on it.
	annoRecordMAC = "kafkabot/record-mac"
)

// recordFields are the annotations the record MAC covers: what to repair,
// where, how, who decided, where to report and until when. The step, state,
// result and go restart count change as the repair runs and decide no write
// on their own (every resumed write re-runs the gates first).
var recordFields = []string{
	annoApprovalID, annoPod, annoPodUID, annoRule, annoAction, annoTarget, annoRequester, annoApprover,
	annoChannel, annoThreadTS, annoScript, annoDebugPod, annoStartedAt, annoExpiresAt, annoClusterLease,
}

// recordDomain separates this MAC from every other use of the key (the
// approval and silence tokens, decision records). v2 covers the Kubernetes
// cluster's name; a v1 record (written before it did) does not verify, so
// it is not resumed and expires as any unverified record does (see
// repairLock.unverifiedUntil).
const recordDomain = "kafkabot repair lease record v2"

// ErrUnverifiedRecord marks a Lease whose record MAC is missing or wrong.
var ErrUnverifiedRecord = errors.New("the lease's record is not signed by this bot")

// recordMAC computes the MAC of a Lease's record: the Kubernetes cluster
// it is in (RepairOptions.ClusterName), its namespace and name and every
// record field, each length-prefixed so no two records share an encoding.
func recordMAC(key []byte, cluster string, lease *coordinationv1.Lease) string {
	m := hmac.New(sha256.New, key)
	write := func(s string) {
		m.Write([]byte(strconv.Itoa(len(s))))
		m.Write([]byte{':'})
		m.Write([]byte(s))
	}
	write(recordDomain)
	write(cluster)
	write(lease.Namespace)
	write(lease.Name)
	for _, f := range recordFields {
		write(f)
		write(lease.Annotations[f])
	}
	return hex.EncodeToString(m.Sum(nil))
}

// signRecord stores the record MAC of a Lease in Kubernetes cluster
// cluster (no key: no MAC, and such a Lease is never resumed).
func signRecord(key []byte, cluster string, lease *coordinationv1.Lease) {
	if len(key) == 0 {
		delete(lease.Annotations, annoRecordMAC)
		return
	}
	lease.Annotations[annoRecordMAC] = recordMAC(key, cluster, lease)
}

// verifyRecord checks, in constant time, the record MAC of a Lease read
// in Kubernetes cluster cluster.
func verifyRecord(key []byte, cluster string, lease *coordinationv1.Lease) error {
	got := lease.Annotations[annoRecordMAC]
	if len(key) == 0 {
		return fmt.Errorf("%w: no APPROVAL_SECRET to verify it with", ErrUnverifiedRecord)
	}
	if got == "" {
		return fmt.Errorf("%w: it carries no %s", ErrUnverifiedRecord, annoRecordMAC)
	}
	if !hmac.Equal([]byte(got), []byte(recordMAC(key, cluster, lease))) {
		return fmt.Errorf("%w: %s does not match its record (changed, signed with another APPROVAL_SECRET, "+
			"copied from another Kubernetes cluster, or signed by a version before the MAC covered the cluster)", ErrUnverifiedRecord, annoRecordMAC)
	}
	return nil
}

// sign and verify are signRecord and verifyRecord with this lock's key
// and Kubernetes cluster.
func (l *repairLock) sign(lease *coordinationv1.Lease) { signRecord(l.key, l.cluster, lease) }
func (l *repairLock) verify(lease *coordinationv1.Lease) error {
	return verifyRecord(l.key, l.cluster, lease)
}

// ErrLeaseLost is a Lease update refused because another holder took the
// Lease: this replica no longer owns the repair and must stop writing.
var ErrLeaseLost = errors.New("the repair lease was taken by another holder")

// clusterLeaseFor builds the per-cluster Lease of a new repair.
func (l *repairLock) clusterLeaseFor(req Request, key kube.KafkaClusterKey, now time.Time) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kube.ClusterLeaseName(key), Namespace: req.Namespace}}
	l.stampCluster(lease, req, key, now)
	return lease
}

func (l *repairLock) stampCluster(lease *coordinationv1.Lease, req Request, key kube.KafkaClusterKey, now time.Time) {
	now = now.Truncate(time.Microsecond)
	identity := l.identity
	seconds := int32(l.duration / time.Second)
	lease.Labels = map[string]string{kube.LabelManagedBy: kube.ManagedByBot, kube.LabelCluster: labelValue(key.Cluster)}
	lease.Annotations = map[string]string{
		annoApprovalID: req.ApprovalID,
		annoPod:        req.Pod,
		annoApprover:   req.Approver,
		annoState:      leaseRunning,
		annoStartedAt:  now.UTC().Format(time.RFC3339),
		annoStep:       "holding the cluster's repair lock",
	}
	l.sign(lease)
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: &identity, LeaseDurationSeconds: &seconds,
		AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now},
	}
}

// AcquireCluster takes the per-cluster Lease kafkabot-cluster-<key> for
// req: created if absent, else taken over with an update guarded by its
// resourceVersion when it records no running repair. Of two approvals on
// two brokers of one cluster, only one can hold it.
func (l *repairLock) AcquireCluster(ctx context.Context, req Request, key kube.KafkaClusterKey) (*heldLock, error) {
	var expired error
	held, err := l.takeLease(ctx, l.clusterLeaseFor(req, key, l.clock.Now()), "another repair of this cluster",
		func(existing *coordinationv1.Lease) error {
			var err error
			if err, expired = l.clusterBusy(ctx, existing, req); err != nil {
				return err
			}
			l.stampCluster(existing, req, key, l.clock.Now())
			return nil
		})
	if held != nil {
		held.tookExpired = expired
	}
	return held, err
}

// clusterBusy says why an existing cluster Lease blocks req: it records a
// running repair, unless that repair's own broker Lease says it finished
// (a release of the cluster Lease that did not get through), or its record
// does not verify and its bound passed (expired is then the loud note).
func (l *repairLock) clusterBusy(ctx context.Context, existing *coordinationv1.Lease, req Request) (block, expired error) {
	a := existing.Annotations
	if a[annoState] != leaseRunning && a[annoState] != "" {
		return nil, nil
	}
	if block, expired = l.vetUnverified(existing); block != nil || expired != nil {
		return block, expired
	}
	return l.clusterBusyVerified(ctx, existing, req), nil
}

// clusterBusyVerified is clusterBusy's rule for a running cluster Lease
// whose record verifies.
func (l *repairLock) clusterBusyVerified(ctx context.Context, existing *coordinationv1.Lease, req Request) error {
	a := existing.Annotations
	if a[annoApprovalID] == req.ApprovalID {
		return fmt.Errorf("%w: approval %s already holds this cluster's repair lock", ErrAlreadyRan, req.ApprovalID)
	}
	if pod := a[annoPod]; pod != "" {
		broker, err := l.kc.GetLease(ctx, existing.Namespace, kube.RepairLeaseName(pod))
		if err == nil && broker.Annotations[annoApprovalID] == a[annoApprovalID] &&
			broker.Annotations[annoState] != leaseRunning && broker.Annotations[annoState] != "" {
			return nil
		}
	}
	return fmt.Errorf("%w: broker %s of this cluster is under repair (approval %s by %s, since %s): one broker at a time",
		ErrRepairRunning, orUnknown(a[annoPod]), a[annoApprovalID], orUnknown(a[annoApprover]), a[annoStartedAt])
}

// observedLease is what Resume last saw of a Lease, and when by its own
// clock.
type observedLease struct {
	resourceVersion string
	at              time.Time
}

// staleByLocalTime reports whether lease's holder stopped renewing it,
// judged as client-go's leader election does: by how long, on this
// replica's own clock, the Lease has stayed unchanged since this replica
// first saw it, never by the renew time another replica's clock wrote.
// It records first sightings in seen and returns when the Lease would be
// stale if it stays unchanged.
func (l *repairLock) staleByLocalTime(lease *coordinationv1.Lease, seen map[string]observedLease) (bool, time.Time) {
	key := lease.Namespace + "/" + lease.Name
	now := l.clock.Now()
	o, ok := seen[key]
	if !ok || o.resourceVersion != lease.ResourceVersion {
		o = observedLease{resourceVersion: lease.ResourceVersion, at: now}
		seen[key] = o
	}
	d := l.duration
	if s := lease.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		d = time.Duration(*s) * time.Second
	}
	until := o.at.Add(d)
	return !now.Before(until), until
}

// recordedExpiry is when the approval a Lease records expired: its
// recorded expiry, or (no expiry recorded) its start.
func recordedExpiry(lease *coordinationv1.Lease) (time.Time, error) {
	for _, k := range []string{annoExpiresAt, annoStartedAt} {
		if v := strings.TrimSpace(lease.Annotations[k]); v != "" {
			return time.Parse(time.RFC3339, v)
		}
	}
	return time.Time{}, errors.New("the lease records neither an approval expiry nor a start time")
}
