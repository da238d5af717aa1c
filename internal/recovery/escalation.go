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
// record after the repaired broker pod crashed again, and says so in the
// summary. A record that cannot be written is said loudly too: the bot
// would go on offering repairs of a cluster it should not touch.
func (run *repairRun) escalate(ctx context.Context, pod *corev1.Pod, ce *CrashAgainError) {
	key := kube.ClusterKeyOf(pod.Namespace, kube.ClusterOf(pod))
	e, created, err := run.r.kc.Escalate(ctx, kube.Escalation{
		Key: key, Pod: pod.Name, ApprovalID: run.req.ApprovalID, Reason: ce.Error(), At: run.r.opts.Clock.Now(),
		Channel: run.req.Channel, ThreadTS: run.req.ThreadTS,
	})
	if err != nil {
		run.notes = append(run.notes, fmt.Sprintf("🚨 could not record that cluster %s is escalated (%v): "+
			"the bot may still offer automated repairs of its brokers; approve none until the cause is found", key, err))
		run.r.opts.Logger.ErrorContext(ctx, "recording an escalation failed", "audit", true, "cluster", key.String(), "error", err)
		return
	}
	how := fmt.Sprintf("the Clear escalation button, or `bot escalation clear %s`", key)
	if created {
		run.notes = append(run.notes, fmt.Sprintf("cluster %s is now escalated: no automated repair of any of its brokers "+
			"until a person clears it (%s)", key, how))
	} else {
		run.notes = append(run.notes, fmt.Sprintf("cluster %s was already escalated (after %s, approval %s); it stays so until a person clears it (%s)",
			key, e.Pod, e.ApprovalID, how))
	}
	run.r.audit(ctx, "cluster escalated", run.req, slog.String("cluster", key.String()), slog.Bool("new_record", created))
}

// checkNotEscalated refuses when the broker's cluster (or a group that
// overlaps it) has an escalation record.
func checkNotEscalated(ctx context.Context, in *gateInput) error {
	list, err := in.loadEscalations(ctx)
	if err != nil {
		return fmt.Errorf("reading escalation records: %w", err)
	}
	key := ClusterKeyOf(in.snap)
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
