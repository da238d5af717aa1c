// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagshare

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// TestJoin walks one key through its roles: the first request leads, one
// while it runs waits (and is handed back by Finish), one within the
// window shares, and one after the window leads again. A failed diagnosis
// is handed to its waiters only, and a negative window shares nothing.
func TestJoin(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	key := Key{Cluster: "eu", Namespace: "kafka", Pod: "broker-0", UID: "u1", Restarts: 3}
	tests := []struct {
		name   string
		window time.Duration
		err    error
		after  time.Duration // from Finish to the next request
		want   Role
	}{
		{"within the window", time.Minute, nil, 30 * time.Second, Shared},
		{"after the window", time.Minute, nil, 61 * time.Second, Lead},
		{"a failure is not kept", time.Minute, errors.New("forbidden"), time.Second, Lead},
		{"nothing is shared", -1, nil, 0, Lead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			s := New[string](tt.window, func() time.Time { return now })
			lead, role := s.Join(key, "U1")
			if role != Lead {
				t.Fatalf("first request: role %d, want Lead", role)
			}
			_, role = s.Join(key, "U2")
			wantWait := Wait
			if tt.window < 0 {
				wantWait = Lead
			}
			if role != wantWait {
				t.Fatalf("request while it runs: role %d, want %d", role, wantWait)
			}
			waiters := s.Finish(lead, diagnose.Snapshot{Pod: "broker-0", Log: "tail"}, nil, tt.err)
			if tt.window >= 0 && !slices.Equal(waiters, []string{"U2"}) {
				t.Errorf("waiters %v, want [U2]", waiters)
			}
			if lead.Snapshot.Log != "" || lead.Err != tt.err {
				t.Errorf("finished with log %q, error %v", lead.Snapshot.Log, lead.Err)
			}
			now = now.Add(tt.after)
			if _, role := s.Join(key, "U3"); role != tt.want {
				t.Errorf("later request: role %d, want %d", role, tt.want)
			}
		})
	}
}

// TestClaim: the first to claim a channel posts there; the others wait
// for its outcome and read it.
func TestClaim(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	s := New[string](time.Minute, func() time.Time { return now })
	d, _ := s.Join(Key{Pod: "broker-0"}, "U1")
	s.Finish(d, diagnose.Snapshot{}, nil, nil)
	p, mine := s.Claim(d, "C1")
	if !mine {
		t.Fatal("the first claim of C1 is not the poster's")
	}
	if other, mine := s.Claim(d, "C1"); mine || other != p {
		t.Fatal("a second claim of C1 got to post too")
	}
	if _, mine := s.Claim(d, "C2"); !mine {
		t.Fatal("a claim of another channel must post there")
	}
	s.Posted(p, "1.2", true, "U1")
	<-p.Ready()
	if p.TS != "1.2" || !p.OK || p.Requester != "U1" || !p.At.Equal(now) {
		t.Errorf("post %+v", p)
	}
}

func TestKeyOf(t *testing.T) {
	tests := []struct {
		name string
		snap diagnose.Snapshot
		want int32
	}{
		{"Kafka container", diagnose.Snapshot{KafkaContainer: "kafka", Containers: []diagnose.ContainerState{{Name: "sidecar", RestartCount: 9}, {Name: "kafka", RestartCount: 4}}}, 4},
		{"no Kafka container: all", diagnose.Snapshot{KafkaContainer: "kafka", Containers: []diagnose.ContainerState{{Name: "a", RestartCount: 1}, {Name: "b", RestartCount: 2}}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyOf("eu", tt.snap).Restarts; got != tt.want {
				t.Errorf("restarts %d, want %d", got, tt.want)
			}
		})
	}
}
