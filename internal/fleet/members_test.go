// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewMembers(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		wantErr string
	}{
		{"one unnamed", []string{""}, ""},
		{"several", []string{"eu", "us"}, ""},
		{"none", nil, "no clusters"},
		{"several need names", []string{"eu", ""}, `cluster 1: name ""`},
		{"twice", []string{"eu", "eu"}, "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMembers(tt.names, func(n string) string { return n }, time.Second, 0, nil, nil)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("NewMembers(%q) = %v, want %q", tt.names, err, tt.wantErr)
			}
		})
	}
}

// TestMembersNamed: "" names the only cluster of a bot serving one, and
// none of a bot serving several.
func TestMembersNamed(t *testing.T) {
	tests := []struct {
		names  []string
		lookup string
		want   string
		ok     bool
	}{
		{[]string{"eu"}, "", "eu", true},
		{[]string{"eu"}, "eu", "eu", true},
		{[]string{"eu"}, "us", "", false},
		{[]string{"eu", "us"}, "", "", false},
		{[]string{"eu", "us"}, "us", "us", true},
	}
	for _, tt := range tests {
		f, err := NewMembers(tt.names, func(n string) string { return n }, time.Second, 0, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := f.Named(tt.lookup); got != tt.want || ok != tt.ok {
			t.Errorf("%q.Named(%q) = %q, %t; want %q, %t", tt.names, tt.lookup, got, ok, tt.want, tt.ok)
		}
	}
}

// TestAskEachSkipsAFailedCluster: with several clusters, one that failed
// is not asked again while its breaker is open; the only cluster of a bot
// has no breaker and is always asked.
func TestAskEachSkipsAFailedCluster(t *testing.T) {
	for _, names := range [][]string{{"eu", "us"}, {"us"}} {
		f, err := NewMembers(names, func(n string) string { return n }, time.Second, time.Hour, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		asked := map[string]int{}
		ask := func(ctx context.Context, m string) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			asked[m]++
			if m == "us" {
				return 0, errors.New("connection refused")
			}
			return 1, nil
		}
		AskEach(context.Background(), f, ask, nil)
		got := AskEach(context.Background(), f, ask, nil)
		us := got[len(got)-1]
		if want := map[bool]int{true: 1, false: 2}[f.Several()]; asked["us"] != want {
			t.Errorf("%q: us asked %d times, want %d", names, asked["us"], want)
		}
		if us.Member != "us" || us.Unreachable == "" {
			t.Errorf("%q: us answered %+v, want unreachable", names, us)
		}
	}
}
