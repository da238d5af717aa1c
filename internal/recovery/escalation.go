// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// GateNotEscalated refuses every automated repair of a cluster that has an
// escalation record: a repaired broker of it crashed again, and only a
// person may allow automated repairs there again.
const GateNotEscalated = "cluster-not-escalated"

// escalate leaves the cluster's durable "escalated: no automated repairs"
// record after the repaired broker pod crashed again, and returns the
// summary's note about it. A record that cannot be written is said loudly
// too: the bot would go on offering repairs of a cluster it should not
// touch.
func (r *Repairer) escalate(ctx context.Context, req Request, pod *corev1.Pod, ce *CrashAgainError) string {
	key := kube.KafkaClusterKeyOf(pod.Namespace, kube.ClusterOf(pod))
	e, created, err := r.kc.Escalate(ctx, kube.Escalation{
		Key: key, Pod: pod.Name, ApprovalID: req.ApprovalID, Reason: ce.Error(), At: r.opts.Clock.Now(),
		Channel: req.Channel, ThreadTS: req.ThreadTS,
	})
	if err != nil {
		r.opts.Logger.ErrorContext(ctx, "recording an escalation failed", "audit", true, "cluster", key.String(), "error", err)
		return fmt.Sprintf("🚨 could not record that cluster %s is escalated (%v): "+
			"the bot may still offer automated repairs of its brokers; approve none until the cause is found", key, err)
	}
	r.audit(ctx, "cluster escalated", req, slog.String("cluster", key.String()), slog.Bool("new_record", created))
	how := fmt.Sprintf("the Clear escalation button, or `bot escalation clear %s`", key)
	if created {
		return fmt.Sprintf("cluster %s is now escalated: no automated repair of any of its brokers "+
			"until a person clears it (%s)", key, how)
	}
	return fmt.Sprintf("cluster %s was already escalated (after %s, approval %s); it stays so until a person clears it (%s)",
		key, e.Pod, e.ApprovalID, how)
}

// checkNotEscalated refuses when the broker's cluster (or a group that
// overlaps it) has an escalation record.
func checkNotEscalated(ctx context.Context, in *gateInput) error {
	list, err := in.loadEscalations(ctx)
	if err != nil {
		return fmt.Errorf("reading escalation records: %w", err)
	}
	key := KafkaClusterKeyOf(in.snap)
	for _, e := range list {
		if !e.Key.Overlaps(key) {
			continue
		}
		ge := refuse(GateNotEscalated, "cluster %s is escalated since %s: after the repair of %s (approval %s) it crashed again (%s). "+
			"No automated repairs until a person clears it: the Clear escalation button in that repair's thread, or `bot escalation clear %s`",
			e.Key, e.At.UTC().Format("2006-01-02 15:04 MST"), e.Pod, e.ApprovalID, e.Reason, e.Key)
		if in.finding != nil {
			ge.Runbook = in.finding.Remedy.Steps
		}
		return ge
	}
	return nil
}
