// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/approval"
)

// Decision records are Leases named kafkabot-decision-<approval id> in the
// approval's namespace (the broker's), labelled kafkabot/record=decision,
// holding the approval.Record as JSON in one annotation and its MAC
// (approval.SealRecord, keyed with APPROVAL_SECRET) in another.
const (
	decisionLeasePrefix = "kafkabot-decision-"
	// LabelRecord marks the bot's record Leases by kind.
	LabelRecord    = "kafkabot/record"
	recordDecision = "decision"
	annoDecision   = "kafkabot/decision"
	// AnnotationDecisionMAC holds the decision record's MAC.
	AnnotationDecisionMAC = "kafkabot/decision-mac"
)

// DecisionRetention is how long a decision record is kept after its
// approval expired. An expired approval's clicks are refused before the
// record is read, so after this (well above the replicas' clock skew) the
// record decides nothing and is deleted by the next new record's pruning.
const DecisionRetention = time.Hour

// maxPrunePerDecision bounds the deletes one new decision record makes.
const maxPrunePerDecision = 20

// maxDecisionAttempts bounds the re-reads after conflicting writes (two
// replicas deciding the same approval at once).
const maxDecisionAttempts = 8

// DecisionLeaseName is the name of an approval's decision record:
// kafkabot-decision-<id>, the approval id lower-cased (approval ids are
// base32, so this is a valid name).
func DecisionLeaseName(approvalID string) string {
	return decisionLeasePrefix + strings.ToLower(approvalID)
}

// DecisionStore keeps approval.Records in the cluster, shared by every bot
// replica. It creates a record if absent (so of two first clicks only one
// creates it) and changes it only with an update guarded by its
// resourceVersion, so concurrent clicks are applied one after the other.
// Every record it writes carries a MAC keyed with APPROVAL_SECRET, and it
// decides nothing on a record whose MAC does not verify
// (approval.ErrUnsignedRecord): a vote can only come from a click this bot
// authorized, never from someone who may merely write Leases.
type DecisionStore struct {
	c   *Client
	key []byte
}

// Decisions returns the client's decision record store, signing and
// verifying records with key (APPROVAL_SECRET). Without a key of at least
// approval.MinSecretLength bytes every Decide fails: nothing is decided on
// records nobody can verify.
func (c *Client) Decisions(key []byte) *DecisionStore { return &DecisionStore{c: c, key: key} }

// Decide applies a click to its approval's record in the cluster and
// returns what it did. It returns an error, and the bot must act on
// nothing, when the record cannot be read or written, does not verify
// (approval.ErrUnsignedRecord), or does not match the approval
// (approval.ErrRecordMismatch).
func (s *DecisionStore) Decide(ctx context.Context, click approval.Click) (approval.Outcome, error) {
	a := click.Approval
	if len(s.key) < approval.MinSecretLength {
		return approval.Outcome{}, fmt.Errorf("recording the decision on approval %s: %w", a.ID, approval.ErrWeakSecret)
	}
	if !s.c.NamespaceAllowed(a.Namespace) {
		return approval.Outcome{}, fmt.Errorf("recording the decision on approval %s: %w: %s", a.ID, ErrNamespaceNotAllowed, a.Namespace)
	}
	rec := approval.NewRecord(a, click.Required)
	out, err := approval.Apply(&rec, click)
	if err != nil {
		return out, err
	}
	lease, err := s.newLease(rec, click.At)
	if err != nil {
		return approval.Outcome{}, err
	}
	_, err = s.c.CreateLease(ctx, lease)
	if err == nil {
		s.prune(ctx, a.Namespace, click.At)
		return out, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return approval.Outcome{}, fmt.Errorf("recording the decision on approval %s: %w", a.ID, err)
	}
	// sent is the outcome of an update whose answer was lost (or that
	// conflicted after a lost answer was retried): if the record read next
	// holds this very click, that update was applied.
	var sent *approval.Outcome
	for range maxDecisionAttempts {
		existing, err := s.c.GetLease(ctx, a.Namespace, lease.Name)
		if err != nil {
			return approval.Outcome{}, fmt.Errorf("recording the decision on approval %s: %w", a.ID, err)
		}
		rec, err := s.verifiedRecordOf(existing)
		if err != nil {
			return approval.Outcome{}, err
		}
		if sent != nil && rec.Holds(click) {
			out := *sent
			out.Record = rec
			return out, nil
		}
		out, err := approval.Apply(&rec, click)
		if err != nil || !out.Applied {
			return out, err
		}
		if err := s.setRecord(existing, rec); err != nil {
			return approval.Outcome{}, err
		}
		_, err = s.c.UpdateLease(ctx, existing)
		if err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) && !mayHaveSucceeded(err) {
			return approval.Outcome{}, fmt.Errorf("recording the decision on approval %s: %w", a.ID, err)
		}
		sent = &out
	}
	return approval.Outcome{}, fmt.Errorf("recording the decision on approval %s: the record kept changing (%d attempts)", a.ID, maxDecisionAttempts)
}

