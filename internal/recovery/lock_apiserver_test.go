// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	testclock "k8s.io/utils/clock/testing"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// botLock is a repairLock of one bot replica on the real API server, as
// the bot's ServiceAccount (deploy/'s RBAC enforced).
func botLock(t *testing.T, env *testenv.Env, ns, identity string) *repairLock {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	kc := kube.New(cs, kube.Options{Namespaces: []string{ns}})
	return &repairLock{kc: kc, identity: identity, clock: testclock.NewFakeClock(time.Now()), duration: 12 * time.Minute, key: testRecordKey}
}

// TestSafety06_ClusterLockOnTheRealAPIServer: "one broker at a time" was
// check-then-act (two approvals on two brokers of one cluster both passed).
// Now each repair first takes the cluster's Lease by create or
// compare-and-swap: two replicas racing for two brokers of one cluster,
// round after round, get exactly one winner; the loser names the winner's
// broker; once the winner releases, the next repair takes the Lease over.
func TestSafety06_ClusterLockOnTheRealAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ns := env.KafkaNamespace(t, "repair-cluster-lock", nil)
	a, b := botLock(t, env, ns, "bot-a"), botLock(t, env, ns, "bot-b")
	key := kube.KafkaClusterKeyOf(ns, "events")
	ctx := context.Background()
	for round := range 8 {
		reqA, reqB := request(), request()
		reqA.Namespace, reqB.Namespace = ns, ns
		reqA.Pod, reqB.Pod = "events-broker-0", "events-broker-1"
		reqA.ApprovalID, reqB.ApprovalID = fmt.Sprintf("appr-a-%d", round), fmt.Sprintf("appr-b-%d", round)
		var wg sync.WaitGroup
		var heldA, heldB *heldLock
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); heldA, errA = a.AcquireCluster(ctx, reqA, key) }()
		go func() { defer wg.Done(); heldB, errB = b.AcquireCluster(ctx, reqB, key) }()
		wg.Wait()
		won := 0
		for _, e := range []error{errA, errB} {
			switch {
			case e == nil:
				won++
			case !errors.Is(e, ErrRepairRunning):
				t.Fatalf("round %d: unexpected error %v", round, e)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners (errors %v / %v), want exactly 1", round, won, errA, errB)
		}
		winner := heldA
		if winner == nil {
			winner = heldB
		}
		// While it runs, a third approval on either broker is refused.
		third := request()
		third.Namespace, third.Pod, third.ApprovalID = ns, "events-broker-2", fmt.Sprintf("appr-c-%d", round)
		if _, err := a.AcquireCluster(ctx, third, key); !errors.Is(err, ErrRepairRunning) {
			t.Fatalf("round %d: a third repair during the first: %v", round, err)
		}
		if err := winner.Release(ctx, leaseDone); err != nil {
			t.Fatalf("round %d: release: %v", round, err)
		}
	}
}

// TestSafety12_FencingOnTheRealAPIServer: a replica whose Lease another
// replica took over finds out on its next update, and every later update
// is refused too (fencing).
func TestSafety12_FencingOnTheRealAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ns := env.KafkaNamespace(t, "repair-fencing", nil)
	a, b := botLock(t, env, ns, "bot-a"), botLock(t, env, ns, "bot-b")
	ctx := context.Background()
	req := request()
	req.Namespace = ns
	held, err := a.Acquire(ctx, req, "events", map[string]string{annoScript: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	if err := held.SetStep(ctx, "step 1"); err != nil {
		t.Fatalf("renewing its own Lease: %v", err)
	}
	// bot-b judged bot-a gone and takes over, guarded by resourceVersion.
	cur, err := b.kc.GetLease(ctx, ns, kube.RepairLeaseName(req.Pod))
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyRecord(testRecordKey, "", cur); err != nil {
		t.Fatalf("the record written through the real API server does not verify: %v", err)
	}
	if _, err := b.takeOver(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := held.SetStep(ctx, "step 2"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("update after the take-over: %v, want ErrLeaseLost", err)
	}
	if err := held.Release(ctx, leaseDone); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("release after the take-over: %v, want ErrLeaseLost", err)
	}
	after, err := b.kc.GetLease(ctx, ns, kube.RepairLeaseName(req.Pod))
	if err != nil {
		t.Fatal(err)
	}
	if holder(after) != "bot-b" || after.Annotations[annoState] != leaseRunning {
		t.Errorf("lease holder %q state %q after the fenced replica's attempts", holder(after), after.Annotations[annoState])
	}
}
