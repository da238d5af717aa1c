// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// signRecordV1 signs a Lease's record as the version before issue 27 did:
// domain v1, without the Kubernetes cluster's name.
func signRecordV1(key []byte, lease *coordinationv1.Lease) {
	m := hmac.New(sha256.New, key)
	write := func(s string) {
		m.Write([]byte(strconv.Itoa(len(s))))
		m.Write([]byte{':'})
		m.Write([]byte(s))
	}
	write("kafkabot repair lease record v1")
	write(lease.Namespace)
	write(lease.Name)
	for _, f := range recordFields {
		write(f)
		write(lease.Annotations[f])
	}
	lease.Annotations[annoRecordMAC] = hex.EncodeToString(m.Sum(nil))
}

// runningLeaseOf is a running repair Lease of pod for another approval, as
// this bot would write it (signed), for the forgeries to change.
func runningLeaseOf(pod, uid string) *coordinationv1.Lease {
	other := request()
	other.Pod, other.PodUID, other.ApprovalID, other.Approver = pod, uid, "appr-planted", "U0PLANTED"
	lock := &repairLock{identity: "bot-x", duration: 5*time.Minute + leaseSlack, key: testRecordKey}
	l := lock.leaseFor(other, "foobar", map[string]string{}, testStart)
	l.Annotations[annoStep] = "Give the debug pod its go"
	return l
}

// TestContainment5_UnverifiedRunningLeaseExpires (review finding 12): a
// running repair Lease whose record does not verify (forged, signed before
// an APPROVAL_SECRET rotation, or written by the previous version, whose
// MAC did not cover the cluster: the upgrade story) is never resumed; it
// blocks new repairs of its broker, or of its cluster, with a loud message
// naming the time it expires, and after that bound (the longest a genuine
// repair holds its Lease, counted from the earlier of its recorded start
// and when the bot first saw it) it is taken over with a loud warning
// instead of blocking for ever.
func TestContainment5_UnverifiedRunningLeaseExpires(t *testing.T) {
	tests := []struct {
		name  string
		pod   string // whose Lease: the broker's own, or a peer's of its cluster
		uid   string
		forge func(l *coordinationv1.Lease)
	}{
		{"forged on the broker: no MAC", brokerName, brokerUID, func(l *coordinationv1.Lease) { delete(l.Annotations, annoRecordMAC) }},
		{"forged on the broker, its start recorded in the future", brokerName, brokerUID, func(l *coordinationv1.Lease) {
			delete(l.Annotations, annoRecordMAC)
			l.Annotations[annoStartedAt] = testStart.Add(24 * time.Hour).Format(time.RFC3339)
		}},
		{"signed before an APPROVAL_SECRET rotation", brokerName, brokerUID, func(l *coordinationv1.Lease) {
			signRecord([]byte("the-previous-approval-secret-0123456789"), "", l)
		}},
		{"written by the previous version (MAC without the cluster)", brokerName, brokerUID, func(l *coordinationv1.Lease) {
			signRecordV1(testRecordKey, l)
		}},
		{"forged on another broker of the cluster", "foobar-kafka-broker-1", "uid-broker-1", func(l *coordinationv1.Lease) {
			delete(l.Annotations, annoRecordMAC)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := seedCluster(t)
			l := runningLeaseOf(tt.pod, tt.uid)
			tt.forge(l)
			c.extra = append(c.extra, runtime.Object(l))
			h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})

			th := &threads{}
			if err := h.r.Resume(context.Background(), th.newReporter); err != nil {
				t.Fatal(err)
			}
			if len(th.reps) != 0 || len(h.writes()) != 0 {
				t.Fatalf("Resume acted on a record that does not verify: threads %d, writes %v", len(th.reps), h.writes())
			}

			s := h.r.Repair(context.Background(), request(), &recorder{})
			bound := h.r.lock.unverifiedBound()
			until := testStart.Add(bound).UTC().Format(time.RFC3339)
			if s.Outcome != OutcomeGateFailed || !strings.Contains(s.Text, "does not match its record") && !strings.Contains(s.Text, "carries no") ||
				!strings.Contains(s.Text, "blocks repairs until "+until) {
				t.Errorf("within the bound: outcome %s, want a refusal naming the unverified record and %s:\n%s", s.Outcome, until, s.Text)
			}
			assertNoPodWrites(t, h)

			h.clock.Step(bound + time.Minute)
			setBrokerKafka(t, h, false, 8) // it crashed again meanwhile
			s = awaitSummary(t, repairWithin(t, h, &recorder{}))
			if s.Outcome != OutcomeRepaired {
				t.Fatalf("after the bound: outcome %s, want repaired:\n%s", s.Outcome, s.Text)
			}
			if !strings.Contains(s.Text, "it blocked repairs until "+until+" and is taken over now") {
				t.Errorf("no loud warning about the expired unverified lease:\n%s", s.Text)
			}
		})
	}
}

