package approval

import (
	"errors"
	"testing"
	"time"
)

func decisionApproval() Approval {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return Approval{ID: "ID1", Namespace: "kafka", Pod: "broker-0", Rule: "r", Action: "a", Channel: "C1",
		IssuedAt: t0, ExpiresAt: t0.Add(30 * time.Minute)}
}

func TestApplyKeelStyle(t *testing.T) {
	a := decisionApproval()
	at := a.IssuedAt.Add(time.Minute)
	click := func(user string, approve bool, required int) Click {
		return Click{Approval: a, User: user, Approve: approve, Required: required, At: at}
	}
	type step struct {
		click              Click
		applied, completed bool
		reason             string
		state              State
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"one approver suffices by default", []step{
			{click("U1", true, 1), true, true, "", StateApproved},
			{click("U2", true, 1), false, false, ReasonAlreadyApproved, StateApproved},
			{click("U2", false, 1), false, false, ReasonAlreadyApproved, StateApproved},
		}},
		{"required 0 means 1", []step{{click("U1", true, 0), true, true, "", StateApproved}}},
		{"two distinct approvers", []step{
			{click("U1", true, 2), true, false, "", StatePending},
			{click("U1", true, 2), false, false, ReasonDuplicate, StatePending},
			{click("U2", true, 2), true, true, "", StateApproved},
			{click("U3", true, 2), false, false, ReasonAlreadyApproved, StateApproved},
		}},
		{"reject first is final", []step{
			{click("U1", false, 1), true, false, "", StateRejected},
			{click("U2", true, 1), false, false, ReasonAlreadyRejected, StateRejected},
			{click("U2", false, 1), false, false, ReasonAlreadyRejected, StateRejected},
		}},
		{"reject while gathering approvals", []step{
			{click("U1", true, 2), true, false, "", StatePending},
			{click("U2", false, 2), true, false, "", StateRejected},
			{click("U3", true, 2), false, false, ReasonAlreadyRejected, StateRejected},
		}},
		{"a replica requiring more raises the bar", []step{
			{click("U1", true, 1), true, true, "", StateApproved},
		}},
		{"the stricter replica's requirement holds", []step{
			{click("U1", true, 2), true, false, "", StatePending},
			{click("U2", true, 3), true, false, "", StatePending},
			{click("U3", true, 1), true, true, "", StateApproved},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := NewRecord(a, tc.steps[0].click.Required)
			for i, s := range tc.steps {
				out, err := Apply(&rec, s.click)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if out.Applied != s.applied || out.Completed != s.completed || out.Reason != s.reason || rec.State() != s.state {
					t.Errorf("step %d (%s approve=%t): applied %t completed %t reason %q state %s; want %t %t %q %s",
						i, s.click.User, s.click.Approve, out.Applied, out.Completed, out.Reason, rec.State(),
						s.applied, s.completed, s.reason, s.state)
				}
			}
		})
	}
}

func TestApplyRefusesAnotherApprovalsRecord(t *testing.T) {
	a := decisionApproval()
	for _, change := range []func(*Record){
		func(r *Record) { r.ID = "ID2" },
		func(r *Record) { r.Pod = "broker-1" },
		func(r *Record) { r.Namespace = "other" },
		func(r *Record) { r.Cluster = "prod-us" }, // same namespace and pod, another cluster
	} {
		rec := NewRecord(a, 1)
		change(&rec)
		out, err := Apply(&rec, Click{Approval: a, User: "U1", Approve: true, At: a.IssuedAt})
		if !errors.Is(err, ErrRecordMismatch) || out.Applied || len(rec.Approvals) != 0 {
			t.Errorf("Apply on a mismatched record = %+v, %v; want ErrRecordMismatch and no change", out, err)
		}
	}
}
