// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// repairLeasePrefix starts the name of every per-broker repair Lease.
const repairLeasePrefix = "kafkabot-repair-"

// maxLeaseNameLen keeps Lease names usable as label values too.
const maxLeaseNameLen = 63

// RepairLeaseName is the name of the repair Lease of a broker pod:
// kafkabot-repair-<pod>, lower-cased, limited to [a-z0-9-] and at most 63
// characters. A name that had to be shortened ends with a hash of the pod
// name, so two long pod names never share a Lease.
func RepairLeaseName(pod string) string {
	return leaseName(repairLeasePrefix, pod)
}

// leaseName is prefix+s made a valid, at most 63-character name; a name
// that had to be changed ends with a hash of s.
func leaseName(prefix, pod string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(pod) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := prefix + strings.Trim(b.String(), "-")
	if len(name) <= maxLeaseNameLen && name == prefix+pod {
		return name
	}
	sum := sha256.Sum256([]byte(pod))
	suffix := "-" + hex.EncodeToString(sum[:4])
	if len(name)+len(suffix) > maxLeaseNameLen {
		name = strings.TrimRight(name[:maxLeaseNameLen-len(suffix)], "-")
	}
	return name + suffix
}

// GetLease reads a Lease, retrying transient errors. A missing Lease is
// returned as the API's NotFound error (check with apierrors.IsNotFound).
func (c *Client) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	lease, err := withRetry(func() (*coordinationv1.Lease, error) {
		return c.cs.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	})
	if err != nil {
		return nil, fmt.Errorf("reading lease %s/%s: %w", namespace, name, err)
	}
	return lease, nil
}

// ListLeases lists the Leases of a namespace matching a label selector.
func (c *Client) ListLeases(ctx context.Context, namespace, selector string) ([]coordinationv1.Lease, error) {
	list, err := withRetry(func() (*coordinationv1.LeaseList, error) {
		return c.cs.CoordinationV1().Leases(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	})
	if err != nil {
		return nil, fmt.Errorf("listing leases %q in %s: %w", selector, namespace, err)
	}
	return list.Items, nil
}

// CreateLease creates a Lease. It fails with the API's AlreadyExists error
// when the Lease exists. When the answer to the create is lost, it reads
// the Lease back and accepts it only if it has the same holder and acquire
// time (that is, it is the one this call wrote); it never re-sends it.
func (c *Client) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	created, err := c.cs.CoordinationV1().Leases(lease.Namespace).Create(ctx, lease, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !mayHaveSucceeded(err) {
		return nil, fmt.Errorf("creating lease %s/%s: %w", lease.Namespace, lease.Name, err)
	}
	existing, getErr := c.GetLease(ctx, lease.Namespace, lease.Name)
	if getErr == nil && SameAcquisition(existing, lease) {
		return existing, nil
	}
	return nil, fmt.Errorf("creating lease %s/%s: %w", lease.Namespace, lease.Name, err)
}

// SameAcquisition reports whether two Leases record the same acquisition:
// the same holder and acquire time. A writer whose answer was lost uses it
// to recognise, in the Lease it reads back, the write it sent.
func SameAcquisition(a, b *coordinationv1.Lease) bool {
	if a.Spec.HolderIdentity == nil || b.Spec.HolderIdentity == nil || *a.Spec.HolderIdentity != *b.Spec.HolderIdentity {
		return false
	}
	return a.Spec.AcquireTime != nil && b.Spec.AcquireTime != nil && a.Spec.AcquireTime.Equal(b.Spec.AcquireTime)
}

// UpdateLease writes a Lease with optimistic concurrency: the update fails
// with the API's Conflict error when the Lease changed since it was read
// (its resourceVersion differs). Conflicts are not retried here: the caller
// must re-read and decide again.
func (c *Client) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	updated, err := withRetry(func() (*coordinationv1.Lease, error) {
		return c.cs.CoordinationV1().Leases(lease.Namespace).Update(ctx, lease, metav1.UpdateOptions{})
	})
	if err != nil {
		return nil, fmt.Errorf("updating lease %s/%s: %w", lease.Namespace, lease.Name, err)
	}
	return updated, nil
}

// DeleteLease deletes a Lease; a missing Lease counts as deleted.
func (c *Client) DeleteLease(ctx context.Context, namespace, name string) error {
	err := retry.OnError(apiBackoff, IsTransient, func() error {
		return c.cs.CoordinationV1().Leases(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting lease %s/%s: %w", namespace, name, err)
	}
	return nil
}

// clusterLeasePrefix starts the name of every per-cluster repair Lease.
const clusterLeasePrefix = "kafkabot-cluster-"

// ClusterLeaseName is the name of the per-cluster repair Lease of a cluster
// key, in the key's namespace: kafkabot-cluster-<cluster>, or
// kafkabot-cluster-all-pods for a namespace whose Kafka pods carry no
// cluster label (the gates then treat them all as one cluster), with a hash
// so no labelled cluster can share it. Lower-cased,
// [a-z0-9-], at most 63 characters; a name that had to be changed ends with
// a hash of the key, so two clusters never share a Lease.
func ClusterLeaseName(key KafkaClusterKey) string {
	cluster := key.Cluster
	if cluster == "" {
		return leaseName(clusterLeasePrefix, "all pods")
	}
	return leaseName(clusterLeasePrefix, cluster)
}
