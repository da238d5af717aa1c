// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

// Table tests of the alert pipeline's stages, one stage at a time: an
// evaluation in, the stage's decisions and the notifier's calls out. No
// informer, no API server, no Slack: the notifier is the recorder of
// helpers_test.go.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// quiet discards the stages' warnings.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// prodGroup is the group (and cluster silence) key of the test cluster.
var prodGroup = alert.KafkaClusterKey(testNS, testCluster)

// evalAt is an evaluation at now over st, with the given firing alerts.
func evalAt(now time.Time, st *state, fire ...*firingAlert) *evaluation {
	return &evaluation{now: now, st: st, pods: map[kube.PodKey]*observed{}, fire: fire, failed: map[kube.PodKey]bool{}}
}

// testAlert is the alert of pod for rule in the test cluster.
func testAlert(pod, rule string) alert.Alert {
	return alert.Alert{
		Key: testNS + "/" + pod + "/" + rule, Namespace: testNS, Pod: pod, PodUID: "uid-" + pod,
		KafkaCluster: testCluster, Rule: rule, Reason: alert.ReasonCrashLoop,
	}
}

// testRecord is the firing record of testAlert(pod, rule), started at start.
func testRecord(pod, rule string, start time.Time) *alertRecord {
	a := testAlert(pod, rule)
	return &alertRecord{
		Key: a.Key, Namespace: a.Namespace, Pod: a.Pod, PodUID: a.PodUID, KafkaCluster: a.KafkaCluster, Rule: a.Rule,
		Fingerprint: fingerprint(a), Reason: a.Reason, StartsAt: start, UpdatedAt: start,
	}
}

// notified marks r as posted at at, as message ref (in group when set).
func notified(r *alertRecord, at time.Time, ts, group string) *alertRecord {
	r.NotifiedAt, r.NotifiedFingerprint, r.Group = at, r.Fingerprint, group
	r.Ref = alert.MessageRef{Channel: "CALERTS", TS: ts}
	return r
}

// stateOf is a state holding the records (by key) and groups.
func stateOf(recs []*alertRecord, groups ...*groupRecord) *state {
	st := newState()
	for _, r := range recs {
		st.Alerts[r.Key] = r
	}
	for _, g := range groups {
		st.Groups[g.Key] = g
	}
	return st
}

// testGroup is the test cluster's group, posted as message 0.9 at t0 and
// resolved at resolved (zero: open).
func testGroup(resolved time.Time) *groupRecord {
	return &groupRecord{Key: prodGroup, Namespace: testNS, KafkaCluster: testCluster,
		Ref: alert.MessageRef{Channel: "CALERTS", TS: "0.9"}, OpenedAt: t0, UpdatedAt: t0, ResolvedAt: resolved}
}

// calls describes the recorder's calls, one line each, for comparison.
func calls(r *recorder) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.log {
		switch s.kind {
		case "notify":
			out = append(out, "notify "+s.alert.Key)
		case "resolve":
			out = append(out, fmt.Sprintf("resolve %s %s at %s", s.alert.Key, s.alert.Resolution, s.ref.TS))
		case "group", "resolve-group":
			var pods []string
			for _, a := range s.group.Alerts {
				pods = append(pods, a.Pod)
			}
			line := fmt.Sprintf("%s %s %v", s.kind, s.group.Key, pods)
			at := s.ref // the group message resolved
			if s.kind == "group" {
				line += fmt.Sprintf(" firing=%d", s.group.Firing)
				at = s.group.Ref // the open group added to (zero: a new one)
			}
			if !at.IsZero() {
				line += " at " + at.TS
			}
			out = append(out, line)
		default:
			out = append(out, s.kind)
		}
	}
	return out
}

// downNotifier is a notifier whose posts and alert updates (Notify,
// NotifyGroup, Resolve) fail.
type downNotifier struct{ recorder }

// errSlackDown is the error of every downNotifier call.
var errSlackDown = errors.New("slack: service unavailable")

func (*downNotifier) Notify(context.Context, alert.Alert) (alert.MessageRef, error) {
	return alert.MessageRef{}, errSlackDown
}

func (*downNotifier) NotifyGroup(context.Context, alert.Group) (alert.MessageRef, error) {
	return alert.MessageRef{}, errSlackDown
}

func (*downNotifier) Resolve(context.Context, alert.MessageRef, alert.Alert) error {
	return errSlackDown
}

