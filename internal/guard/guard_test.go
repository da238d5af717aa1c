// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package guard

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// fakeChecker answers the self-check per namespace and counts the calls.
type fakeChecker struct {
	mu     sync.Mutex
	states map[string]kube.AdmissionState
	calls  int
}

func (f *fakeChecker) set(ns string, s kube.AdmissionState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states[ns] = s
}

func (f *fakeChecker) CheckAdmission(_ context.Context, ns string) kube.AdmissionCheck {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return kube.AdmissionCheck{Namespace: ns, State: f.states[ns], Detail: "test"}
}

// fakeRepairer records the repairs it ran and whether Resume ran.
type fakeRepairer struct {
	ran     []string
	resumed bool
}

func (f *fakeRepairer) Repair(_ context.Context, req recovery.Request, _ recovery.Reporter) recovery.Summary {
	f.ran = append(f.ran, req.ApprovalID)
	return recovery.Summary{Outcome: recovery.OutcomeRepaired}
}

func (f *fakeRepairer) Resume(context.Context, func(string, string) recovery.Reporter) error {
	f.resumed = true
	return nil
}

func TestGuardRunsRepairsOnlyWhereThePolicyHolds(t *testing.T) {
	tests := []struct {
		name    string
		state   kube.AdmissionState
		accept  bool
		dryRun  bool
		runs    bool
		summary string // part of the refusal, when refused
	}{
		{name: "policy enforced", state: kube.AdmissionEnforced, runs: true},
		{name: "policy missing", state: kube.AdmissionMissing, summary: "Repairs are disabled"},
		{name: "policy missing, acknowledged", state: kube.AdmissionMissing, accept: true, runs: true},
		{name: "self-check failed, even acknowledged", state: kube.AdmissionUnknown, accept: true, summary: "self-check failed"},
		{name: "no RBAC to create pods", state: kube.AdmissionNoAccess, summary: "may not create pods"},
		{name: "dry run writes nothing: runs unguarded", state: kube.AdmissionMissing, dryRun: true, runs: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checker := &fakeChecker{states: map[string]kube.AdmissionState{"kafka": tt.state}}
			inner := &fakeRepairer{}
			logs := &logging.Buffer{}
			g := New(checker, inner, inner, tt.accept, logging.New(logs, "text", 0, logging.NewRedactor()))
			s := g.Repair(t.Context(), recovery.Request{ApprovalID: "a1", Namespace: "kafka", Pod: "broker-0", DryRun: tt.dryRun}, nil)
			if ran := len(inner.ran) == 1; ran != tt.runs {
				t.Fatalf("repair ran = %v, want %v (summary %+v)", ran, tt.runs, s)
			}
			if tt.runs {
				return
			}
			if s.Outcome != recovery.OutcomeGateFailed || !strings.Contains(s.Text, tt.summary) || !strings.Contains(s.Text, "Nothing was changed") {
				t.Errorf("summary %+v, want a refusal saying %q", s, tt.summary)
			}
			if !strings.Contains(logs.String(), "repairs DISABLED") || !strings.Contains(logs.String(), "repair refused") {
				t.Errorf("the log does not say repairs are disabled:\n%s", logs.String())
			}
			if n := g.Notice(); !strings.Contains(n, "Repairs are disabled") {
				t.Errorf("/kafka status notice %q", n)
			}
		})
	}
}

func TestGuardChecksAgainOnEveryApproval(t *testing.T) {
	checker := &fakeChecker{states: map[string]kube.AdmissionState{"kafka": kube.AdmissionEnforced}}
	inner := &fakeRepairer{}
	g := New(checker, inner, inner, false, nil)
	g.Startup(t.Context(), []string{"kafka"})
	if n := g.Notice(); n != "" {
		t.Errorf("notice %q with the policy enforced", n)
	}
	// The policy is removed after startup: the next approval is refused.
	checker.set("kafka", kube.AdmissionMissing)
	if s := g.Repair(t.Context(), recovery.Request{ApprovalID: "a2", Namespace: "kafka"}, nil); s.Outcome != recovery.OutcomeGateFailed {
		t.Fatalf("repair with the policy removed: %+v", s)
	}
	if len(inner.ran) != 0 {
		t.Fatal("the repair ran without the policy")
	}
	// Installed again: the next one runs, without a restart.
	checker.set("kafka", kube.AdmissionEnforced)
	if s := g.Repair(t.Context(), recovery.Request{ApprovalID: "a3", Namespace: "kafka"}, nil); s.Outcome != recovery.OutcomeRepaired {
		t.Fatalf("repair with the policy back: %+v", s)
	}
	if checker.calls != 3 {
		t.Errorf("%d self-checks, want 3 (startup and each approval)", checker.calls)
	}
}

