// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An escalation record is the Lease kafkabot-escalated-<cluster key> in the
// cluster's namespace, labelled kafkabot/record=escalation. While it exists
// the bot runs no automated repair on any broker of that cluster. The bot
// only ever creates it (after a repaired broker crashed again); only a
// person removes it, with the Slack button or `bot escalation clear`.
const (
	escalationLeasePrefix = "kafkabot-escalated-"
	recordEscalation      = "escalation"

	annoEscCluster  = "kafkabot/cluster-key"
	annoEscPod      = "kafkabot/pod"
	annoEscApproval = "kafkabot/approval-id"
	annoEscReason   = "kafkabot/reason"
	annoEscAt       = "kafkabot/escalated-at"
	annoEscChannel  = "kafkabot/slack-channel"
	annoEscThread   = "kafkabot/thread-ts"
)

// maxReasonLen bounds the reason kept in the record.
const maxReasonLen = 2000

// ErrNoEscalation means the cluster has no escalation record (or no longer
// the one that was meant).
var ErrNoEscalation = errors.New("no such escalation record")

// Escalation is a per-cluster "escalated: no automated repairs" record.
type Escalation struct {
	Key KafkaClusterKey
	// Pod is the broker whose repair was followed by a new crash, and
	// ApprovalID that repair's approval.
	Pod        string
	ApprovalID string
	// Reason says what happened, in a sentence.
	Reason string
	At     time.Time
	// Channel and ThreadTS are the Slack thread of that repair ("" from a terminal).
	Channel, ThreadTS string
	// UID identifies this record: a clear names it, so that it never
	// removes a newer escalation of the same cluster.
	UID string
}

// EscalationLeaseName is the name of a cluster's escalation record.
func EscalationLeaseName(k KafkaClusterKey) string { return escalationLeasePrefix + k.Key() }

// Overlaps reports whether two groups share pods: same namespace, and the
// same cluster unless either is a whole namespace.
func (k KafkaClusterKey) Overlaps(o KafkaClusterKey) bool {
	return k.Namespace == o.Namespace && (k.Cluster == "" || o.Cluster == "" || k.Cluster == o.Cluster)
}

// Escalate records that e.Key is escalated, creating the record if absent.
// When the cluster is already escalated it keeps the first record and
// returns it with created false: the first reason is the one to read.
func (c *Client) Escalate(ctx context.Context, e Escalation) (rec Escalation, created bool, err error) {
	if len(e.Reason) > maxReasonLen {
		e.Reason = e.Reason[:maxReasonLen] + "…"
	}
	at := e.At.UTC().Truncate(time.Microsecond)
	holder := "escalation/" + e.ApprovalID
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      EscalationLeaseName(e.Key),
			Namespace: e.Key.Namespace,
			Labels:    map[string]string{LabelRecord: recordEscalation},
			Annotations: map[string]string{
				annoEscCluster: e.Key.String(), annoEscPod: e.Pod, annoEscApproval: e.ApprovalID, annoEscReason: e.Reason,
				annoEscAt: at.Format(time.RFC3339Nano), annoEscChannel: e.Channel, annoEscThread: e.ThreadTS,
			},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, AcquireTime: &metav1.MicroTime{Time: at}},
	}
	made, err := c.CreateLease(ctx, lease)
	if err == nil {
		rec, err := escalationOf(made)
		return rec, true, err
	}
	if !apierrors.IsAlreadyExists(err) {
		return Escalation{}, false, fmt.Errorf("recording the escalation of %s: %w", e.Key, err)
	}
	existing, err := c.GetLease(ctx, lease.Namespace, lease.Name)
	if err != nil {
		return Escalation{}, false, fmt.Errorf("recording the escalation of %s: %w", e.Key, err)
	}
	rec, err = escalationOf(existing)
	return rec, false, err
}

// GetEscalation reads a cluster's escalation record; found is false when
// the cluster is not escalated.
func (c *Client) GetEscalation(ctx context.Context, k KafkaClusterKey) (e Escalation, found bool, err error) {
	lease, err := c.GetLease(ctx, k.Namespace, EscalationLeaseName(k))
	if apierrors.IsNotFound(err) {
		return Escalation{}, false, nil
	}
	if err != nil {
		return Escalation{}, false, err
	}
	e, err = escalationOf(lease)
	return e, err == nil, err
}

// Escalations lists the escalation records of a namespace ("" = every
// namespace), oldest first.
func (c *Client) Escalations(ctx context.Context, namespace string) ([]Escalation, error) {
	leases, err := c.ListLeases(ctx, namespace, LabelRecord+"="+recordEscalation)
	if err != nil {
		return nil, err
	}
	var out []Escalation
	for i := range leases {
		if !strings.HasPrefix(leases[i].Name, escalationLeasePrefix) {
			continue
		}
		e, err := escalationOf(&leases[i])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Escalation) int { return a.At.Compare(b.At) })
	return out, nil
}

// ClearEscalation removes a cluster's escalation record, only if it is
// still the record uid names ("" = whichever record exists now: a person
// at a terminal who just listed it). It returns the record removed, or
// ErrNoEscalation when there is none, or a newer one.
func (c *Client) ClearEscalation(ctx context.Context, k KafkaClusterKey, uid string) (Escalation, error) {
	e, found, err := c.GetEscalation(ctx, k)
	if err != nil {
		return Escalation{}, fmt.Errorf("clearing the escalation of %s: %w", k, err)
	}
	if !found || (uid != "" && e.UID != uid) {
		return Escalation{}, fmt.Errorf("clearing the escalation of %s: %w", k, ErrNoEscalation)
	}
	u := types.UID(e.UID)
	err = c.cs.CoordinationV1().Leases(k.Namespace).Delete(ctx, EscalationLeaseName(k), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &u},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return Escalation{}, fmt.Errorf("clearing the escalation of %s: %w", k, ErrNoEscalation)
	}
	if err != nil {
		return Escalation{}, fmt.Errorf("clearing the escalation of %s: %w", k, err)
	}
	return e, nil
}

func escalationOf(l *coordinationv1.Lease) (Escalation, error) {
	a := l.Annotations
	k, err := ParseKafkaClusterKey(a[annoEscCluster])
	if err != nil || k.Namespace != l.Namespace || EscalationLeaseName(k) != l.Name {
		return Escalation{}, fmt.Errorf("escalation record %s/%s: cluster key %q does not match its name", l.Namespace, l.Name, a[annoEscCluster])
	}
	at, _ := time.Parse(time.RFC3339Nano, a[annoEscAt])
	return Escalation{
		Key: k, Pod: a[annoEscPod], ApprovalID: a[annoEscApproval], Reason: a[annoEscReason], At: at,
		Channel: a[annoEscChannel], ThreadTS: a[annoEscThread], UID: string(l.UID),
	}, nil
}
