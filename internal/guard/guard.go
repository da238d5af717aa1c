// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package guard keeps repairs from running where deploy/'s admission
// policy does not hold (the startup self-check of issue 18).
package guard

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// Checker runs the admission self-check (*kube.Client).
type Checker interface {
	CheckAdmission(ctx context.Context, namespace string) kube.AdmissionCheck
}

// Repairer runs an approved repair (*recovery.Repairer).
type Repairer interface {
	Repair(ctx context.Context, req recovery.Request, rep recovery.Reporter) recovery.Summary
}

// Resumer finishes repairs an earlier process left running (*recovery.Repairer).
type Resumer interface {
	Resume(ctx context.Context, newReporter func(channel, threadTS string) recovery.Reporter) error
}

// Guard keeps repairs from running where deploy/'s admission policy
// does not hold: there a stolen token could create any pod, so the bot
// does not write with it either, unless ACKNOWLEDGE_NO_ADMISSION_POLICY
// says the cluster cannot have the policy. It checks every namespace of
// KAFKA_NAMESPACES at startup, and the repair's namespace again on every
// approval (a server-side dry run, nothing is stored), so a policy removed
// later is noticed and one installed later is picked up without a restart.
type Guard struct {
	checker Checker
	repairs Repairer
	resumer Resumer
	// accept is ACKNOWLEDGE_NO_ADMISSION_POLICY: a missing policy does not
	// disable repairs (a failed check still does).
	accept bool
	log    *slog.Logger

	// retryBase and retryMax bound the back-off of the startup checks
	// retried while the API server does not answer.
	retryBase, retryMax time.Duration

	// cluster names the cluster in the kafkabot_repairs_enabled metric.
	cluster string

	mu     sync.Mutex
	checks map[string]kube.AdmissionCheck // the latest, by namespace
	// settled is closed once no startup check waits for the API server
	// (nil before Startup).
	settled chan struct{}
}

// Default back-off of the startup self-check while the API server does
// not answer.
const (
	DefaultRetryBase = time.Second
	DefaultRetryMax  = time.Minute
)

// New wraps repairs and resumer (either may be the same *recovery.Repairer;
// resumer may be nil). accept is ACKNOWLEDGE_NO_ADMISSION_POLICY.
func New(checker Checker, repairs Repairer, resumer Resumer, accept bool, log *slog.Logger) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{checker: checker, repairs: repairs, resumer: resumer, accept: accept, log: log,
		retryBase: DefaultRetryBase, retryMax: DefaultRetryMax, checks: map[string]kube.AdmissionCheck{}}
}

// SetCluster names the guard's cluster in the kafkabot_repairs_enabled
// metric (CLUSTER_NAME, or the CLUSTERS_FILE name).
func (g *Guard) SetCluster(name string) { g.cluster = name }

// SetRetry sets the back-off of the startup checks retried while the API
// server does not answer (tests; defaults DefaultRetryBase, DefaultRetryMax).
func (g *Guard) SetRetry(base, max time.Duration) { g.retryBase, g.retryMax = base, max }

// allows reports whether a repair may run under check.
func (g *Guard) allows(check kube.AdmissionCheck) bool {
	return check.Enforced() || (g.accept && check.State == kube.AdmissionMissing)
}

// check runs the self-check in namespace, records and logs it.
func (g *Guard) check(ctx context.Context, namespace string) kube.AdmissionCheck {
	c := g.checker.CheckAdmission(ctx, namespace)
	enabled := 0.0
	if g.allows(c) {
		enabled = 1
	}
	metrics.RepairsEnabled.WithLabelValues(g.cluster, namespace).Set(enabled)
	g.mu.Lock()
	prev, seen := g.checks[namespace]
	g.checks[namespace] = c
	g.mu.Unlock()
	if seen && prev.State == c.State {
		return c
	}
	switch {
	case c.Enforced():
		g.log.Info("admission self-check: policy enforced", "namespace", namespace, "policy", kube.AdmissionPolicyName)
	case g.allows(c):
		g.log.Warn("admission self-check: policy NOT enforced; repairs stay enabled because ACKNOWLEDGE_NO_ADMISSION_POLICY=true",
			"namespace", namespace, "state", string(c.State), "detail", c.String())
	case c.State == kube.AdmissionUnreachable:
		g.log.Error("admission self-check: the API server is unreachable, so the policy cannot be checked; repairs stay disabled until it answers",
			"namespace", namespace, "state", string(c.State), "detail", c.String(), "fix", unreachableHint)
	default:
		g.log.Error("admission self-check: repairs DISABLED", "namespace", namespace, "state", string(c.State),
			"detail", c.String(), "fix", Fix(c.State))
	}
	return c
}

// fixHint says how to enable repairs again when the policy is missing.
const fixHint = "install deploy/'s admission policy (Kubernetes 1.30 or later) and label the bot's namespace " +
	"kafkabot.io/bot-namespace=true, or set ACKNOWLEDGE_NO_ADMISSION_POLICY=true to run without it"

// unreachableHint says what happens while the API server does not answer.
const unreachableHint = "check the API server address and the network path to it (KUBECONFIG, or the pod's service account " +
	"and NetworkPolicy); the check is retried with back-off and runs again on every approval"

