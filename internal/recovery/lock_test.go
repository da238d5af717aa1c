// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLockTakeOverIsExclusive(t *testing.T) {
	c := seedCluster(t)
	obj := *leftLease(t, "bot-dead", testStart.Add(-time.Hour), "Create debug pod")
	c.extra = append(c.extra, obj)
	h := newHarness(t, c, kubeletPlan{})
	stale := h.lease()
	if !h.r.lock.stale(stale) {
		t.Fatal("an hour-old lease is not stale")
	}
	a := &repairLock{kc: h.kc, identity: "bot-a", clock: h.clock, duration: time.Minute}
	b := &repairLock{kc: h.kc, identity: "bot-b", clock: h.clock, duration: time.Minute}
	if _, err := a.takeOver(context.Background(), stale.DeepCopy()); err != nil {
		t.Fatalf("first takeover: %v", err)
	}
	if _, err := b.takeOver(context.Background(), stale.DeepCopy()); err == nil || !strings.Contains(err.Error(), "Conflict") && !strings.Contains(err.Error(), "resourceVersion") {
		t.Fatalf("second takeover from the same read succeeded or failed oddly: %v", err)
	}
	if got := holder(h.lease()); got != "bot-a" {
		t.Errorf("holder %q, want bot-a", got)
	}
}

func TestLockAcquire(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{})
	ctx := context.Background()
	req := request()
	held, err := h.r.lock.Acquire(ctx, req, "foobar", nil)
	if err != nil {
		t.Fatal(err)
	}
	other := req
	other.ApprovalID, other.Approver = "appr-0002", "U0OTHER"
	if _, err := h.r.lock.Acquire(ctx, other, "foobar", nil); !errors.Is(err, ErrRepairRunning) {
		t.Errorf("second approval while running: %v, want ErrRepairRunning", err)
	}
	if _, err := h.r.lock.Acquire(ctx, req, "foobar", nil); !errors.Is(err, ErrAlreadyRan) {
		t.Errorf("same approval while running: %v, want ErrAlreadyRan", err)
	}
	if err := held.SetStep(ctx, "Create debug pod"); err != nil {
		t.Fatal(err)
	}
	if err := held.Release(ctx, leaseDone); err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.lock.Acquire(ctx, req, "foobar", nil); !errors.Is(err, ErrAlreadyRan) || !strings.Contains(err.Error(), "state done") {
		t.Errorf("same approval after it ran: %v, want ErrAlreadyRan with state done", err)
	}
	if _, err := h.r.lock.Acquire(ctx, other, "foobar", nil); err != nil {
		t.Errorf("a new approval after the repair ended: %v", err)
	}
	l := h.lease()
	for key, want := range map[string]string{
		annoApprovalID: "appr-0002", annoApprover: "U0OTHER", annoRequester: "U0REQUESTER", annoChannel: "C0KAFKA",
		annoThreadTS: "1764417600.000100", annoAction: "move-metadata-log", annoTarget: "__cluster_metadata-0",
		annoState: leaseRunning, annoStartedAt: "2026-11-29T12:00:00Z", annoPod: brokerName,
	} {
		if l.Annotations[key] != want {
			t.Errorf("annotation %s = %q, want %q", key, l.Annotations[key], want)
		}
	}
	if holder(l) != "bot-a" {
		t.Errorf("holder %q, want bot-a", holder(l))
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"appr-0001":                 "appr-0001",
		"-x/y:z-":                   "x-y-z",
		strings.Repeat("a", 70):     strings.Repeat("a", 63),
		"U0APPROVER@slack.example.": "U0APPROVER-slack.example",
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}
