// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/approval"
)

var (
	decisionKey  = []byte("kube-test-decision-record-key-0123456789abcdef")
	decisionTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

func decisionApproval(id string) approval.Approval {
	return approval.Approval{ID: id, KubeCluster: "eu", Namespace: "kafka", Pod: "b-0", ExpiresAt: decisionTime.Add(time.Hour)}
}

func decisionClick(a approval.Approval, user string, approve bool, required int) approval.Click {
	return approval.Click{Approval: a, User: user, Approve: approve, Required: required, At: decisionTime}
}

// TestDecisionSharedAcrossReplicas: two replicas (two Clients on one API
// server): a Reject recorded by one refuses the other's Approve, and a
// retried completing click completes once.
func TestDecisionSharedAcrossReplicas(t *testing.T) {
	cs := fake.NewClientset()
	r1, r2 := New(cs, Options{}).Decisions(decisionKey), New(cs, Options{}).Decisions(decisionKey)
	a := decisionApproval("ABCDEF")
	out, err := r1.Decide(context.Background(), decisionClick(a, "U1", false, 1))
	if err != nil || !out.Applied {
		t.Fatalf("reject: %+v %v", out, err)
	}
	out, err = r2.Decide(context.Background(), decisionClick(a, "U2", true, 1))
	if err != nil || out.Applied || out.Completed {
		t.Errorf("approve after reject on another replica: %+v %v", out, err)
	}
	a.ID = "GHIJKL"
	out, _ = r1.Decide(context.Background(), decisionClick(a, "U2", true, 1))
	dup, _ := r2.Decide(context.Background(), decisionClick(a, "U2", true, 1))
	if !out.Completed || dup.Completed || dup.Applied {
		t.Errorf("retry of a completing click completed twice: first %+v, retry %+v", out, dup)
	}
}

// TestContainment4_DecisionRecordsAreSigned (review finding 4): every
// record the store writes carries a MAC keyed with APPROVAL_SECRET over
// the whole record, and the store decides nothing on a record whose MAC is
// missing (written by anyone with Lease write access, or by the previous
// version: the upgrade story), wrong (edited, or signed with another
// secret), or that sits under another approval's name (a signed record
// copied from approval A to approval B). A store without a key decides
// nothing.
func TestContainment4_DecisionRecordsAreSigned(t *testing.T) {
	ctx := context.Background()
	a := decisionApproval("ABCDEF")
	leaseOf := func(t *testing.T, cs *fake.Clientset, name string) *coordinationv1.Lease {
		l, err := cs.CoordinationV1().Leases("kafka").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	put := func(t *testing.T, cs *fake.Clientset, l *coordinationv1.Lease) {
		l.ResourceVersion = ""
		if err := cs.CoordinationV1().Leases("kafka").Delete(ctx, l.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if _, err := cs.CoordinationV1().Leases("kafka").Create(ctx, l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// firstVote records U1's approval (1 of 2) with the real store.
	firstVote := func(t *testing.T, cs *fake.Clientset) *coordinationv1.Lease {
		if _, err := New(cs, Options{}).Decisions(decisionKey).Decide(ctx, decisionClick(a, "U1", true, 2)); err != nil {
			t.Fatal(err)
		}
		return leaseOf(t, cs, DecisionLeaseName(a.ID))
	}
	tests := []struct {
		name   string
		key    []byte
		tamper func(t *testing.T, cs *fake.Clientset)
		want   error
	}{
		{"signed by this bot: the second approver completes", decisionKey, func(t *testing.T, cs *fake.Clientset) { firstVote(t, cs) }, nil},
		{"the vote edited to name another approver", decisionKey, func(t *testing.T, cs *fake.Clientset) {
			l := firstVoteRecord(t, firstVote(t, cs))
			l.rec.Approvals[0].User = "U3"
			put(t, cs, l.store())
		}, approval.ErrUnsignedRecord},
		{"a vote added", decisionKey, func(t *testing.T, cs *fake.Clientset) {
			l := firstVoteRecord(t, firstVote(t, cs))
			l.rec.Approvals = append(l.rec.Approvals, approval.Vote{User: "U3", At: decisionTime})
			put(t, cs, l.store())
		}, approval.ErrUnsignedRecord},
		{"the MAC removed (as the previous version wrote records)", decisionKey, func(t *testing.T, cs *fake.Clientset) {
			l := firstVote(t, cs)
			delete(l.Annotations, AnnotationDecisionMAC)
			put(t, cs, l)
		}, approval.ErrUnsignedRecord},
		{"signed with another APPROVAL_SECRET", []byte("another-approval-secret-0123456789abcdefghij"), func(t *testing.T, cs *fake.Clientset) { firstVote(t, cs) },
			approval.ErrUnsignedRecord},
		{"a signed record of another approval copied under this one's name", decisionKey, func(t *testing.T, cs *fake.Clientset) {
			other := a
			other.ID = "ZZZZZZ"
			if _, err := New(cs, Options{}).Decisions(decisionKey).Decide(ctx, decisionClick(other, "U1", true, 2)); err != nil {
				t.Fatal(err)
			}
			l := leaseOf(t, cs, DecisionLeaseName(other.ID))
			l.Name = DecisionLeaseName(a.ID)
			put(t, cs, l)
		}, approval.ErrUnsignedRecord},
		{"no key", nil, func(*testing.T, *fake.Clientset) {}, approval.ErrWeakSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			tt.tamper(t, cs)
			out, err := New(cs, Options{}).Decisions(tt.key).Decide(ctx, decisionClick(a, "U2", true, 2))
			if tt.want == nil {
				if err != nil || !out.Completed {
					t.Fatalf("second approver on a signed record: %+v, %v; want completed", out, err)
				}
				return
			}
			if !errors.Is(err, tt.want) || out.Applied || out.Completed {
				t.Fatalf("Decide = %+v, %v; want nothing decided and %v", out, err, tt.want)
			}
		})
	}
}

// storedRecord is a decision Lease with its record decoded, for tampering.
type storedRecord struct {
	lease *coordinationv1.Lease
	rec   approval.Record
}

func firstVoteRecord(t *testing.T, l *coordinationv1.Lease) *storedRecord {
	t.Helper()
	s := &storedRecord{lease: l}
	if err := json.Unmarshal([]byte(l.Annotations[annoDecision]), &s.rec); err != nil {
		t.Fatal(err)
	}
	return s
}

// store writes the (changed) record back into the Lease, keeping the MAC
// it had: what someone without the secret can do.
func (s *storedRecord) store() *coordinationv1.Lease {
	raw, _ := json.Marshal(s.rec)
	s.lease.Annotations[annoDecision] = string(raw)
	return s.lease
}

// dropAnswerOnce makes the fake API server's Lease writes optimistic, as
// the real one's are (an update must carry the stored resourceVersion,
// which each write bumps), and makes it apply the next update of the Lease
// called name and then lose its answer (a timeout), as a dropped
// connection does.
func dropAnswerOnce(cs *fake.Clientset, name string) *atomic.Bool {
	var dropped atomic.Bool
	gvr := coordinationv1.SchemeGroupVersion.WithResource("leases")
	cs.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		l := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		cur, err := cs.Tracker().Get(gvr, l.Namespace, l.Name)
		if err != nil {
			return true, nil, err
		}
		stored := cur.(*coordinationv1.Lease).ResourceVersion
		if l.ResourceVersion != stored {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), l.Name, fmt.Errorf("resourceVersion %s, stored %s", l.ResourceVersion, stored))
		}
		n, _ := strconv.Atoi(stored)
		l.ResourceVersion = strconv.Itoa(n + 1)
		if err := cs.Tracker().Update(gvr, l, l.Namespace); err != nil {
			return true, nil, err
		}
		if l.Name == name && !dropped.Swap(true) {
			return true, nil, apierrors.NewTimeoutError("the answer was lost", 1)
		}
		return true, l, nil
	})
	return &dropped
}

