// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package escalation connects the Slack bot to the per-cluster escalation
// records kept by internal/kube: handlers does not import client-go, so
// this adapter turns *kube.Client into handlers.Escalations.
package escalation

import (
	"context"
	"fmt"

	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Slack lets the Slack bot read and clear escalation records: it adapts
// *kube.Client to handlers.Escalations.
type Slack struct{ c *kube.Client }

// NewSlack returns the adapter for client.
func NewSlack(client *kube.Client) Slack { return Slack{c: client} }

// EscalationFor finds the record that holds the cluster of the approval's
// repair: the one that repair created, else one naming the same pod.
func (a Slack) EscalationFor(ctx context.Context, namespace, pod, approvalID string) (handlers.EscalationRef, bool, error) {
	list, err := a.c.Escalations(ctx, namespace)
	if err != nil {
		return handlers.EscalationRef{}, false, err
	}
	for _, match := range []func(kube.Escalation) bool{
		func(e kube.Escalation) bool { return e.ApprovalID == approvalID },
		func(e kube.Escalation) bool { return e.Pod == pod },
	} {
		for _, e := range list {
			if match(e) {
				return handlers.EscalationRef{KafkaCluster: e.Key.String(), UID: e.UID, Pod: e.Pod}, true, nil
			}
		}
	}
	return handlers.EscalationRef{}, false, nil
}

// ClearEscalation implements handlers.Escalations.
func (a Slack) ClearEscalation(ctx context.Context, kafkaCluster, uid string) (handlers.EscalationRef, error) {
	key, err := kube.ParseKafkaClusterKey(kafkaCluster)
	if err != nil {
		return handlers.EscalationRef{}, err
	}
	if uid == "" {
		return handlers.EscalationRef{}, fmt.Errorf("clearing the escalation of %s: no record named", kafkaCluster)
	}
	e, err := a.c.ClearEscalation(ctx, key, uid)
	if err != nil {
		return handlers.EscalationRef{}, err
	}
	return handlers.EscalationRef{KafkaCluster: e.Key.String(), UID: e.UID, Pod: e.Pod}, nil
}