// TestNewAlert: the diagnosis of an unhealthy pod becomes its alert, named
// by the best finding (or unclassified), in the pod's Kafka cluster.
func TestNewAlert(t *testing.T) {
	metadata, lostFound := metadataFinding(""), lostFoundFinding()
	pod := brokerPod("b0")
	det := Detection{Reason: alert.ReasonCrashLoop, Container: "kafka", Detail: "container kafka is in CrashLoopBackOff after 5 restarts"}
	tests := []struct {
		name string
		d    diagnosis
		want alert.Alert
	}{
		{"the best finding names the alert",
			diagnosis{findings: []diagnose.Finding{metadata, lostFound}},
			alert.Alert{Key: "kafka/b0/" + metadata.Rule, Rule: metadata.Rule, Title: metadata.Title, Severity: metadata.Severity,
				KafkaCluster: testCluster, Findings: []diagnose.Finding{metadata, lostFound}}},
		{"no finding is unclassified",
			diagnosis{},
			alert.Alert{Key: "kafka/b0/" + RuleUnclassified, Rule: RuleUnclassified, KafkaCluster: testCluster}},
		{"the snapshot's cluster wins over the labels",
			diagnosis{snapshot: diagnose.Snapshot{KafkaCluster: "from-snapshot"}},
			alert.Alert{Key: "kafka/b0/" + RuleUnclassified, Rule: RuleUnclassified, KafkaCluster: "from-snapshot",
				Snapshot: diagnose.Snapshot{KafkaCluster: "from-snapshot"}}},
		{"a failed read is said",
			diagnosis{readErr: "context deadline exceeded"},
			alert.Alert{Key: "kafka/b0/" + RuleUnclassified, Rule: RuleUnclassified, KafkaCluster: testCluster, ReadError: "context deadline exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newAlert(&observed{key: podKey("b0"), pod: pod, det: det}, tt.d)
			want := tt.want
			want.Namespace, want.Pod, want.PodUID = testNS, "b0", "uid-b0"
			want.Reason, want.Detail = det.Reason, det.Detail
			if !reflect.DeepEqual(got, want) {
				t.Errorf("newAlert =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestFingerprint: what an alert says is its rule, severity, risk, remedy
// and (for the metadata log) whether the broker's copy diverged; titles
// and evidence (timestamps) are left out, so they never re-alert.
func TestFingerprint(t *testing.T) {
	base := testAlert("b0", "metadata-log-offset-mismatch")
	base.Findings = []diagnose.Finding{metadataFinding("")}
	with := func(change func(f *diagnose.Finding)) alert.Alert {
		a := base
		f := metadataFinding("")
		change(&f)
		a.Findings = []diagnose.Finding{f}
		return a
	}
	tests := []struct {
		name string
		a    alert.Alert
		same bool
	}{
		{"other evidence", with(func(f *diagnose.Finding) { f.Evidence = []string{"at 09:14:02 UnexpectedAppendOffsetException"} }), true},
		{"other title", with(func(f *diagnose.Finding) { f.Title = "reworded" }), true},
		{"other pod", func() alert.Alert { a := base; a.Pod, a.PodUID = "b1", "uid-b1"; return a }(), true},
		{"other severity", with(func(f *diagnose.Finding) { f.Severity = diagnose.SeverityHigh }), false},
		{"other risk", with(func(f *diagnose.Finding) { f.Risk = diagnose.RiskHigh }), false},
		{"no longer automated", with(func(f *diagnose.Finding) { f.Remedy.Automated = false }), false},
		{"other target", with(func(f *diagnose.Finding) { f.Remedy.Target = "__cluster_metadata-1" }), false},
		{"the broker's copy diverged", with(func(f *diagnose.Finding) { f.Offsets = &diagnose.OffsetTriage{LocalDivergence: true} }), false},
		{"other rule", func() alert.Alert { a := base; a.Rule = "other"; return a }(), false},
		{"no finding", func() alert.Alert { a := base; a.Findings = nil; return a }(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fingerprint(tt.a) == fingerprint(base); got != tt.same {
				t.Errorf("same fingerprint = %t, want %t", got, tt.same)
			}
		})
	}
	diverged := with(func(f *diagnose.Finding) { f.Offsets = &diagnose.OffsetTriage{LocalDivergence: true} })
	kept := with(func(f *diagnose.Finding) { f.Offsets = &diagnose.OffsetTriage{LocalDivergence: false} })
	if fingerprint(diverged) == fingerprint(kept) {
		t.Error("a diverged and an intact copy have one fingerprint")
	}
}

// TestRecordStage: a firing alert opens an episode or updates its record;
// a write happens only when something worth keeping changed; the channel
// and source of an external alert are taken only before the first post.
func TestRecordStage(t *testing.T) {
	now, earlier := t0.Add(time.Hour), t0
	const rule = "metadata-log-offset-mismatch"
	healthy := func(r *alertRecord) *alertRecord { r.HealthySince = earlier.Add(time.Minute); return r }
	resolved := func(r *alertRecord) *alertRecord { r.ResolvedAt = earlier.Add(time.Minute); return r }
	routed := func(a *alert.Alert) { a.Channel = "CROUTED" }
	raised := func(a *alert.Alert) { a.Source, a.SourceAlert = "Alertmanager", "KubePodCrashLooping" }
	tests := []struct {
		name   string
		prior  *alertRecord // nil: no record
		change func(a *alert.Alert)
		// The record after the stage (its fingerprint is the alert's, and
		// it is firing and not healthy), and whether it was written.
		starts, updated        time.Time
		channel, source, title string
		dirty                  bool
	}{
		{"first sight opens an episode", nil, nil, now, now, "", "", "", true},
		{"the same alert again writes nothing", testRecord("b0", rule, earlier), nil, earlier, earlier, "", "", "", false},
		{"a changed finding updates the record", testRecord("b0", rule, earlier),
			func(a *alert.Alert) { a.Findings = []diagnose.Finding{metadataFinding("-diverged")} }, earlier, now, "", "", "", true},
		{"a replaced pod updates the record", testRecord("b0", rule, earlier),
			func(a *alert.Alert) { a.PodUID = "uid-b0-2" }, earlier, now, "", "", "", true},
		{"crashing again ends the healthy spell", healthy(testRecord("b0", rule, earlier)), nil, earlier, now, "", "", "", true},
		{"a resolved alert firing again is a new episode", resolved(testRecord("b0", rule, earlier)), nil, now, now, "", "", "", true},
		{"a new title is shown without a write", testRecord("b0", rule, earlier),
			func(a *alert.Alert) { a.Title = "Metadata log diverged (reworded)" }, earlier, earlier, "", "", "Metadata log diverged (reworded)", false},
		{"a routed channel is taken before the first post", testRecord("b0", rule, earlier), routed, earlier, now, "CROUTED", "", "", true},
		{"a routed channel is ignored after the first post", notified(testRecord("b0", rule, earlier), earlier, "1.1", ""), routed,
			earlier, earlier, "", "", "", false},
		{"the source is taken before the first post", testRecord("b0", rule, earlier), raised, earlier, now, "", "Alertmanager", "", true},
		{"the source is ignored after the first post", notified(testRecord("b0", rule, earlier), earlier, "1.1", ""), raised,
			earlier, earlier, "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testAlert("b0", rule)
			if tt.change != nil {
				tt.change(&a)
			}
			st := newState()
			if tt.prior != nil {
				st.Alerts[tt.prior.Key] = tt.prior
			}
			f := &firingAlert{alert: a}
			e := evalAt(now, st, f)
			if err := (recordStage{}).run(context.Background(), e); err != nil {
				t.Fatal(err)
			}
			r := st.Alerts[a.Key]
			if r == nil || f.rec != r {
				t.Fatalf("record %v, firing alert's record %v", r, f.rec)
			}
			got := alertRecord{StartsAt: r.StartsAt, UpdatedAt: r.UpdatedAt, Channel: r.Channel, Source: r.Source, Title: r.Title,
				Fingerprint: r.Fingerprint, HealthySince: r.HealthySince, ResolvedAt: r.ResolvedAt}
			want := alertRecord{StartsAt: tt.starts, UpdatedAt: tt.updated, Channel: tt.channel, Source: tt.source, Title: tt.title,
				Fingerprint: fingerprint(a)}
			if got != want {
				t.Errorf("record =\n%+v\nwant\n%+v", got, want)
			}
			if e.dirty != tt.dirty {
				t.Errorf("dirty = %t, want %t", e.dirty, tt.dirty)
			}
			// The alert goes on with what the record keeps.
			if f.alert.StartsAt != r.StartsAt || f.alert.Channel != r.Channel || f.alert.Source != r.Source {
				t.Errorf("alert starts %v in %q from %q; record %v in %q from %q",
					f.alert.StartsAt, f.alert.Channel, f.alert.Source, r.StartsAt, r.Channel, r.Source)
			}
		})
	}
}

// TestSilenceStage: an active silence covers an alert by its key, its pod
// or its Kafka cluster; an ended one covers nothing.
func TestSilenceStage(t *testing.T) {
	now := t0
	tests := []struct {
		key   string
		until time.Time
		want  bool
	}{
		{"kafka/b0/metadata-log-offset-mismatch", now.Add(time.Hour), true},
		{"kafka/b0", now.Add(time.Hour), true},
		{prodGroup, now.Add(time.Hour), true},
		{"kafka/b0/other-rule", now.Add(time.Hour), false},
		{"kafka/b1", now.Add(time.Hour), false},
		{alert.KafkaClusterKey(testNS, "staging"), now.Add(time.Hour), false},
		{"kafka/b0", now, false},
		{"kafka/b0", now.Add(-time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s until %s", tt.key, tt.until.Sub(now)), func(t *testing.T) {
			st := newState()
			st.Silences["s1"] = &alert.Silence{ID: "s1", Key: tt.key, Until: tt.until}
			f := &firingAlert{rec: testRecord("b0", "metadata-log-offset-mismatch", now)}
			if err := (silenceStage{}).run(context.Background(), evalAt(now, st, f)); err != nil {
				t.Fatal(err)
			}
			if f.silenced != tt.want {
				t.Errorf("silenced = %t, want %t", f.silenced, tt.want)
			}
		})
	}
}

// TestDedupeStage: notify what was never posted, what changed since, and
// what is due for a repeat; never what a silence covers.
func TestDedupeStage(t *testing.T) {
	const repeat = 4 * time.Hour
	now := t0.Add(24 * time.Hour)
	tests := []struct {
		name                        string
		silenced                    bool
		notifiedAgo                 time.Duration // 0: never notified
		changed                     bool          // the fingerprint differs from the notified one
		notify, wantChanged, wantRe bool
	}{
		{"never notified", false, 0, false, true, false, false},
		{"silenced, never notified", true, 0, false, false, false, false},
		{"silenced, changed", true, time.Hour, true, false, false, false},
		{"silenced, repeat due", true, repeat, false, false, false, false},
		{"changed", false, time.Hour, true, true, true, false},
		{"changed, repeat due too", false, 2 * repeat, true, true, true, false},
		{"unchanged, within the repeat interval", false, repeat - time.Second, false, false, false, false},
		{"unchanged, repeat due", false, repeat, false, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRecord("b0", "metadata-log-offset-mismatch", t0)
			if tt.notifiedAgo > 0 {
				notified(r, now.Add(-tt.notifiedAgo), "1.1", "")
			}
			if tt.changed {
				r.Fingerprint = "changed"
			}
			f := &firingAlert{rec: r, alert: testAlert("b0", r.Rule), silenced: tt.silenced}
			if err := (dedupeStage{repeat: repeat}).run(context.Background(), evalAt(now, stateOf([]*alertRecord{r}), f)); err != nil {
				t.Fatal(err)
			}
			if f.notify != tt.notify || f.changed != tt.wantChanged || f.repeat != tt.wantRe {
				t.Errorf("notify, changed, repeat = %t, %t, %t; want %t, %t, %t",
					f.notify, f.changed, f.repeat, tt.notify, tt.wantChanged, tt.wantRe)
			}
			if f.alert.Changed != f.changed || f.alert.Repeat != f.repeat {
				t.Errorf("the alert says changed %t, repeat %t", f.alert.Changed, f.alert.Repeat)
			}
		})
	}
}

// toNotify is one alert the dedupe stage passed to the notify stage.
type toNotify struct {
	pod, rule, cluster, channel string
	changed                     bool
	prior                       *alertRecord // nil: a new, unposted record
}

// TestNotifyStage: alerts of one cluster post alone below the threshold
// and as one group at it (or while the cluster's group is open); a routed
// alert always posts alone; a changed alert marks its old message
// superseded first; a failed post marks its pods for a retry.
func TestNotifyStage(t *testing.T) {
	now := t0.Add(time.Hour)
	const rule = "metadata-log-offset-mismatch"
	tests := []struct {
		name      string
		threshold int
		alerts    []toNotify
		groups    []*groupRecord
		others    []*alertRecord // records not in this evaluation
		down      bool           // every post fails
		want      []string
		// wantGroup is the group each alert was notified in ("" alone, "-"
		// not notified).
		wantGroup []string
		wantErr   bool
	}{
		{name: "below the threshold each posts alone", threshold: 3,
			alerts: []toNotify{{pod: "b0"}, {pod: "b1"}},
			want:   []string{"notify kafka/b0/" + rule, "notify kafka/b1/" + rule}, wantGroup: []string{"", ""}},
		{name: "at the threshold one group", threshold: 3,
			alerts:    []toNotify{{pod: "b2"}, {pod: "b0"}, {pod: "b1"}},
			want:      []string{"group " + prodGroup + " [b0 b1 b2] firing=3"},
			wantGroup: []string{prodGroup, prodGroup, prodGroup}},
		{name: "two rules of one pod are one pod", threshold: 2,
			alerts:    []toNotify{{pod: "b0"}, {pod: "b0", rule: "other"}},
			want:      []string{"notify kafka/b0/" + rule, "notify kafka/b0/other"},
			wantGroup: []string{"", ""}},
		{name: "clusters group apart", threshold: 2,
			alerts: []toNotify{{pod: "b0"}, {pod: "s0", cluster: "staging"}, {pod: "b1"}},
			want: []string{"group " + prodGroup + " [b0 b1] firing=2",
				"notify kafka/s0/" + rule},
			wantGroup: []string{prodGroup, "", prodGroup}},
		{name: "an open group takes a new member", threshold: 3,
			alerts:    []toNotify{{pod: "b1"}},
			groups:    []*groupRecord{testGroup(time.Time{})},
			others:    []*alertRecord{notified(testRecord("b0", rule, t0), t0, "0.9", prodGroup)},
			want:      []string{"group " + prodGroup + " [b1] firing=2 at 0.9"},
			wantGroup: []string{prodGroup}},
		{name: "a resolved group takes none", threshold: 3,
			alerts:    []toNotify{{pod: "b1"}},
			groups:    []*groupRecord{testGroup(t0.Add(time.Minute))},
			want:      []string{"notify kafka/b1/" + rule},
			wantGroup: []string{""}},
		{name: "a routed alert posts alone", threshold: 2,
			alerts:    []toNotify{{pod: "b0", channel: "CROUTED"}, {pod: "b1"}, {pod: "b2"}},
			want:      []string{"notify kafka/b0/" + rule, "group " + prodGroup + " [b1 b2] firing=2"},
			wantGroup: []string{"", prodGroup, prodGroup}},
		{name: "a changed alert marks its old message superseded", threshold: 3,
			alerts: []toNotify{{pod: "b0", changed: true, prior: notified(testRecord("b0", rule, t0), t0, "0.5", "")}},
			want: []string{"resolve kafka/b0/" + rule + " superseded at 0.5",
				"notify kafka/b0/" + rule},
			wantGroup: []string{""}},
		{name: "a changed group member stays in its group's message", threshold: 3,
			alerts:    []toNotify{{pod: "b0", changed: true, prior: notified(testRecord("b0", rule, t0), t0, "0.9", prodGroup)}},
			groups:    []*groupRecord{testGroup(time.Time{})},
			want:      []string{"group " + prodGroup + " [b0] firing=1 at 0.9"},
			wantGroup: []string{prodGroup}},
		{name: "a changed member of a group no longer on record posts alone, its group's message untouched", threshold: 3,
			alerts:    []toNotify{{pod: "b0", changed: true, prior: notified(testRecord("b0", rule, t0), t0, "0.9", prodGroup)}},
			want:      []string{"notify kafka/b0/" + rule},
			wantGroup: []string{""}},
		{name: "a failed post is retried", threshold: 3, down: true,
			alerts: []toNotify{{pod: "b0"}}, wantGroup: []string{"-"}, wantErr: true},
		{name: "a failed group post retries every member", threshold: 2, down: true,
			alerts: []toNotify{{pod: "b0"}, {pod: "b1"}}, wantGroup: []string{"-", "-"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := stateOf(tt.others, tt.groups...)
			var fire []*firingAlert
			for _, n := range tt.alerts {
				a := testAlert(n.pod, cmp.Or(n.rule, rule))
				a.KafkaCluster, a.Channel = cmp.Or(n.cluster, testCluster), n.channel
				r := n.prior
				if r == nil {
					r = testRecord(n.pod, a.Rule, t0)
					r.KafkaCluster = a.KafkaCluster
				}
				st.Alerts[r.Key] = r
				fire = append(fire, &firingAlert{rec: r, alert: a, notify: true, changed: n.changed})
			}
			e := evalAt(now, st, fire...)
			notes := &recorder{}
			var n Notifier = notes
			if tt.down {
				n = &downNotifier{}
			}
			err := notifyStage{n: n, threshold: tt.threshold, log: quiet}.run(context.Background(), e)
			if (err != nil) != tt.wantErr {
				t.Fatalf("run: %v, want an error: %t", err, tt.wantErr)
			}
			if got := calls(notes); !slices.Equal(got, tt.want) {
				t.Errorf("calls =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for i, f := range fire {
				got := "-"
				if !f.rec.NotifiedAt.IsZero() {
					got = f.rec.Group
					if f.rec.NotifiedAt != now || f.rec.NotifiedFingerprint != f.rec.Fingerprint || f.rec.Ref.IsZero() {
						t.Errorf("%s: notified at %v, fingerprint %q of %q, ref %v", f.rec.Key, f.rec.NotifiedAt,
							f.rec.NotifiedFingerprint, f.rec.Fingerprint, f.rec.Ref)
					}
				}
				if got != tt.wantGroup[i] {
					t.Errorf("%s notified in group %q, want %q", f.rec.Key, got, tt.wantGroup[i])
				}
				if retry := e.failed[podKey(f.rec.Pod)]; retry != (got == "-") {
					t.Errorf("%s: retry %t", f.rec.Key, retry)
				}
			}
			if g := st.Groups[prodGroup]; slices.Contains(tt.wantGroup, prodGroup) &&
				(g == nil || !g.ResolvedAt.IsZero() || g.UpdatedAt != now || g.Ref.IsZero()) {
				t.Errorf("the group's record after posting: %+v", g)
			}
			if e.dirty != !tt.wantErr {
				t.Errorf("dirty = %t", e.dirty)
			}
		})
	}
}

// inScope is one pod the resolve stage looks at.
type inScope struct {
	pod   string
	gone  bool
	ready bool
}

// TestResolveStage: an open alert no longer firing resolves at once when
// the pod fires another rule, after the grace when the pod is Ready or
// gone (at once after an external resolution), never while the pod is
// not Ready; an alert never posted resolves without a message; a group
// resolves with its last member.
func TestResolveStage(t *testing.T) {
	const grace = 5 * time.Minute
	const rule = "metadata-log-offset-mismatch"
	now := t0.Add(time.Hour)
	posted := func(pod string) *alertRecord { return notified(testRecord(pod, rule, t0), t0, "0.5", "") }
	healthySince := func(r *alertRecord, ago time.Duration) *alertRecord { r.HealthySince = now.Add(-ago); return r }
	tests := []struct {
		name     string
		recs     []*alertRecord
		groups   []*groupRecord
		pods     []inScope
		firing   []string // rules firing now, as "pod/rule"
		external bool     // b0's external alert just resolved
		down     bool     // every update fails
		// want is the resolution of each record in recs ("" still firing),
		// then its HealthySince as an offset from now ("-" zero).
		want        []string
		wantCalls   []string
		wantRecheck bool
		wantErr     bool
	}{
		{name: "still firing", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0"}},
			firing: []string{"b0/" + rule}, want: []string{" -"}},
		{name: "another rule fires instead: superseded at once", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0"}},
			firing: []string{"b0/other"}, want: []string{"superseded -"},
			wantCalls: []string{"resolve kafka/b0/" + rule + " superseded at 0.5"}},
		{name: "not Ready: no grace yet", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0"}},
			want: []string{" -"}},
		{name: "not Ready again: the grace restarts", recs: []*alertRecord{healthySince(posted("b0"), time.Minute)}, pods: []inScope{{pod: "b0"}},
			want: []string{" -"}},
		{name: "Ready: the grace starts", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0", ready: true}},
			want: []string{" 0s"}, wantRecheck: true},
		{name: "Ready within the grace", recs: []*alertRecord{healthySince(posted("b0"), grace-time.Second)}, pods: []inScope{{pod: "b0", ready: true}},
			want: []string{" -4m59s"}},
		{name: "Ready for the grace: recovered", recs: []*alertRecord{healthySince(posted("b0"), grace)}, pods: []inScope{{pod: "b0", ready: true}},
			want: []string{"recovered -5m0s"}, wantCalls: []string{"resolve kafka/b0/" + rule + " recovered at 0.5"}},
		{name: "gone for the grace: pod gone", recs: []*alertRecord{healthySince(posted("b0"), grace)}, pods: []inScope{{pod: "b0", gone: true}},
			want: []string{"pod-gone -5m0s"}, wantCalls: []string{"resolve kafka/b0/" + rule + " pod-gone at 0.5"}},
		{name: "gone: the grace starts", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0", gone: true}},
			want: []string{" 0s"}, wantRecheck: true},
		{name: "resolved outside: no grace", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0", ready: true}}, external: true,
			want: []string{"recovered 0s"}, wantCalls: []string{"resolve kafka/b0/" + rule + " recovered at 0.5"}, wantRecheck: true},
		{name: "resolved outside, pod not Ready: stays open", recs: []*alertRecord{posted("b0")}, pods: []inScope{{pod: "b0"}}, external: true,
			want: []string{" -"}},
		{name: "never posted: resolved without a message", recs: []*alertRecord{healthySince(testRecord("b0", rule, t0), grace)},
			pods: []inScope{{pod: "b0", ready: true}}, want: []string{"recovered -5m0s"}},
		{name: "out of scope: untouched", recs: []*alertRecord{healthySince(posted("b0"), grace)}, pods: []inScope{{pod: "b1", ready: true}},
			want: []string{" -5m0s"}},
		{name: "a failed update still resolves", recs: []*alertRecord{healthySince(posted("b0"), grace)}, pods: []inScope{{pod: "b0", ready: true}},
			down: true, want: []string{"recovered -5m0s"}, wantErr: true},
		{name: "the last member resolves its group",
			recs: []*alertRecord{
				healthySince(notified(testRecord("b0", rule, t0), t0, "0.9", prodGroup), grace),
				func() *alertRecord {
					r := notified(testRecord("b1", rule, t0), t0, "0.9", prodGroup)
					r.ResolvedAt, r.Resolution = t0.Add(time.Minute), alert.ResolutionRecovered
					return r
				}(),
			},
			groups: []*groupRecord{testGroup(time.Time{})},
			pods:   []inScope{{pod: "b0", ready: true}},
			want:   []string{"recovered -5m0s", "recovered -"},
			wantCalls: []string{"resolve kafka/b0/" + rule + " recovered at 0.9",
				"resolve-group " + prodGroup + " [b0 b1] at 0.9"}},
		{name: "a group with a member firing stays open",
			recs: []*alertRecord{
				healthySince(notified(testRecord("b0", rule, t0), t0, "0.9", prodGroup), grace),
				notified(testRecord("b1", rule, t0), t0, "0.9", prodGroup),
			},
			groups: []*groupRecord{testGroup(time.Time{})},
			pods:   []inScope{{pod: "b0", ready: true}},
			want:   []string{"recovered -5m0s", " -"}, wantCalls: []string{"resolve kafka/b0/" + rule + " recovered at 0.9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := stateOf(tt.recs, tt.groups...)
			var fire []*firingAlert
			for _, pr := range tt.firing {
				pod, r, _ := strings.Cut(pr, "/")
				rec := testRecord(pod, r, t0)
				if prior, ok := st.Alerts[rec.Key]; ok {
					rec = prior
				}
				st.Alerts[rec.Key] = rec
				fire = append(fire, &firingAlert{rec: rec, alert: testAlert(pod, r)})
			}
			e := evalAt(now, st, fire...)
			for _, p := range tt.pods {
				o := &observed{key: podKey(p.pod)}
				if !p.gone {
					o.pod, o.det = brokerPod(p.pod), Detection{Ready: p.ready}
				}
				e.pods[o.key] = o
			}
			if tt.external {
				e.resolvedExternally = map[kube.PodKey]bool{podKey("b0"): true}
			}
			notes := &recorder{}
			var n Notifier = notes
			if tt.down {
				n = &downNotifier{}
			}
			err := resolveStage{n: n, grace: grace, log: quiet}.run(context.Background(), e)
			if (err != nil) != tt.wantErr {
				t.Fatalf("run: %v, want an error: %t", err, tt.wantErr)
			}
			var got []string
			for _, r := range tt.recs {
				since := "-"
				if !r.HealthySince.IsZero() {
					since = r.HealthySince.Sub(now).String()
				}
				got = append(got, string(r.Resolution)+" "+since)
				if r.Resolution != "" && r.ResolvedAt.IsZero() {
					t.Errorf("%s: resolution %q without a time", r.Key, r.Resolution)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("records (resolution, healthy since) = %q, want %q", got, tt.want)
			}
			if got := calls(notes); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("calls =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.wantCalls, "\n"))
			}
			if recheck := slices.Contains(e.recheck, podKey("b0")); recheck != tt.wantRecheck {
				t.Errorf("b0 rechecked after the grace: %t, want %t", recheck, tt.wantRecheck)
			}
			for _, gk := range slices.Sorted(maps.Keys(st.Groups)) {
				g := st.Groups[gk]
				resolving := slices.ContainsFunc(tt.wantCalls, func(c string) bool { return strings.HasPrefix(c, "resolve-group "+gk) })
				if resolved := !g.ResolvedAt.IsZero(); resolved != resolving {
					t.Errorf("group %s resolved: %t, want %t", gk, resolved, resolving)
				}
			}
		})
	}
}

// TestEvaluationNeedsLeadership: only a replica that leads (its state
// loaded, its leadership not ended) evaluates, posts a summary or takes an
// external alert; the others say alert.ErrNotLeader and touch nothing.
func TestEvaluationNeedsLeadership(t *testing.T) {
	ended, end := context.WithCancel(context.Background())
	end()
	tests := []struct {
		name string
		s    *Sweeper
	}{
		{"no state loaded", &Sweeper{leaderCtx: context.Background()}},
		{"no leadership", &Sweeper{st: newState()}},
		{"leadership ended", &Sweeper{st: newState(), leaderCtx: ended}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := tt.s.evaluate(ctx, []kube.PodKey{podKey("b0")}, true); !errors.Is(err, alert.ErrNotLeader) {
				t.Errorf("evaluate: %v", err)
			}
			if _, err := tt.s.External(ctx, alert.External{Namespace: testNS, Pod: "b0", Firing: true}); !errors.Is(err, alert.ErrNotLeader) {
				t.Errorf("External: %v", err)
			}
			if tt.s.leaderCtx == nil || tt.s.st == nil {
				if _, _, err := tt.s.summary(); !errors.Is(err, alert.ErrNotLeader) {
					t.Errorf("summary: %v", err)
				}
			}
			if tt.s.Leading() != (tt.s.st != nil) {
				t.Errorf("Leading() = %t with state %v", tt.s.Leading(), tt.s.st)
			}
		})
	}
}

// TestDetectionReadinessAndRestarts: besides its reason, a detection
// carries the pod's readiness (the resolve stage's grace starts on it) and
// its restarts over every container (a new diagnosis is read on a change),
// and names the Kafka container when a sidecar crash-loops too.
func TestDetectionReadinessAndRestarts(t *testing.T) {
	sidecar := corev1.ContainerStatus{Name: "metrics", RestartCount: 2,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	tests := []struct {
		name          string
		pod           *corev1.Pod
		wantReady     bool
		wantRestarts  int32
		wantContainer string
	}{
		{"healthy", brokerPod("b0"), true, 0, ""},
		{"crash-looping", crashLooping(brokerPod("b0"), 5, t0), false, 5, "kafka"},
		{"a sidecar crash-loops too: the broker is named", func() *corev1.Pod {
			p := crashLooping(brokerPod("b0"), 5, t0)
			p.Status.ContainerStatuses = append([]corev1.ContainerStatus{sidecar}, p.Status.ContainerStatuses...)
			return p
		}(), false, 7, "kafka"},
		{"only the sidecar crash-loops", func() *corev1.Pod {
			p := brokerPod("b0")
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, sidecar)
			return p
		}(), true, 2, "metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			det := NewDetector(3, 10*time.Minute).Observe(tt.pod, t0)
			if det.Ready != tt.wantReady || det.Restarts != tt.wantRestarts || det.Container != tt.wantContainer {
				t.Errorf("Observe = ready %t, %d restarts, container %q (%s); want ready %t, %d restarts, container %q",
					det.Ready, det.Restarts, det.Container, det.Detail, tt.wantReady, tt.wantRestarts, tt.wantContainer)
			}
		})
	}
}
