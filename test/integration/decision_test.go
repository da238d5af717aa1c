// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// decisionKey signs the decision records in these tests only (the bot
// passes APPROVAL_SECRET).
var decisionKey = []byte("integration-test-decision-key-0123456789abcdef")

// botReplicas returns n decision stores, each on its own clientset acting
// as the bot's ServiceAccount: n bot replicas sharing one API server.
func botReplicas(t *testing.T, env *testenv.Env, ns string, n int) []*kube.DecisionStore {
	t.Helper()
	var out []*kube.DecisionStore
	for range n {
		cs, err := kubernetes.NewForConfig(env.BotConfig())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kube.New(cs, kube.Options{Namespaces: []string{ns}}).Decisions(decisionKey))
	}
	return out
}

func testApproval(ns, id string, issued time.Time) approval.Approval {
	return approval.Approval{ID: id, Namespace: ns, Pod: "kafka-broker-0", Rule: "metadata-log-offset-mismatch",
		Action: "move-metadata-log", Channel: "C0KAFKAOPS", IssuedAt: issued, ExpiresAt: issued.Add(30 * time.Minute)}
}

// TestSafety08_DecisionRecordSharedAcrossReplicas: decisions are recorded
// in the cluster with create-if-absent and compare-and-swap, as the bot's
// ServiceAccount, so every replica sees every other's: an Approve on one
// replica after a Reject on another is refused; of simultaneous first
// clicks on two replicas exactly one decides; with two approvals required,
// exactly one click, on whichever replica, completes the approval.
func TestSafety08_DecisionRecordSharedAcrossReplicas(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	ns := env.KafkaNamespace(t, "kafka-decisions", nil)
	r := botReplicas(t, env, ns, 2)
	now := time.Now().UTC().Truncate(time.Second)

	t.Run("reject on one replica, approve on the other", func(t *testing.T) {
		a := testApproval(ns, "REJECTTHENAPPROVE", now)
		out, err := r[0].Decide(ctx, approval.Click{Approval: a, User: "U0REJECTER", Approve: false, Required: 1, At: now})
		if err != nil || !out.Applied {
			t.Fatalf("reject on replica 0 = %+v, %v; want applied", out, err)
		}
		out, err = r[1].Decide(ctx, approval.Click{Approval: a, User: "U0APPROVER", Approve: true, Required: 1, At: now})
		if err != nil || out.Applied || out.Completed || out.Reason != approval.ReasonAlreadyRejected {
			t.Fatalf("approve on replica 1 after the reject = %+v, %v; want refused as already rejected", out, err)
		}
		if out.Record.Rejected == nil || out.Record.Rejected.User != "U0REJECTER" {
			t.Errorf("record %+v does not name the rejecter", out.Record)
		}
		lease, err := env.Clientset.CoordinationV1().Leases(ns).Get(ctx, "kafkabot-decision-rejectthenapprove", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the decision record is not the Lease kafkabot-decision-<id>: %v", err)
		}
		if lease.Labels[kube.LabelRecord] != "decision" {
			t.Errorf("decision Lease labels %v", lease.Labels)
		}
	})

	t.Run("simultaneous first clicks on two replicas", func(t *testing.T) {
		for round := range 3 {
			a := testApproval(ns, "RACE"+string(rune('A'+round)), now)
			outs := race(t, r, a, 12, func(i int) approval.Click {
				return approval.Click{Approval: a, User: "U0USER" + string(rune('A'+i)), Approve: i%3 != 0, Required: 1, At: now}
			})
			applied, completed := 0, 0
			for _, o := range outs {
				if o.Applied {
					applied++
				}
				if o.Completed {
					completed++
				}
			}
			if applied != 1 || completed > 1 {
				t.Errorf("round %d: %d clicks applied (%d completed), want exactly 1 deciding click", round, applied, completed)
			}
		}
	})

	t.Run("two approvals required, approvers racing on both replicas", func(t *testing.T) {
		a := testApproval(ns, "TWOOFMANY", now)
		outs := race(t, r, a, 10, func(i int) approval.Click {
			return approval.Click{Approval: a, User: "U0APPROVER" + string(rune('A'+i)), Approve: true, Required: 2, At: now}
		})
		applied, completed := 0, 0
		for _, o := range outs {
			if o.Applied {
				applied++
			}
			if o.Completed {
				completed++
			}
		}
		if applied != 2 || completed != 1 {
			t.Errorf("%d approvals applied, %d completed; want 2 applied and exactly 1 completing", applied, completed)
		}
	})

	t.Run("expired records are pruned by the next new record", func(t *testing.T) {
		old := testApproval(ns, "LONGEXPIRED", now.Add(-4*time.Hour))
		recent := testApproval(ns, "RECENTLYEXPIRED", now.Add(-50*time.Minute))
		for _, a := range []approval.Approval{old, recent} {
			if _, err := r[0].Decide(ctx, approval.Click{Approval: a, User: "U0X", Approve: false, Required: 1, At: a.IssuedAt}); err != nil {
				t.Fatal(err)
			}
		}
		fresh := testApproval(ns, "FRESH", now)
		if _, err := r[1].Decide(ctx, approval.Click{Approval: fresh, User: "U0X", Approve: false, Required: 1, At: now}); err != nil {
			t.Fatal(err)
		}
		if _, found, err := r[1].Get(ctx, ns, old.ID); err != nil || found {
			t.Errorf("record of an approval expired 3.5h ago: found %t (%v), want pruned", found, err)
		}
		if _, found, err := r[1].Get(ctx, ns, recent.ID); err != nil || !found {
			t.Errorf("record of an approval expired 20m ago: found %t (%v), want kept (retention %s)", found, err, kube.DecisionRetention)
		}
	})
}

