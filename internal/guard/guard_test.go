package guard

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
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
