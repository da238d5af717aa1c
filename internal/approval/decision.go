// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package approval

import (
	"errors"
	"fmt"
	"time"
)

// A Record is the durable record of the decisions taken on one approval:
// who approved it, who rejected it, and how many distinct approvers it
// needs. Every click on every bot replica applies itself to the one Record
// of its approval (stored in the cluster, see kube.DecisionStore) before
// the bot acts, so a Reject on one replica stops an Approve on another.
//
// The rules (Apply) are Keel-style: a Record is pending until Required
// distinct approvers approved it, then approved; a Reject while it is
// pending makes it rejected; an approved or rejected Record is final.
type Record struct {
	ID string `json:"id"`
	// KubeCluster is the Kubernetes cluster of the approval ("" for a
	// single-cluster bot's tokens without one).
	KubeCluster string    `json:"cluster,omitempty"`
	Namespace   string    `json:"namespace"`
	Pod         string    `json:"pod"`
	Required    int       `json:"required"`
	Approvals   []Vote    `json:"approvals,omitempty"`
	Rejected    *Vote     `json:"rejected,omitempty"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// Vote is one person's click.
type Vote struct {
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

// State is where a Record stands.
type State string

// The states of a Record.
const (
	StatePending  State = "pending"
	StateApproved State = "approved"
	StateRejected State = "rejected"
)

// State reports whether r is pending, approved or rejected.
func (r *Record) State() State {
	switch {
	case r.Rejected != nil:
		return StateRejected
	case len(r.Approvals) >= max(r.Required, 1):
		return StateApproved
	}
	return StatePending
}

// Approvers are the users who approved, in order.
func (r *Record) Approvers() []string {
	out := make([]string, len(r.Approvals))
	for i, v := range r.Approvals {
		out[i] = v.User
	}
	return out
}

// Click is one press of Approve or Reject, to be applied to the Record of
// its approval.
type Click struct {
	Approval Approval
	User     string
	Approve  bool
	// Required is the number of distinct approvers this replica requires
	// (REQUIRED_APPROVALS); a Record keeps the largest any click asked for.
	Required int
	At       time.Time
	// Counts says whether a user's stored vote still counts: an approver
	// now (of the approval's cluster) and, when self-approval is
	// forbidden, not the requester. Votes that no longer count are dropped
	// from the Record by every Approve (Outcome.Dropped lists them), so an
	// approver removed since their click, or a vote taken under another
	// replica's settings, never completes an approval. Nil counts every
	// vote (tests and single-purpose tools only: the bot always sets it).
	Counts func(user string) bool
}

// Refusal reasons of a click that changes nothing.
const (
	ReasonAlreadyApproved = "already-approved"
	ReasonAlreadyRejected = "already-rejected"
	ReasonDuplicate       = "already-approved-by-you"
)

// Outcome is what applying a Click did.
type Outcome struct {
	// Record is the record after the click (or as it was, when refused).
	Record Record
	// Applied is false when the click changed nothing; Reason says why.
	Applied bool
	Reason  string
	// Completed is true for the one click that made the Record approved:
	// the bot acts on this click, and on no other.
	Completed bool
	// Dropped are the stored votes this Approve dropped because they no
	// longer count (see Click.Counts).
	Dropped []Vote
}

// ErrRecordMismatch means a stored Record is not the record of the
// clicked approval (another approval's, or altered): nothing is decided.
var ErrRecordMismatch = errors.New("decision record does not match the approval")

// NewRecord is the empty Record of approval a.
func NewRecord(a Approval, required int) Record {
	return Record{ID: a.ID, KubeCluster: a.KubeCluster, Namespace: a.Namespace, Pod: a.Pod, Required: max(required, 1), ExpiresAt: a.ExpiresAt}
}

// Apply applies c to r, Keel-style (see Record). It never changes a final
// Record, counts each approver once, and reports the click that completes
// the approval. It refuses, with ErrRecordMismatch, a Record of another
// approval.
func Apply(r *Record, c Click) (Outcome, error) {
	a := c.Approval
	if r.ID != a.ID || r.KubeCluster != a.KubeCluster || r.Namespace != a.Namespace || r.Pod != a.Pod {
		return Outcome{Record: *r}, fmt.Errorf("%w: record %s of %s/%s/%s, approval %s of %s/%s/%s",
			ErrRecordMismatch, r.ID, r.KubeCluster, r.Namespace, r.Pod, a.ID, a.KubeCluster, a.Namespace, a.Pod)
	}
	switch r.State() {
	case StateApproved:
		return Outcome{Record: *r, Reason: ReasonAlreadyApproved}, nil
	case StateRejected:
		return Outcome{Record: *r, Reason: ReasonAlreadyRejected}, nil
	}
	if !c.Approve {
		r.Rejected = &Vote{User: c.User, At: c.At.UTC()}
		return Outcome{Record: *r, Applied: true}, nil
	}
	dropped := r.dropVotes(c.Counts)
	for _, v := range r.Approvals {
		if v.User == c.User {
			return Outcome{Record: *r, Reason: ReasonDuplicate, Dropped: dropped}, nil
		}
	}
	r.Required = max(r.Required, c.Required, 1)
	r.Approvals = append(r.Approvals, Vote{User: c.User, At: c.At.UTC()})
	return Outcome{Record: *r, Applied: true, Completed: r.State() == StateApproved, Dropped: dropped}, nil
}

// Holds reports whether r already holds c itself: its user's vote (or
// rejection) at c's time. A store whose write of c was applied but whose
// answer was lost finds it so when it reads the record again.
func (r *Record) Holds(c Click) bool {
	at := c.At.UTC()
	if !c.Approve {
		return r.Rejected != nil && r.Rejected.User == c.User && r.Rejected.At.Equal(at)
	}
	for _, v := range r.Approvals {
		if v.User == c.User && v.At.Equal(at) {
			return true
		}
	}
	return false
}

// dropVotes removes the approvals whose users no longer count and returns
// them (none when counts is nil).
func (r *Record) dropVotes(counts func(user string) bool) []Vote {
	if counts == nil {
		return nil
	}
	var kept, dropped []Vote
	for _, v := range r.Approvals {
		if counts(v.User) {
			kept = append(kept, v)
		} else {
			dropped = append(dropped, v)
		}
	}
	r.Approvals = kept
	return dropped
}
