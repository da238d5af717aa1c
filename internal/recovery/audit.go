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

// Event reasons recorded on the broker pod.
const (
	EventReasonStep     = "KafkabotRepairStep"
	EventReasonFinished = "KafkabotRepairFinished"
)

// audit writes one structured audit line: who asked, who approved, which
// pod, which plan, and what happened (in attrs).
func (r *Repairer) audit(ctx context.Context, msg string, req Request, attrs ...slog.Attr) {
	base := []slog.Attr{
		slog.Bool("audit", true),
		slog.String("approval_id", req.ApprovalID),
		slog.String("approver", req.Approver),
		slog.String("requester", req.Requester),
		slog.String("namespace", req.Namespace),
		slog.String("pod", req.Pod),
		slog.String("pod_uid", req.PodUID),
		slog.String("rule", req.Rule),
		slog.String("action", req.Action),
		slog.String("target", req.Target),
		slog.String("bot", r.opts.Identity),
	}
	r.opts.Logger.LogAttrs(ctx, slog.LevelInfo, msg, append(base, attrs...)...)
}

// auditReporter passes a repair's progress on to the people's Reporter and
// records it: an audit log line for every report and, once the repair
// holds its Lease (from the first write on), the step reached in the Lease
// and a Kubernetes Event on the broker pod. Recording failures are logged;
// they never stop a repair.
type auditReporter struct {
	next Reporter
	run  *repairRun
}

// Report implements Reporter.
func (a *auditReporter) Report(ctx context.Context, p Progress) {
	a.next.Report(ctx, p)
	run := a.run
	run.r.audit(ctx, "repair step", run.req, slog.String("step", p.Step), slog.String("status", string(p.Status)),
		slog.String("detail", p.Detail))
	if run.leases.broker == nil || run.kind == dryRunPlan {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if p.Status == StepStarted {
		if err := run.leases.broker.SetStep(ctx, p.Step); err != nil {
			run.r.opts.Logger.WarnContext(ctx, "recording the step in the repair lease", "pod", run.req.Pod, "error", err)
		}
		return
	}
	eventType := corev1.EventTypeNormal
	if p.Status == StepFailed {
		eventType = corev1.EventTypeWarning
	}
	a.event(ctx, eventType, EventReasonStep, fmt.Sprintf("%s: %s. %s", p.Step, p.Status, firstLine(p.Detail)))
}

// Planned implements PlanReporter when the people's Reporter does.
func (a *auditReporter) Planned(ctx context.Context, steps []string) {
	if pr, ok := a.next.(PlanReporter); ok {
		pr.Planned(ctx, steps)
	}
}

// Finish implements Reporter.
func (a *auditReporter) Finish(ctx context.Context, s Summary) {
	if a.run.leases.broker != nil && a.run.kind != dryRunPlan {
		eventType := corev1.EventTypeNormal
		if s.Outcome != OutcomeRepaired {
			eventType = corev1.EventTypeWarning
		}
		a.event(context.WithoutCancel(ctx), eventType, EventReasonFinished, fmt.Sprintf("%s: %s", s.Outcome, s.Text))
	}
	a.next.Finish(ctx, s)
}

func (a *auditReporter) event(ctx context.Context, eventType, reason, msg string) {
	run := a.run
	err := run.r.kc.RecordPodEvent(ctx, kube.PodEvent{
		Pod: run.brokerRef(), Type: eventType, Reason: reason, Instance: run.r.opts.Identity, Time: run.r.opts.Clock.Now(),
		Message: fmt.Sprintf("%s (approval %s by %s)", msg, run.req.ApprovalID, orUnknown(run.req.Approver)),
	})
	if err != nil {
		run.r.opts.Logger.WarnContext(ctx, "recording a repair event", "pod", run.req.Pod, "error", err)
	}
}

func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
