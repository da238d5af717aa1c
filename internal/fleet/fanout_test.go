// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var errNoSuchPod = errors.New("no such pod")

// TestCall: each way a cluster can answer, and what the breaker learns.
func TestCall(t *testing.T) {
	hang := func(ctx context.Context) (string, error) { <-ctx.Done(); return "", ctx.Err() }
	tests := []struct {
		name            string
		fn              func(ctx context.Context) (string, error)
		cancelCaller    bool
		wantVal         string
		wantErr         string
		wantUnreachable string
		wantOpen        bool
	}{
		{"answer", func(context.Context) (string, error) { return "pod", nil }, false, "pod", "", "", false},
		{"answered error", func(context.Context) (string, error) { return "", errNoSuchPod }, false, "", "no such pod", "", false},
		{"failure, first line", func(context.Context) (string, error) { return "", errors.New("dial tcp: refused\nmore") }, false,
			"", "dial tcp: refused\nmore", "dial tcp: refused", true},
		{"timeout", hang, false, "", "no answer within 50ms", "no answer within 50ms", true},
		{"caller gave up", hang, true, "", "context canceled", "the request was cancelled", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelCaller {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			b := &Breaker{}
			a := Asking{Timeout: 50 * time.Millisecond, Answered: func(err error) bool { return errors.Is(err, errNoSuchPod) }}
			if tt.cancelCaller {
				a.Timeout = time.Minute
			}
			got := Call(ctx, a, b, tt.fn)
			gotErr := ""
			if got.Err != nil {
				gotErr = got.Err.Error()
			}
			if got.Val != tt.wantVal || gotErr != tt.wantErr || got.Unreachable != tt.wantUnreachable {
				t.Errorf("Call = %q, %q, unreachable %q; want %q, %q, %q", got.Val, gotErr, got.Unreachable, tt.wantVal, tt.wantErr, tt.wantUnreachable)
			}
			if open, reason := b.State(); open != tt.wantOpen || (open && reason != tt.wantUnreachable) {
				t.Errorf("breaker open %v (%q), want %v", open, reason, tt.wantOpen)
			}
		})
	}
}

// TestEachSkipsOpenBreakers: a cluster whose breaker is open is not asked
// and says why; the others answer in cluster order, within the timeout.
func TestEachSkipsOpenBreakers(t *testing.T) {
	open := &Breaker{}
	open.Failure("it hung before")
	breakers := []*Breaker{{}, open, {}}
	// Atomic: Each does not wait for a call it gave up on, so the read
	// below has no other ordering with that call's write.
	asked := make([]atomic.Bool, len(breakers))
	start := time.Now()
	out := Each(context.Background(), Asking{Timeout: 100 * time.Millisecond}, breakers, func(ctx context.Context, i int) (int, error) {
		asked[i].Store(true)
		if i == 2 {
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return i * 10, nil
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Each took %s with a 100ms timeout", d)
	}
	if asked[1].Load() || !asked[0].Load() || !asked[2].Load() {
		t.Errorf("asked %v %v %v, want every cluster but the open one", asked[0].Load(), asked[1].Load(), asked[2].Load())
	}
	want := []Outcome[int]{{Val: 0}, {Unreachable: "it hung before"}, {Unreachable: "no answer within 100ms"}}
	for i := range want {
		if out[i].Val != want[i].Val || out[i].Unreachable != want[i].Unreachable {
			t.Errorf("cluster %d: %+v, want %+v", i, out[i], want[i])
		}
	}
	if !strings.Contains(out[2].Err.Error(), "no answer") {
		t.Errorf("cluster 2's error %v, want the timeout", out[2].Err)
	}
}

// TestCallOnlyCluster: a bot's only cluster is asked with no breaker (nil)
// and no timeout of its own: a slow answer is waited for, a failure is
// returned as it is and opens nothing.
func TestCallOnlyCluster(t *testing.T) {
	tests := []struct {
		name    string
		fn      func(ctx context.Context) (string, error)
		wantVal string
		wantErr string
	}{
		{"slow answer", func(context.Context) (string, error) { time.Sleep(60 * time.Millisecond); return "late", nil }, "late", ""},
		{"failure", func(context.Context) (string, error) { return "", errors.New("forbidden") }, "", "forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b *Breaker
			got := Call(context.Background(), Asking{}, b, tt.fn)
			gotErr := ""
			if got.Err != nil {
				gotErr = got.Err.Error()
			}
			if got.Val != tt.wantVal || gotErr != tt.wantErr {
				t.Errorf("Call = %q, %q; want %q, %q", got.Val, gotErr, tt.wantVal, tt.wantErr)
			}
			if ok, _ := b.Allow(); !ok {
				t.Error("the nil breaker refused a call")
			}
		})
	}
}