func TestGuardDoesNotResumeUnguarded(t *testing.T) {
	for _, tc := range []struct {
		state   kube.AdmissionState
		accept  bool
		resumed bool
	}{
		{kube.AdmissionEnforced, false, true},
		{kube.AdmissionMissing, false, false},
		{kube.AdmissionMissing, true, true},
	} {
		checker := &fakeChecker{states: map[string]kube.AdmissionState{"a": kube.AdmissionEnforced, "b": tc.state}}
		inner := &fakeRepairer{}
		g := New(checker, inner, inner, tc.accept, nil)
		g.Startup(t.Context(), []string{"a", "b"})
		if err := g.Resume(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if inner.resumed != tc.resumed {
			t.Errorf("state %s, acknowledged %v: resumed %v, want %v", tc.state, tc.accept, inner.resumed, tc.resumed)
		}
		if tc.accept && !strings.Contains(g.Notice(), "WITHOUT the admission policy") {
			t.Errorf("acknowledged: notice %q does not warn", g.Notice())
		}
	}
}

// scriptedChecker answers each namespace's checks in turn from a script,
// repeating the last answer.
type scriptedChecker struct {
	mu     sync.Mutex
	script map[string][]kube.AdmissionState
	calls  map[string]int
}

func (f *scriptedChecker) CheckAdmission(_ context.Context, ns string) kube.AdmissionCheck {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.script[ns]
	i := min(f.calls[ns], len(s)-1)
	f.calls[ns]++
	return kube.AdmissionCheck{Namespace: ns, State: s[i], Detail: "dial tcp 127.0.0.1:6443: connect: connection refused"}
}

// TestGuardUnreachableAPIServerSaysSoAndRetries: an API server that does
// not answer at startup is logged as unreachable (not as "repairs DISABLED
// ... install deploy/'s admission policy", issue 25 item 6), the check is
// retried with back-off until it answers, and interrupted repairs resume
// once it does.
func TestGuardUnreachableAPIServerSaysSoAndRetries(t *testing.T) {
	checker := &scriptedChecker{calls: map[string]int{}, script: map[string][]kube.AdmissionState{
		"kafka": {kube.AdmissionUnreachable, kube.AdmissionUnreachable, kube.AdmissionEnforced},
	}}
	inner := &fakeRepairer{}
	logs := &logging.Buffer{}
	g := New(checker, inner, inner, false, logging.New(logs, "text", 0, logging.NewRedactor()))
	g.SetRetry(time.Millisecond, 5*time.Millisecond)
	g.Startup(t.Context(), []string{"kafka"})
	if err := g.Resume(t.Context(), nil); err != nil { // waits for the retries
		t.Fatal(err)
	}
	if !inner.resumed {
		t.Error("interrupted repairs were not resumed once the API server answered")
	}
	out := logs.String()
	for _, want := range []string{"the API server is unreachable", "retried with back-off", "retrying where the API server did not answer",
		"admission self-check: policy enforced"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, wrong := range []string{"repairs DISABLED", "install deploy/'s admission policy"} {
		if strings.Contains(out, wrong) {
			t.Errorf("an unreachable API server is logged as %q:\n%s", wrong, out)
		}
	}
	if checker.calls["kafka"] != 3 {
		t.Errorf("%d checks, want 3 (two unanswered, then the answer)", checker.calls["kafka"])
	}
	if n := g.Notice(); n != "" {
		t.Errorf("notice %q once the policy is seen enforced", n)
	}
	if v := gauge(t, "", "kafka"); v != 1 {
		t.Errorf("kafkabot_repairs_enabled = %v once the policy is enforced, want 1", v)
	}
}

// TestGuardRetryStopsWithTheContext: a retry loop never outlives the bot.
func TestGuardRetryStopsWithTheContext(t *testing.T) {
	checker := &scriptedChecker{calls: map[string]int{}, script: map[string][]kube.AdmissionState{"kafka": {kube.AdmissionUnreachable}}}
	inner := &fakeRepairer{}
	g := New(checker, inner, inner, false, nil)
	g.SetRetry(time.Millisecond, time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	g.Startup(ctx, []string{"kafka"})
	cancel()
	if err := g.Resume(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if inner.resumed {
		t.Error("resumed while the API server never answered")
	}
	g.SetCluster("far")
	if s := g.Repair(t.Context(), recovery.Request{ApprovalID: "a", Namespace: "kafka"}, nil); s.Outcome != recovery.OutcomeGateFailed ||
		!strings.Contains(s.Text, "could not reach the API server") || strings.Contains(s.Text, "install deploy/") {
		t.Errorf("repair refusal while unreachable: %+v", s)
	}
	if v := gauge(t, "far", "kafka"); v != 0 {
		t.Errorf("kafkabot_repairs_enabled = %v while repairs are disabled, want 0", v)
	}
}

// gauge reads kafkabot_repairs_enabled for cluster and namespace.
func gauge(t *testing.T, cluster, namespace string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.RepairsEnabled.WithLabelValues(cluster, namespace).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