// Fix says how to enable repairs again after a self-check in state s (the
// log, the refusal on Approve and `bot doctor` say it alike).
func Fix(s kube.AdmissionState) string {
	switch s {
	case kube.AdmissionNoAccess:
		return "create the namespace if it does not exist, and bind deploy/'s Role for Kafka namespaces to the bot's " +
			"ServiceAccount there (the chart's kafkaNamespaces, or a kafka-namespace-<n> component)"
	case kube.AdmissionUnreachable:
		return unreachableHint
	case kube.AdmissionUnknown:
		return "something other than deploy/'s policy refused the probe pod or the request failed (see detail); " +
			"fix that, or " + fixHint
	}
	return fixHint
}

// Startup checks every namespace the bot repairs in. With no
// KAFKA_NAMESPACES it cannot know them: each repair is checked when it is
// approved. A namespace whose check could not reach the API server is
// checked again in the background, with back-off, until the API server
// answers (or ctx ends); Resume waits for that.
func (g *Guard) Startup(ctx context.Context, namespaces []string) {
	settled := make(chan struct{})
	g.mu.Lock()
	g.settled = settled
	g.mu.Unlock()
	if len(namespaces) == 0 {
		g.log.Warn("admission self-check: KAFKA_NAMESPACES is empty, so no namespace is checked at startup; each repair's namespace is checked when it is approved")
		close(settled)
		return
	}
	var pending []string
	for _, ns := range namespaces {
		if g.check(ctx, ns).State == kube.AdmissionUnreachable {
			pending = append(pending, ns)
		}
	}
	if len(pending) == 0 {
		close(settled)
		return
	}
	go g.retry(ctx, pending, settled)
}

// retry checks the namespaces again, with back-off, until none is
// unreachable or ctx ends; then it closes settled.
func (g *Guard) retry(ctx context.Context, pending []string, settled chan struct{}) {
	defer close(settled)
	delay := g.retryBase
	for attempt := 1; len(pending) > 0; attempt++ {
		g.log.Info("admission self-check: retrying where the API server did not answer",
			"namespaces", strings.Join(pending, ","), "in", delay.String(), "attempt", attempt)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, g.retryMax)
		var still []string
		for _, ns := range pending {
			if g.check(ctx, ns).State == kube.AdmissionUnreachable {
				still = append(still, ns)
			}
		}
		pending = still
	}
}

// Repair runs req only where the policy holds (or its absence is
// acknowledged); otherwise it refuses before any write and says why. A dry
// run writes nothing and always runs.
func (g *Guard) Repair(ctx context.Context, req recovery.Request, rep recovery.Reporter) recovery.Summary {
	if req.DryRun {
		return g.repairs.Repair(ctx, req, rep)
	}
	c := g.check(ctx, req.Namespace)
	if g.allows(c) {
		return g.repairs.Repair(ctx, req, rep)
	}
	g.log.Error("repair refused: repairs are disabled by the admission self-check", "audit", true,
		"approval_id", req.ApprovalID, "namespace", req.Namespace, "pod", req.Pod, "approver", req.Approver, "state", string(c.State))
	return recovery.Summary{
		Outcome: recovery.OutcomeGateFailed,
		Text: "⛔ Repairs are disabled: " + c.String() + ". Nothing was changed. " +
			"To enable them, " + Fix(c.State) + ". Until then, follow the finding's manual steps.",
	}
}

// Resume finishes repairs an earlier process left running, unless a
// namespace checked at startup is unguarded: then it leaves them (their
// Leases stay "running") for a process that may write.
func (g *Guard) Resume(ctx context.Context, newReporter func(channel, threadTS string) recovery.Reporter) error {
	if g.resumer == nil {
		return nil
	}
	g.mu.Lock()
	settled := g.settled
	g.mu.Unlock()
	if settled != nil {
		// Decide on the API server's answer, not on its silence.
		select {
		case <-settled:
		case <-ctx.Done():
			return nil
		}
	}
	g.mu.Lock()
	var blocked []string
	for ns, c := range g.checks {
		if !g.allows(c) {
			blocked = append(blocked, ns)
		}
	}
	g.mu.Unlock()
	if len(blocked) > 0 {
		slices.Sort(blocked)
		g.log.Error("not resuming interrupted repairs: repairs are disabled by the admission self-check", "namespaces", strings.Join(blocked, ","))
		return nil
	}
	return g.resumer.Resume(ctx, newReporter)
}

// Notice is /kafka status's line about repairs: "" when every checked
// namespace is guarded.
func (g *Guard) Notice() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	namespaces := make([]string, 0, len(g.checks))
	for ns := range g.checks {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	var lines []string
	for _, ns := range namespaces {
		c := g.checks[ns]
		switch {
		case c.Enforced():
		case g.allows(c):
			lines = append(lines, "⚠️ Repairs run WITHOUT the admission policy (ACKNOWLEDGE_NO_ADMISSION_POLICY=true): "+c.String())
		default:
			lines = append(lines, "⛔ Repairs are disabled: "+c.String())
		}
	}
	return strings.Join(lines, "\n")
}