// race applies n clicks at once, alternating between the replicas, and
// returns their outcomes; every click must get an answer without error.
func race(t *testing.T, replicas []*kube.DecisionStore, a approval.Approval, n int, click func(i int) approval.Click) []approval.Outcome {
	t.Helper()
	ctx := testContext(t)
	outs := make([]approval.Outcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			outs[i], errs[i] = replicas[i%len(replicas)].Decide(ctx, click(i))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("click %d on approval %s: %v", i, a.ID, err)
		}
	}
	return outs
}

// TestContainment4_ForgedDecisionRecordOnTheRealAPIServer (issue 27 item 4,
// review finding 4): with the bot's own ServiceAccount token (what a thief
// holds; the default "edit" role grants the same Lease writes), a decision
// record pre-created with a vote of an approver who never clicked, or a
// real record whose vote is edited, is written by the API server, and the
// bot decides nothing on it: one approver plus a forged record never makes
// two.
func TestContainment4_ForgedDecisionRecordOnTheRealAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	ns := env.KafkaNamespace(t, "kafka-forged-decisions", nil)
	r := botReplicas(t, env, ns, 1)[0]
	thief, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	leases := thief.CoordinationV1().Leases(ns)
	now := time.Now().UTC().Truncate(time.Second)

	t.Run("pre-created", func(t *testing.T) {
		a := testApproval(ns, "PRECREATED", now)
		rec := approval.NewRecord(a, 2)
		rec.Approvals = []approval.Vote{{User: "U0APPROVER2", At: now}}
		raw, _ := json.Marshal(rec)
		forged := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kube.DecisionLeaseName(a.ID), Namespace: ns,
			Labels: map[string]string{kube.LabelRecord: "decision"}, Annotations: map[string]string{"kafkabot/decision": string(raw)}}}
		if _, err := leases.Create(ctx, forged, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the bot's token could not create the record (the scenario needs it): %v", err)
		}
		out, err := r.Decide(ctx, approval.Click{Approval: a, User: "U0APPROVER", Approve: true, Required: 2, At: now})
		if !errors.Is(err, approval.ErrUnsignedRecord) || out.Completed || out.Applied {
			t.Fatalf("Decide on a pre-created record = %+v, %v; want nothing decided and ErrUnsignedRecord", out, err)
		}
	})

	t.Run("edited", func(t *testing.T) {
		a := testApproval(ns, "EDITED", now)
		if _, err := r.Decide(ctx, approval.Click{Approval: a, User: "U0APPROVER", Approve: true, Required: 2, At: now}); err != nil {
			t.Fatal(err)
		}
		l, err := leases.Get(ctx, kube.DecisionLeaseName(a.ID), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var rec approval.Record
		if err := json.Unmarshal([]byte(l.Annotations["kafkabot/decision"]), &rec); err != nil || len(rec.Approvals) != 1 {
			t.Fatalf("the first vote's record: %+v, %v", rec, err)
		}
		rec.Approvals[0].User = "U0APPROVER2"
		raw, _ := json.Marshal(rec)
		l.Annotations["kafkabot/decision"] = string(raw)
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("the bot's token could not edit the record (the scenario needs it): %v", err)
		}
		out, err := r.Decide(ctx, approval.Click{Approval: a, User: "U0APPROVER", Approve: true, Required: 2, At: now})
		if !errors.Is(err, approval.ErrUnsignedRecord) || out.Completed || out.Applied {
			t.Fatalf("Decide on an edited record = %+v, %v; want nothing decided and ErrUnsignedRecord", out, err)
		}
	})
}
