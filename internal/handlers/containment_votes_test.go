// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// Issue 27 item 4: votes are signed and current.

// threadSays waits for a reply in m's thread containing want.
func (h *harness) threadSays(m slackemu.Message, want string) string {
	h.t.Helper()
	var found string
	h.waitFor("a thread reply containing "+want, func() bool {
		for _, r := range h.emu.Thread(m.Channel, m.TS) {
			if strings.Contains(r.Text, want) {
				found = r.Text
				return true
			}
		}
		return false
	})
	return found
}

// approvalOf returns the approval a diagnosis message's Approve button carries.
func (h *harness) approvalOf(m slackemu.Message) approval.Approval {
	h.t.Helper()
	token, _ := buttons(h.t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	a, err := approval.Verify(testSecret, token, h.clock.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// refusedWithoutRepair waits until m's thread says want or a repair starts,
// and fails when a repair started: what describes the click.
func (h *harness) refusedWithoutRepair(m slackemu.Message, want, what string) {
	h.t.Helper()
	said := func() bool {
		for _, r := range h.emu.Thread(m.Channel, m.TS) {
			if strings.Contains(r.Text, want) {
				return true
			}
		}
		return false
	}
	h.waitFor("the thread to say "+want+", or a repair", func() bool { return said() || len(h.repairer.calls()) > 0 })
	time.Sleep(100 * time.Millisecond) // a repair started by the same click would show by now
	if calls := h.repairer.calls(); len(calls) != 0 {
		h.t.Fatalf("%s: the repair started with Approver=%q", what, calls[0].Approver)
	}
}

// TestContainment4_ForgedDecisionVotesAreRefused (review finding 4):
// decision records carry a MAC keyed with APPROVAL_SECRET. With two
// approvals required, one approver plus a record someone else wrote
// (pre-created, or a real record edited to name another approver) never
// makes two: the click is refused loudly, in the thread, and nothing runs.
// A record of the previous version (unsigned, its votes genuine) is refused
// the same way: that is the upgrade story (an approval pending across the
// upgrade needs fresh buttons).
func TestContainment4_ForgedDecisionVotesAreRefused(t *testing.T) {
	unsignedRecord := func(a approval.Approval, votes ...string) *coordinationv1.Lease {
		rec := approval.NewRecord(a, 2)
		for _, u := range votes {
			rec.Approvals = append(rec.Approvals, approval.Vote{User: u, At: a.IssuedAt})
		}
		raw, _ := json.Marshal(rec)
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kube.DecisionLeaseName(a.ID), Namespace: a.Namespace,
			Labels: map[string]string{kube.LabelRecord: "decision"}, Annotations: map[string]string{"kafkabot/decision": string(raw)}}}
	}
	tests := []struct {
		name string
		// tamper writes the record behind the bot's back, after the
		// approver's first click when clickFirst is set.
		clickFirst bool
		tamper     func(t *testing.T, cs *fake.Clientset, a approval.Approval)
	}{
		{"a record pre-created with a vote of an approver who never clicked", false,
			func(t *testing.T, cs *fake.Clientset, a approval.Approval) {
				if _, err := cs.CoordinationV1().Leases(a.Namespace).Create(context.Background(), unsignedRecord(a, approver2), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
		{"a real record whose vote was edited to name another approver", true,
			func(t *testing.T, cs *fake.Clientset, a approval.Approval) {
				leases := cs.CoordinationV1().Leases(a.Namespace)
				l, err := leases.Get(context.Background(), kube.DecisionLeaseName(a.ID), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var rec approval.Record
				if err := json.Unmarshal([]byte(l.Annotations["kafkabot/decision"]), &rec); err != nil || len(rec.Approvals) != 1 {
					t.Fatalf("the first click's record: %+v, %v", rec, err)
				}
				rec.Approvals[0].User = approver2
				raw, _ := json.Marshal(rec)
				l.Annotations["kafkabot/decision"] = string(raw)
				if _, err := leases.Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
		{"a record of the previous version: no MAC, a genuine vote", false,
			func(t *testing.T, cs *fake.Clientset, a approval.Approval) {
				if _, err := cs.CoordinationV1().Leases(a.Namespace).Create(context.Background(), unsignedRecord(a, approver2), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			h := startBot(t, func(o *Options) {
				o.Approvers = []string{approver, approver2}
				o.RequiredApprovals = 2
				o.Clusters[0].Decisions = signedDecisions(cs)
			})
			m := h.diagnose()
			a := h.approvalOf(m)
			if tt.clickFirst {
				h.click(m, slackview.ActionApprove, approver)
				h.threadSays(m, "(1 of 2)")
			}
			tt.tamper(t, cs, a)
			h.click(m, slackview.ActionApprove, approver) // the only human click that counts
			h.refusedWithoutRepair(m, "does not carry this bot's signature", "one click plus a record the bot did not sign")
			said := h.threadSays(m, "does not carry this bot's signature")
			if !strings.Contains(said, "nothing was run") {
				t.Errorf("the thread's refusal does not say nothing ran: %q", said)
			}
			h.ephemeral(channel, approver, "does not carry this bot's signature")
		})
	}
}

// TestContainment4_OnlyCurrentApproversVotesCount (review finding 5): at
// completion only votes of people who are approvers now count, and not the
// requester's while self-approval is forbidden, however the vote got into
// the (signed) record: cast under older settings, or on a replica with
// other settings. The thread says which votes stopped counting, and the
// repair starts only when enough current approvers clicked.
func TestContainment4_OnlyCurrentApproversVotesCount(t *testing.T) {
	const approver3 = "U0APPROVER3"
	tests := []struct {
		name      string
		approvers []string
		earlier   string // the vote already in the record
	}{
		{"an approver removed from APPROVERS since their vote", []string{approver, approver3}, approver2},
		{"the requester's vote, cast where self-approval was allowed", []string{approver, approver3, requester}, requester},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := signedDecisions(fake.NewClientset())
			h := startBot(t, func(o *Options) {
				o.Approvers = tt.approvers
				o.RequiredApprovals = 2
				o.Clusters[0].Decisions = store
			})
			m := h.diagnose()
			a := h.approvalOf(m)
			if _, err := store.Decide(context.Background(), approval.Click{Approval: a, User: tt.earlier, Approve: true, Required: 2, At: h.clock.Now()}); err != nil {
				t.Fatal(err)
			}
			h.click(m, slackview.ActionApprove, approver)
			h.refusedWithoutRepair(m, "(1 of 2)", "one current approver plus a vote that no longer counts")
			h.threadSays(m, "<@"+tt.earlier+"> no longer count")

			h.click(m, slackview.ActionApprove, approver3)
			h.waitFor("the repair to start", func() bool { return len(h.repairer.calls()) == 1 })
			if got := h.repairer.calls()[0].Approver; got != approver+","+approver3 {
				t.Errorf("repair approvers = %q, want %s", got, approver+","+approver3)
			}
		})
	}
}

// TestContainment4_ClusterApproversCountForThatClusterOnly (review finding
// 11, "approvers are global"): a cluster's own approvers (CLUSTERS_FILE
// `approvers`) replace APPROVERS for that cluster's repairs, and give no
// right on another cluster's; a cluster without its own list keeps
// APPROVERS.
func TestContainment4_ClusterApproversCountForThatClusterOnly(t *testing.T) {
	f := startFleet(t, func(o *Options) { o.Clusters[0].Approvers = []string{approver2} }) // eu
	eu := f.diagnoseIn("diagnose eu/broker-0")
	f.click(eu, slackview.ActionApprove, approver)
	if e := f.ephemeral(channel, approver, "You are not allowed to approve repairs"); !strings.Contains(e.Text, "<@"+approver2+">") {
		t.Errorf("the refusal %q should name eu's approver", e.Text)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(f.euRep.calls()); n != 0 {
		t.Fatalf("eu ran %d repairs on the Approve of an APPROVERS member who is not eu's approver", n)
	}
	f.click(eu, slackview.ActionApprove, approver2)
	f.waitFor("eu's repair", func() bool { return len(f.euRep.calls()) == 1 })

	us := f.diagnoseIn("diagnose us/broker-0")
	f.click(us, slackview.ActionApprove, approver2)
	f.waitFor("the refusal of eu's approver on us", func() bool {
		n := 0
		for _, m := range f.emu.Ephemerals(channel, approver2) {
			if strings.Contains(m.Text, "You are not allowed to approve repairs") {
				n++
			}
		}
		return n == 1
	})
	time.Sleep(100 * time.Millisecond)
	if n := len(f.usRep.calls()); n != 0 {
		t.Fatalf("us ran %d repairs on the Approve of eu's approver", n)
	}
	f.click(us, slackview.ActionApprove, approver)
	f.waitFor("us's repair", func() bool { return len(f.usRep.calls()) == 1 })
}
