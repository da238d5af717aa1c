// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"fmt"
	"slices"
	"strings"
)

// Verdict is a decision's outcome.
type Verdict int

// Verdicts. Defer means the picture was unclear: ask again later, never
// act on it.
const (
	Pass Verdict = iota
	Fail
	Defer
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Defer:
		return "defer"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is a verdict and the one human line that explains it, e.g.
// "quorum: leader 1, 3/3 voters caught up; brokers: no other fenced; no
// partition relies on broker 4 alone".
type Decision struct {
	Verdict Verdict
	Line    string
}

// decider gathers the parts of a decision's line; the worst part decides.
type decider struct {
	verdict Verdict
	parts   []string
}

func (d *decider) add(v Verdict, format string, args ...any) {
	if v > d.verdict {
		d.verdict = v
	}
	d.parts = append(d.parts, fmt.Sprintf(format, args...))
}

func (d *decider) decision() Decision {
	return Decision{Verdict: d.verdict, Line: strings.Join(d.parts, "; ")}
}

// unclear defers on a view with problems.
func unclear(v *View) (Decision, bool) {
	if v == nil {
		return Decision{Verdict: Defer, Line: "Kafka's view could not be read: deferring"}, true
	}
	if len(v.Problems) == 0 {
		return Decision{}, false
	}
	more := ""
	if n := len(v.Problems) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return Decision{Verdict: Defer, Line: fmt.Sprintf("Kafka's view is unclear: %s%s: deferring", v.Problems[0], more)}, true
}

// BeforeMove decides whether broker may be repaired now: the quorum has a
// leader and a majority of caught-up voters, no other broker is fenced,
// and broker is not the only in-sync replica of a partition that has other
// replicas.
func BeforeMove(v *View, broker int32) Decision {
	if d, ok := unclear(v); ok {
		return d
	}
	var d decider
	quorumPart(&d, v)
	otherBrokersPart(&d, v, broker)
	onlyISRPart(&d, v, broker)
	return d.decision()
}

// quorumPart applies KafkaQuorumCheck: a voter is caught up when its last
// caught-up time is within controller.quorum.fetch.timeout.ms of the
// leader's; at least (voters+2)/2 must be (the leader counts).
func quorumPart(d *decider, v *View) {
	q := v.Quorum
	if q == nil {
		d.add(Defer, "quorum: not reported")
		return
	}
	if q.LeaderID < 0 {
		d.add(Defer, "quorum: no leader reported (epoch %d)", q.LeaderEpoch)
		return
	}
	i := slices.IndexFunc(q.Voters, func(r Replica) bool { return r.ID == q.LeaderID })
	if i < 0 {
		d.add(Defer, "quorum: leader %d is not among the voters %s", q.LeaderID, ids(q.Voters))
		return
	}
	ref := referenceTime(q, q.Voters[i])
	if ref < 0 {
		d.add(Defer, "quorum: leader %d reports no caught-up times", q.LeaderID)
		return
	}
	caught, behind := 0, []string{}
	for _, r := range q.Voters {
		if r.ID == q.LeaderID || (r.LastCaughtUpTimestamp >= 0 && ref-r.LastCaughtUpTimestamp < v.FetchTimeout.Milliseconds()) {
			caught++
			continue
		}
		behind = append(behind, fmt.Sprint(r.ID))
	}
	need := (len(q.Voters) + 2) / 2
	if caught < need {
		d.add(Fail, "quorum: leader %d, only %d/%d voters caught up (need %d; behind: %s)",
			q.LeaderID, caught, len(q.Voters), need, list(behind, 5))
		return
	}
	d.add(Pass, "quorum: leader %d, %d/%d voters caught up", q.LeaderID, caught, len(q.Voters))
}

// referenceTime is the leader's last caught-up time, or, when the leader
// reports none for itself (-1, as older versions do), the latest any
// replica reports.
func referenceTime(q *Quorum, leader Replica) int64 {
	if leader.LastCaughtUpTimestamp >= 0 {
		return leader.LastCaughtUpTimestamp
	}
	ref := int64(-1)
	for _, r := range slices.Concat(q.Voters, q.Observers) {
		ref = max(ref, r.LastCaughtUpTimestamp, r.LastFetchTimestamp)
	}
	return ref
}

// otherBrokersPart fails when a broker other than the one under repair is
// fenced, or (before DescribeCluster listed fenced brokers) hosts replicas
// without being listed as unfenced.
func otherBrokersPart(d *decider, v *View, broker int32) {
	var down []string
	for _, id := range unavailable(v) {
		if id != broker {
			down = append(down, fmt.Sprint(id))
		}
	}
	if len(down) > 0 {
		what := "fenced"
		if !v.FencedListed {
			what = "not registered or fenced"
		}
		d.add(Fail, "brokers: %s %s too: one broker at a time", list(down, 5), what)
		return
	}
	d.add(Pass, "brokers: no other fenced")
}

// unavailable lists the brokers that are fenced, or, when the cluster does
// not list fenced brokers, that host replicas or observe the quorum
// without being listed.
func unavailable(v *View) []int32 {
	var out []int32
	listed := map[int32]bool{}
	for _, b := range v.Brokers {
		listed[b.ID] = true
		if b.Fenced {
			out = append(out, b.ID)
		}
	}
	if v.FencedListed {
		return out
	}
	known := map[int32]bool{}
	for _, p := range v.Partitions {
		for _, id := range p.Replicas {
			known[id] = true
		}
	}
	for id := range known {
		if !listed[id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// onlyISRPart fails when broker is the only in-sync replica of a
// partition that has other replicas: its copy is the only complete one.
func onlyISRPart(d *decider, v *View, broker int32) {
	var alone []string
	for _, p := range v.Partitions {
		if len(p.Replicas) > 1 && len(p.ISR) == 1 && p.ISR[0] == broker {
			alone = append(alone, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
		}
	}
	if len(alone) > 0 {
		d.add(Fail, "broker %d is the only in-sync replica of %s: its copy is the only complete one", broker, list(alone, 5))
		return
	}
	d.add(Pass, "no partition relies on broker %d alone", broker)
}

// AfterRestart decides whether broker came back: registered, unfenced,
// caught up as an observer of the quorum (lag at most maxLag records
// behind the leader's log end), and no partition is under
// min.insync.replicas because broker is out of its ISR. Fail means "not
// yet".
func AfterRestart(v *View, broker int32, maxLag int64) Decision {
	if d, ok := unclear(v); ok {
		return d
	}
	var d decider
	registrationPart(&d, v, broker)
	observerPart(&d, v, broker, maxLag)
	minISRPart(&d, v, broker)
	return d.decision()
}

func registrationPart(d *decider, v *View, broker int32) {
	i := slices.IndexFunc(v.Brokers, func(b Broker) bool { return b.ID == broker })
	switch {
	case i < 0 && v.FencedListed:
		d.add(Fail, "broker %d: not registered", broker)
	case i < 0:
		d.add(Fail, "broker %d: not registered or fenced", broker)
	case v.Brokers[i].Fenced:
		d.add(Fail, "broker %d: registered, fenced", broker)
	default:
		d.add(Pass, "broker %d: registered, unfenced", broker)
	}
}

func observerPart(d *decider, v *View, broker int32, maxLag int64) {
	q := v.Quorum
	if q == nil || q.LeaderID < 0 {
		d.add(Defer, "observer: no quorum leader reported")
		return
	}
	i := slices.IndexFunc(q.Observers, func(r Replica) bool { return r.ID == broker })
	if i < 0 {
		d.add(Fail, "not an observer of the quorum")
		return
	}
	end := q.HighWatermark
	if l := slices.IndexFunc(q.Voters, func(r Replica) bool { return r.ID == q.LeaderID }); l >= 0 && q.Voters[l].LogEndOffset >= 0 {
		end = q.Voters[l].LogEndOffset
	}
	lag := end - q.Observers[i].LogEndOffset
	if q.Observers[i].LogEndOffset < 0 || lag > maxLag {
		d.add(Fail, "observer lag %d (at most %d)", lag, maxLag)
		return
	}
	d.add(Pass, "observer lag %d", max(lag, 0))
}

// minISRPart fails for partitions of broker whose ISR, without it, is
// below the topic's min.insync.replicas.
func minISRPart(d *decider, v *View, broker int32) {
	var under []string
	for _, p := range v.Partitions {
		want, ok := v.MinISR[p.Topic]
		if !ok || !slices.Contains(p.Replicas, broker) || slices.Contains(p.ISR, broker) || len(p.ISR) >= want {
			continue
		}
		under = append(under, fmt.Sprintf("%s-%d (ISR %d < %d)", p.Topic, p.Partition, len(p.ISR), want))
	}
	if len(under) > 0 {
		d.add(Fail, "under min.insync.replicas without broker %d: %s", broker, list(under, 5))
		return
	}
	d.add(Pass, "no partition under min.insync.replicas because of broker %d", broker)
}

// ids lists the first five replicas' ids and counts the rest.
func ids(rs []Replica) string {
	shown := rs[:min(len(rs), 5)]
	s := make([]string, len(shown))
	for i, r := range shown {
		s[i] = fmt.Sprint(r.ID)
	}
	more := ""
	if n := len(rs) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return "[" + strings.Join(s, ",") + more + "]"
}

// list joins at most n items and says how many more there are.
func list(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
