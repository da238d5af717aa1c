// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
)

// gateHang bounds a gated read's wait. It only stops a test whose reads
// never meet (one-by-one reads); no test asserts a duration.
const gateHang = 5 * time.Second

// readGate holds every gated read until want of them have started, so
// reads made one after another never get through.
type readGate struct {
	mu      sync.Mutex
	want    int
	arrived int
	all     chan struct{}
}

func newReadGate(want int) *readGate { return &readGate{want: want, all: make(chan struct{})} }

var errNotConcurrent = errors.New("the reads were not in flight together")

func (g *readGate) wait(ctx context.Context) error {
	g.mu.Lock()
	g.arrived++
	if g.arrived == g.want {
		close(g.all)
	}
	n := g.arrived
	g.mu.Unlock()
	t := time.NewTimer(gateHang)
	defer t.Stop()
	select {
	case <-g.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: %d of %d started", errNotConcurrent, n, g.want)
	}
}

// gatedView is the bot's clientset over the seed objects whose claim,
// event and log reads each pass the gate given for them (nil: not held),
// outside the fake's lock (which would otherwise serialise them).
func gatedView(claims, events, logs *readGate, log string) *benchutil.View {
	gates := map[string]*readGate{"persistentvolumeclaims": claims, "events": events, "pods/log": logs}
	return benchutil.NewView(fake.NewClientset(inspSeedObjects()...).Tracker(), benchutil.ViewOptions{
		Logs: benchutil.TextLogs(log),
		Before: func(ctx context.Context, resource string) error {
			if g := gates[resource]; g != nil {
				return g.wait(ctx)
			}
			return nil
		},
	})
}

// TestInspectReadsAtOnce holds the claim, event and log reads until all
// three are in flight: Inspect reading them one after another would never
// get the first one through. The result must equal a one-by-one read's.
func TestInspectReadsAtOnce(t *testing.T) {
	crash := inspReadCrashLog(t)
	gate := newReadGate(3)
	cs := gatedView(gate, gate, gate, string(crash))
	opts := Options{Namespaces: []string{"kafka"}, LogTailBytes: 64 << 10, LogTailLines: 500}
	got, err := New(cs, opts).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}

	// The same pod through the plain fake, whose lock serialises every read.
	plain := fake.NewClientset(inspSeedObjects()...)
	(&inspLogServer{previous: crash}).install(plain)
	want, err := New(plain, opts).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatalf("Inspect on the plain fake: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("concurrent Inspect = %+v\nwant the one-by-one result %+v", got, want)
	}
	if got.Snapshot.Claims[0].Phase != "Bound" || len(got.Snapshot.Events) == 0 || got.LogSource != LogPrevious || got.Snapshot.LogBytes == 0 {
		t.Errorf("snapshot lacks what the three reads bring: claims %+v, %d events, log %s of %d bytes",
			got.Snapshot.Claims, len(got.Snapshot.Events), got.LogSource, got.Snapshot.LogBytes)
	}
}

// TestInspectFailedReadCancelsTheOthers: events are forbidden while the
// claim and log reads hang until cancelled. Inspect must cancel them and
// return the events' Forbidden error, not a cancellation (and not the
// hang guard's error, which it would get if nothing cancelled them).
func TestInspectFailedReadCancelsTheOthers(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New(`cannot list resource "events"`))
	never := newReadGate(99) // never opens: only cancellation (or the hang guard) ends these reads
	cs := gatedView(never, nil, never, "x\n")
	cs.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	_, err := New(cs, Options{Namespaces: []string{"kafka"}}).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if !apierrors.IsForbidden(err) {
		t.Fatalf("Inspect error = %v, want the events' Forbidden", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, errNotConcurrent) {
		t.Errorf("error %v should be the failed read's alone", err)
	}
}

// TestInspectCallerCancelled: when the caller's context ends, the error
// says so (a cancellation, not something made up).
func TestInspectCallerCancelled(t *testing.T) {
	never := newReadGate(99)
	cs := gatedView(never, never, never, "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			never.mu.Lock()
			n := never.arrived
			never.mu.Unlock()
			if n == 3 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := New(cs, Options{Namespaces: []string{"kafka"}}).Inspect(ctx, "kafka", "foobar-kafka-broker-0")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Inspect error = %v, want a cancellation", err)
	}
}
