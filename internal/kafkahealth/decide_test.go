// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"strings"
	"testing"
	"time"
)

// healthy is a view of 3 voters (1-3) and 3 brokers (4-6), all caught up,
// with one topic of replication factor 3 and min.insync.replicas 2.
func healthy() *View {
	const now = 1_000_000
	return &View{
		Quorum: &Quorum{LeaderID: 1, LeaderEpoch: 5, HighWatermark: 500,
			Voters: []Replica{
				{ID: 1, LogEndOffset: 500, LastFetchTimestamp: now, LastCaughtUpTimestamp: now},
				{ID: 2, LogEndOffset: 500, LastFetchTimestamp: now - 100, LastCaughtUpTimestamp: now - 100},
				{ID: 3, LogEndOffset: 499, LastFetchTimestamp: now - 300, LastCaughtUpTimestamp: now - 300},
			},
			Observers: []Replica{
				{ID: 4, LogEndOffset: 500, LastFetchTimestamp: now, LastCaughtUpTimestamp: now},
				{ID: 5, LogEndOffset: 500, LastFetchTimestamp: now, LastCaughtUpTimestamp: now},
				{ID: 6, LogEndOffset: 500, LastFetchTimestamp: now, LastCaughtUpTimestamp: now},
			}},
		Brokers:      []Broker{{ID: 4}, {ID: 5}, {ID: 6}},
		FencedListed: true,
		Partitions: []Partition{
			{Topic: "t", Partition: 0, Leader: 4, Replicas: []int32{4, 5, 6}, ISR: []int32{4, 5, 6}},
			{Topic: "t", Partition: 1, Leader: 5, Replicas: []int32{5, 6, 4}, ISR: []int32{5, 6, 4}},
			{Topic: "single", Partition: 0, Leader: 4, Replicas: []int32{4}, ISR: []int32{4}},
		},
		MinISR:       map[string]int{"t": 2, "single": 1},
		FetchTimeout: DefaultFetchTimeout,
	}
}

