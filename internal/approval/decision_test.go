// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package approval

import (
	"encoding/json"
	"errors"
	"strings"
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
		func(r *Record) { r.KubeCluster = "prod-us" }, // same namespace and pod, another cluster
	} {
		rec := NewRecord(a, 1)
		change(&rec)
		out, err := Apply(&rec, Click{Approval: a, User: "U1", Approve: true, At: a.IssuedAt})
		if !errors.Is(err, ErrRecordMismatch) || out.Applied || len(rec.Approvals) != 0 {
			t.Errorf("Apply on a mismatched record = %+v, %v; want ErrRecordMismatch and no change", out, err)
		}
	}
}

// TestContainment4_ApplyCountsOnlyVotesThatCountNow (review finding 5):
// an Approve drops stored votes of users Click.Counts refuses (no longer
// approvers, or the requester) before counting, and reports them.
func TestContainment4_ApplyCountsOnlyVotesThatCountNow(t *testing.T) {
	a := decisionApproval()
	at := a.IssuedAt.Add(time.Minute)
	current := map[string]bool{"U1": true, "U3": true}
	counts := func(u string) bool { return current[u] }
	r := NewRecord(a, 2)
	r.Approvals = []Vote{{User: "U2", At: at}} // U2 was an approver then
	out, err := Apply(&r, Click{Approval: a, User: "U1", Approve: true, Required: 2, At: at, Counts: counts})
	if err != nil || !out.Applied || out.Completed || len(out.Dropped) != 1 || out.Dropped[0].User != "U2" {
		t.Fatalf("U1 after U2's stale vote: %+v, %v; want applied, 1 of 2, U2 dropped", out, err)
	}
	if got := r.Approvers(); len(got) != 1 || got[0] != "U1" {
		t.Errorf("record approvers %v, want [U1]", got)
	}
	out, err = Apply(&r, Click{Approval: a, User: "U1", Approve: true, Required: 2, At: at, Counts: counts})
	if err != nil || out.Applied || out.Reason != ReasonDuplicate {
		t.Errorf("U1 again: %+v, %v; want a duplicate", out, err)
	}
	out, err = Apply(&r, Click{Approval: a, User: "U3", Approve: true, Required: 2, At: at, Counts: counts})
	if err != nil || !out.Completed || len(out.Dropped) != 0 {
		t.Errorf("U3: %+v, %v; want completed with nothing dropped", out, err)
	}
}

// TestContainment4_SealedRecordRoundTrip: a sealed Record opens with its
// key only, and any change to its body breaks the MAC.
func TestContainment4_SealedRecordRoundTrip(t *testing.T) {
	key := []byte("approval-test-record-key-0123456789abcdefgh")
	r := NewRecord(decisionApproval(), 2)
	r.Approvals = []Vote{{User: "U1", At: decisionApproval().IssuedAt}}
	body, mac, err := SealRecord(key, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := OpenRecord(key, body, mac); err != nil || got.Approvers()[0] != "U1" {
		t.Fatalf("OpenRecord = %+v, %v", got, err)
	}
	for name, c := range map[string]struct {
		key       []byte
		body, mac string
	}{
		"no MAC":      {key, body, ""},
		"changed":     {key, body[:len(body)-1] + " }", mac},
		"another key": {[]byte("another-test-record-key-0123456789abcdefghij"), body, mac},
		"garbage MAC": {key, body, "not base64!"},
	} {
		if _, err := OpenRecord(c.key, c.body, c.mac); !errors.Is(err, ErrUnsignedRecord) {
			t.Errorf("%s: OpenRecord error %v, want ErrUnsignedRecord", name, err)
		}
	}
	if _, _, err := SealRecord([]byte("short"), r); !errors.Is(err, ErrWeakSecret) {
		t.Errorf("a weak key sealed a record: %v", err)
	}
}

// TestStoredRecordDecodes: a decision record stored by an earlier version
// (the field was then called Cluster; its wire name "cluster" is kept)
// decodes with its Kubernetes cluster, and encodes back under that name.
func TestStoredRecordDecodes(t *testing.T) {
	stored := `{"id":"01JDZ7Q3K6V5","cluster":"prod-eu","namespace":"kafka","pod":"broker-0","required":2,` +
		`"approvals":[{"user":"U0LEAD","at":"2026-11-29T17:00:00Z"}],"expiresAt":"2026-11-29T17:30:00Z"}`
	var r Record
	if err := json.Unmarshal([]byte(stored), &r); err != nil {
		t.Fatal(err)
	}
	if r.KubeCluster != "prod-eu" || r.Pod != "broker-0" || r.Required != 2 || len(r.Approvals) != 1 {
		t.Fatalf("decoded %+v", r)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"cluster":"prod-eu"`) {
		t.Errorf("encoded %s, want the wire name cluster", out)
	}
}