// TestContainment4_LostAnswerToTheCompletingDecisionUpdate (review finding
// 14, lost responses): the API server applies the click that completes the
// approval but its answer is lost. The store re-reads the record, finds its
// own vote (same user, same time) and reports the click as the completing
// one; before, the retry conflicted, the re-read said "already approved"
// and nothing ran. Another click of the same user (a new time) is still
// refused as already approved.
func TestContainment4_LostAnswerToTheCompletingDecisionUpdate(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	store := New(cs, Options{}).Decisions(decisionKey)
	a := decisionApproval("ABCDEF")
	if _, err := store.Decide(ctx, decisionClick(a, "U1", true, 2)); err != nil {
		t.Fatal(err)
	}
	dropped := dropAnswerOnce(cs, DecisionLeaseName(a.ID))
	out, err := store.Decide(ctx, decisionClick(a, "U2", true, 2))
	if !dropped.Load() {
		t.Fatal("the fake did not drop an answer: the test proves nothing")
	}
	if err != nil || !out.Applied || !out.Completed {
		t.Fatalf("the completing click whose answer was lost: %+v, %v; want applied and completed", out, err)
	}
	again := decisionClick(a, "U2", true, 2)
	again.At = again.At.Add(time.Second)
	if out, err := store.Decide(ctx, again); err != nil || out.Completed || out.Reason != approval.ReasonAlreadyApproved {
		t.Errorf("a later click: %+v, %v; want refused as already approved", out, err)
	}
}