func TestBeforeMoveTable(t *testing.T) {
	tests := []struct {
		name   string
		broker int32
		change func(v *View)
		want   Verdict
		says   string
	}{
		{"healthy", 4, func(*View) {}, Pass,
			"quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on broker 4 alone"},
		{"broker under repair fenced is fine", 4, func(v *View) { v.Brokers[0].Fenced = true }, Pass, "brokers: no other fenced"},
		{"another broker fenced", 4, func(v *View) { v.Brokers[2].Fenced = true }, Fail, "brokers: 6 fenced too: one broker at a time"},
		{"old Kafka: another broker not listed", 4, func(v *View) { v.FencedListed = false; v.Brokers = v.Brokers[:2] }, Fail,
			"brokers: 6 not registered or fenced too"},
		{"old Kafka: only the broker under repair missing", 4, func(v *View) { v.FencedListed = false; v.Brokers = v.Brokers[1:] }, Pass, "brokers: no other fenced"},
		{"one voter behind still a majority", 4, func(v *View) { v.Quorum.Voters[2].LastCaughtUpTimestamp -= 5000 }, Pass, "2/3 voters caught up"},
		{"voter behind by exactly the fetch timeout", 4, func(v *View) {
			v.Quorum.Voters[2].LastCaughtUpTimestamp = 1_000_000 - 2000
			v.Quorum.Voters[1].LastCaughtUpTimestamp = -1
		}, Fail,
			"quorum: leader 1, only 1/3 voters caught up (need 2; behind: 2, 3)"},
		{"longer fetch timeout read from the cluster", 4, func(v *View) {
			v.FetchTimeout = 10 * time.Second
			v.Quorum.Voters[1].LastCaughtUpTimestamp -= 5000
			v.Quorum.Voters[2].LastCaughtUpTimestamp -= 5000
		}, Pass, "3/3 voters caught up"},
		{"no leader", 4, func(v *View) { v.Quorum.LeaderID = -1 }, Defer, "quorum: no leader reported (epoch 5)"},
		{"leader not a voter", 4, func(v *View) { v.Quorum.LeaderID = 9 }, Defer, "leader 9 is not among the voters [1,2,3]"},
		{"leader without caught-up times falls back to the newest", 4, func(v *View) {
			v.Quorum.Voters[0].LastCaughtUpTimestamp = -1
			v.Quorum.Voters[0].LastFetchTimestamp = -1
		}, Pass, "3/3 voters caught up"},
		{"no times at all", 4, func(v *View) {
			for _, rs := range [][]Replica{v.Quorum.Voters, v.Quorum.Observers} {
				for i := range rs {
					rs[i].LastCaughtUpTimestamp, rs[i].LastFetchTimestamp = -1, -1
				}
			}
		}, Defer, "reports no caught-up times"},
		{"five voters need three", 4, func(v *View) {
			v.Quorum.Voters = append(v.Quorum.Voters, Replica{ID: 7, LastCaughtUpTimestamp: -1}, Replica{ID: 8, LastCaughtUpTimestamp: -1})
		}, Pass, "3/5 voters caught up"},
		{"five voters with two caught up", 4, func(v *View) {
			v.Quorum.Voters[2].LastCaughtUpTimestamp = -1
			v.Quorum.Voters = append(v.Quorum.Voters, Replica{ID: 7, LastCaughtUpTimestamp: -1}, Replica{ID: 8, LastCaughtUpTimestamp: -1})
		}, Fail, "only 2/5 voters caught up (need 3"},
		{"only in-sync replica of a replicated partition", 4, func(v *View) { v.Partitions[0].ISR = []int32{4} }, Fail,
			"broker 4 is the only in-sync replica of t-0"},
		{"another broker the only ISR is not about this one", 5, func(v *View) { v.Partitions[0].ISR = []int32{4} }, Pass, "no partition relies on broker 5 alone"},
		{"replication factor 1 is not a reliance", 4, func(*View) {}, Pass, "no partition relies on broker 4 alone"},
		{"problems defer", 4, func(v *View) { v.Problems = []string{"quorum: DescribeQuorum failed: timeout", "brokers: x"} }, Defer,
			"Kafka's view is unclear: quorum: DescribeQuorum failed: timeout (and 1 more): deferring"},
		{"missing quorum defers", 4, func(v *View) { v.Quorum = nil }, Defer, "quorum: not reported"},
		{"the worst part wins", 4, func(v *View) { v.Quorum.LeaderID = -1; v.Brokers[1].Fenced = true }, Defer, "brokers: 5 fenced too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := healthy()
			tt.change(v)
			d := BeforeMove(v, tt.broker)
			if d.Verdict != tt.want || !strings.Contains(d.Line, tt.says) {
				t.Errorf("BeforeMove = %v %q, want %v saying %q", d.Verdict, d.Line, tt.want, tt.says)
			}
		})
	}
	if d := BeforeMove(nil, 4); d.Verdict != Defer {
		t.Errorf("BeforeMove(nil) = %v, want defer", d.Verdict)
	}
}