// TestContainment7_RepairRecordMACCoversTheCluster (review finding 11):
// APPROVAL_SECRET is shared by every served cluster, so the repair record's
// MAC covers the Kubernetes cluster's name: a signed Lease copied from
// cluster eu into cluster us does not verify there, and us's Resume neither
// writes nor posts for it; in eu the same Lease is resumed.
func TestContainment7_RepairRecordMACCoversTheCluster(t *testing.T) {
	for _, tt := range []struct {
		served string
		resume bool
	}{{"us", false}, {"eu", true}} {
		t.Run("served as "+tt.served, func(t *testing.T) {
			c := seedCluster(t)
			obj := leftLease(t, "bot-dead", testStart.Add(-time.Hour), "Create debug pod")
			signRecord(testRecordKey, "eu", leaseObj(obj)) // written in cluster eu
			c.extra = append(c.extra, *obj)
			h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
			h.r.lock.cluster = tt.served
			th := &threads{}
			if err := resumeStepping(t, h, th); err != nil {
				t.Fatal(err)
			}
			if !tt.resume {
				if len(th.reps) != 0 || len(h.writes()) != 0 {
					t.Fatalf("cluster us acted on a Lease signed in eu: threads %d, writes %v", len(th.reps), h.writes())
				}
				if !strings.Contains(h.audit.String(), "its record does not verify") {
					t.Errorf("no log line about the unverified record:\n%s", h.audit.String())
				}
				return
			}
			if s := th.only(t).summary; s == nil || s.Outcome != OutcomeRepaired {
				t.Fatalf("eu did not resume its own Lease: %+v", s)
			}
		})
	}
}

// TestContainment5_LostAnswerToALeaseTakeOver (review finding 14, lost
// responses): the broker's Lease records a finished repair of another
// approval; the API server applies this repair's take-over but the answer
// is lost, and the retry conflicts. The repair reads the Lease back, finds
// its own acquisition and goes on; before, the thread said "refused" while
// the Lease stayed running under this replica's identity, for the next
// start to resume a repair nobody had been told about.
func TestContainment5_LostAnswerToALeaseTakeOver(t *testing.T) {
	c := seedCluster(t)
	l := runningLeaseOf(brokerName, brokerUID)
	l.Annotations[annoState] = leaseDone
	l.Spec.HolderIdentity = nil
	l.ResourceVersion = "1"
	c.extra = append(c.extra, runtime.Object(l))
	h := newHarness(t, c, kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog})
	h.dropLeaseAnswer = l.Name
	s := awaitSummary(t, repairWithin(t, h, &recorder{}))
	h.mu.Lock()
	dropped := h.dropLeaseAnswer == ""
	h.mu.Unlock()
	if !dropped {
		t.Fatal("the fake lost no answer: the test proves nothing")
	}
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s after a take-over whose answer was lost, want repaired:\n%s", s.Outcome, s.Text)
	}
	if got := h.lease(); got.Annotations[annoApprovalID] != testApproval || got.Annotations[annoState] != leaseDone || got.Spec.HolderIdentity != nil {
		t.Errorf("lease after the repair: approval %s state %s holder %v; want this approval, done, released",
			got.Annotations[annoApprovalID], got.Annotations[annoState], got.Spec.HolderIdentity)
	}
}