// Get reads the record of an approval; found is false when there is none.
func (s *DecisionStore) Get(ctx context.Context, namespace, approvalID string) (rec approval.Record, found bool, err error) {
	lease, err := s.c.GetLease(ctx, namespace, DecisionLeaseName(approvalID))
	if apierrors.IsNotFound(err) {
		return approval.Record{}, false, nil
	}
	if err != nil {
		return approval.Record{}, false, err
	}
	rec, err = s.verifiedRecordOf(lease)
	return rec, err == nil, err
}

func (s *DecisionStore) newLease(rec approval.Record, now time.Time) (*coordinationv1.Lease, error) {
	// The holder is a nonce: CreateLease recognises its own create by it
	// when the answer to the create was lost.
	holder := "decision-" + strings.ToLower(rand.Text()[:12])
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      DecisionLeaseName(rec.ID),
			Namespace: rec.Namespace,
			Labels:    map[string]string{LabelRecord: recordDecision},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: &holder,
			AcquireTime:    &metav1.MicroTime{Time: now.Truncate(time.Microsecond)},
		},
	}
	return lease, s.setRecord(lease, rec)
}

// setRecord stores rec and its MAC in lease.
func (s *DecisionStore) setRecord(lease *coordinationv1.Lease, rec approval.Record) error {
	body, mac, err := approval.SealRecord(s.key, rec)
	if err != nil {
		return err
	}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[annoDecision] = body
	lease.Annotations[AnnotationDecisionMAC] = mac
	return nil
}

// verifiedRecordOf reads a decision Lease's record, refusing one whose MAC
// does not verify (approval.ErrUnsignedRecord) or that sits under another
// approval's name or namespace.
func (s *DecisionStore) verifiedRecordOf(lease *coordinationv1.Lease) (approval.Record, error) {
	where := lease.Namespace + "/" + lease.Name
	raw, ok := lease.Annotations[annoDecision]
	if !ok {
		return approval.Record{}, fmt.Errorf("%w: lease %s has no %s annotation", errBadRecord, where, annoDecision)
	}
	rec, err := approval.OpenRecord(s.key, raw, lease.Annotations[AnnotationDecisionMAC])
	if err != nil {
		return approval.Record{}, fmt.Errorf("decision record %s: %w", where, err)
	}
	if lease.Name != DecisionLeaseName(rec.ID) || lease.Namespace != rec.Namespace {
		return approval.Record{}, fmt.Errorf("decision record %s: %w: it holds the record of approval %s in namespace %s",
			where, approval.ErrUnsignedRecord, rec.ID, rec.Namespace)
	}
	return rec, nil
}

// errBadRecord means a decision Lease does not hold a readable record.
var errBadRecord = errors.New("unreadable decision record")

// recordOf reads a decision Lease's record without verifying it: only for
// pruning, which deletes expired records and decides nothing.
func recordOf(lease *coordinationv1.Lease) (approval.Record, error) {
	var rec approval.Record
	raw, ok := lease.Annotations[annoDecision]
	if !ok {
		return rec, fmt.Errorf("%w: lease %s/%s has no %s annotation", errBadRecord, lease.Namespace, lease.Name, annoDecision)
	}
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return rec, fmt.Errorf("%w: lease %s/%s: %v", errBadRecord, lease.Namespace, lease.Name, err)
	}
	return rec, nil
}

// prune deletes up to maxPrunePerDecision decision records of namespace
// whose approval expired more than DecisionRetention before now. It is
// best effort: a record it fails to delete is tried again next time. Each
// delete is conditional on the record being the one read, so a record
// changed meanwhile survives.
func (s *DecisionStore) prune(ctx context.Context, namespace string, now time.Time) {
	leases, err := s.c.ListLeases(ctx, namespace, LabelRecord+"="+recordDecision)
	if err != nil {
		return
	}
	deleted := 0
	for i := range leases {
		l := &leases[i]
		rec, err := recordOf(l)
		if err != nil || !strings.HasPrefix(l.Name, decisionLeasePrefix) || rec.ExpiresAt.IsZero() ||
			!now.After(rec.ExpiresAt.Add(DecisionRetention)) {
			continue
		}
		uid, rv := l.UID, l.ResourceVersion
		err = s.c.cs.CoordinationV1().Leases(namespace).Delete(ctx, l.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
		})
		if err == nil {
			deleted++
		}
		if deleted >= maxPrunePerDecision {
			return
		}
	}
}