func TestAfterRestartTable(t *testing.T) {
	tests := []struct {
		name   string
		change func(v *View)
		maxLag int64
		want   Verdict
		says   string
	}{
		{"back", func(*View) {}, 0, Pass,
			"broker 4: registered, unfenced; observer lag 0; no partition under min.insync.replicas because of broker 4"},
		{"fenced", func(v *View) { v.Brokers[0].Fenced = true }, 0, Fail, "broker 4: registered, fenced"},
		{"not registered", func(v *View) { v.Brokers = v.Brokers[1:] }, 0, Fail, "broker 4: not registered;"},
		{"old Kafka: not listed", func(v *View) { v.Brokers = v.Brokers[1:]; v.FencedListed = false }, 0, Fail, "broker 4: not registered or fenced"},
		{"lagging observer", func(v *View) { v.Quorum.Observers[0].LogEndOffset = 480 }, 0, Fail, "observer lag 20 (at most 0)"},
		{"lag within the bound", func(v *View) { v.Quorum.Observers[0].LogEndOffset = 480 }, 50, Pass, "observer lag 20"},
		{"observer ahead of a stale leader offset", func(v *View) { v.Quorum.Observers[0].LogEndOffset = 501 }, 0, Pass, "observer lag 0"},
		{"unknown observer offset", func(v *View) { v.Quorum.Observers[0].LogEndOffset = -1 }, 1000, Fail, "observer lag"},
		{"not an observer", func(v *View) { v.Quorum.Observers = v.Quorum.Observers[1:] }, 0, Fail, "not an observer of the quorum"},
		{"no leader", func(v *View) { v.Quorum.LeaderID = -1 }, 0, Defer, "observer: no quorum leader reported"},
		{"under min ISR because of it", func(v *View) { v.Partitions[0].ISR = []int32{5} }, 0, Fail,
			"under min.insync.replicas without broker 4: t-0 (ISR 1 < 2)"},
		{"out of ISR but min ISR still met", func(v *View) { v.Partitions[0].ISR = []int32{5, 6} }, 0, Pass,
			"no partition under min.insync.replicas because of broker 4"},
		{"problems defer", func(v *View) { v.Problems = []string{"partitions: Metadata failed"} }, 0, Defer, "deferring"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := healthy()
			tt.change(v)
			d := AfterRestart(v, 4, tt.maxLag)
			if d.Verdict != tt.want || !strings.Contains(d.Line, tt.says) {
				t.Errorf("AfterRestart = %v %q, want %v saying %q", d.Verdict, d.Line, tt.want, tt.says)
			}
		})
	}
}

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		bad  string // "" = valid
	}{
		{"plain", Settings{Bootstrap: []string{"kafka:9092"}}, ""},
		{"ipv6", Settings{Bootstrap: []string{"[::1]:9092"}}, ""},
		{"scram with TLS", Settings{Bootstrap: []string{"k:9093"}, TLS: true, SASLMechanism: SASLScramSHA512, Username: "u", Password: "hunter2"}, ""},
		{"none", Settings{}, "no bootstrap address"},
		{"no port", Settings{Bootstrap: []string{"kafka"}}, "want host:port"},
		{"bad port", Settings{Bootstrap: []string{"kafka:x"}}, "bad port"},
		{"unknown mechanism", Settings{Bootstrap: []string{"k:1"}, SASLMechanism: "GSSAPI", Username: "u", Password: "p"}, "GSSAPI"},
		{"no password", Settings{Bootstrap: []string{"k:1"}, SASLMechanism: SASLPlain, Username: "u"}, "needs a username and a password"},
		{"CA without TLS", Settings{Bootstrap: []string{"k:1"}, CACert: []byte("x")}, "without TLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			switch {
			case tt.bad == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad)):
				t.Errorf("Validate: %v, want an error saying %q", err, tt.bad)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
	if _, err := Dial(Settings{Bootstrap: []string{"k:1"}, TLS: true, CACert: []byte("not pem")}); err == nil {
		t.Error("Dial accepted a CA certificate that is not PEM")
	}
}

// TestBeforeMoveHugeCluster: a huge or hostile answer (thousands of
// partitions the broker alone holds in sync, with long names, thousands
// of fenced brokers, voters behind) still gives one bounded line that
// names a few and counts the rest (the card escapes and cuts it further,
// internal/slackview).
func TestBeforeMoveHugeCluster(t *testing.T) {
	v := healthy()
	name := strings.Repeat("<!channel>*x*", 19) // 247 characters: Kafka's longest topic name is 249
	for i := range 5000 {
		v.Partitions = append(v.Partitions, Partition{Topic: name, Partition: int32(i), Leader: 4, Replicas: []int32{4, 5}, ISR: []int32{4}})
	}
	for id := int32(1000); id < 4000; id++ {
		v.Brokers = append(v.Brokers, Broker{ID: id, Fenced: true})
	}
	for id := int32(10); id < 3000; id++ {
		v.Quorum.Voters = append(v.Quorum.Voters, Replica{ID: id, LastCaughtUpTimestamp: -1})
	}
	d := BeforeMove(v, 4)
	if d.Verdict != Fail {
		t.Errorf("verdict %v, want fail", d.Verdict)
	}
	for _, want := range []string{"(need 1497; behind: 10, 11, 12, 13, 14 and 2985 more)", "brokers: 1000, 1001, 1002, 1003, 1004 and 2995 more fenced too",
		"and 4995 more: its copy is the only complete one"} {
		if !strings.Contains(d.Line, want) {
			t.Errorf("the line does not say %q", want)
		}
	}
	if n := len(d.Line); n > 2000 {
		t.Errorf("the line is %d bytes long, want a bounded line:\n%.300s…", n, d.Line)
	}
}
