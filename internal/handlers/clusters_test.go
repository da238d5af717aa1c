// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// siteCluster is one cluster of a multi-cluster bot: the seed incident's
// fake, whose lookups answer as a multi-cluster Cluster must (no such pod
// wraps ErrNoSuchPod), or hang until their context ends.
type siteCluster struct {
	*fakeCluster
	hang     atomic.Bool
	resolves atomic.Int32
	lists    atomic.Int32
}

func (c *siteCluster) ResolvePod(ctx context.Context, namespace, name string) (diagnose.Snapshot, func(context.Context) (diagnose.Snapshot, error), error) {
	c.resolves.Add(1)
	if c.hang.Load() {
		<-ctx.Done()
		return diagnose.Snapshot{}, nil, ctx.Err()
	}
	status, read, err := c.fakeCluster.ResolvePod(ctx, namespace, name)
	if err != nil {
		return status, read, fmt.Errorf("%w: %w", ErrNoSuchPod, err)
	}
	return status, read, nil
}

func (c *siteCluster) KafkaPods(ctx context.Context) ([]diagnose.Snapshot, error) {
	c.lists.Add(1)
	if c.hang.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return c.fakeCluster.KafkaPods(ctx)
}

// fleetHarness is a bot serving two clusters, eu and us, each holding the
// same namespace and pod names (the seed broker), each with its own
// repairer and decision records.
type fleetHarness struct {
	*harness
	eu, us        *siteCluster
	euRep, usRep  *fakeRepairer
	euDec, usDec  *countingDecisions
	lookupTimeout time.Duration
	breakerPeriod time.Duration
}

// countingDecisions records which cluster's decision records were written.
type countingDecisions struct {
	Decisions
	n atomic.Int32
}

func (d *countingDecisions) Decide(ctx context.Context, c approval.Click) (approval.Outcome, error) {
	d.n.Add(1)
	return d.Decisions.Decide(ctx, c)
}

func startFleet(t *testing.T, mutate ...func(*Options)) *fleetHarness {
	t.Helper()
	f := &fleetHarness{
		eu: &siteCluster{fakeCluster: newFakeCluster(t)}, us: &siteCluster{fakeCluster: newFakeCluster(t)},
		euRep: &fakeRepairer{}, usRep: &fakeRepairer{},
		euDec: &countingDecisions{Decisions: newMemoryDecisions()}, usDec: &countingDecisions{Decisions: newMemoryDecisions()},
		lookupTimeout: 300 * time.Millisecond, breakerPeriod: time.Hour,
	}
	f.harness = startBot(t, func(o *Options) {
		o.LookupTimeout, o.BreakerPeriod = f.lookupTimeout, f.breakerPeriod
		o.Clusters = []ClusterOptions{
			{Name: "eu", Reader: f.eu, Repairer: f.euRep, Decisions: f.euDec},
			{Name: "us", Reader: f.us, Repairer: f.usRep, Decisions: f.usDec},
		}
		for _, m := range mutate {
			m(o)
		}
	})
	return f
}

// diagnoseIn runs /kafka diagnose text and returns the posted message.
func (f *fleetHarness) diagnoseIn(text string) slackemu.Message {
	f.t.Helper()
	before := len(f.emu.Messages(channel))
	f.slash(requester, channel, text)
	f.waitFor("the diagnosis message", func() bool { return len(f.emu.Messages(channel)) > before })
	m := f.emu.Messages(channel)[before]
	f.waitFor("the details reply", func() bool { return len(f.emu.Thread(channel, m.TS)) > 0 })
	return m
}

func TestFleetShortNameInTwoClustersListsBothAndPostsNothing(t *testing.T) {
	f := startFleet(t)
	for _, text := range []string{"diagnose broker-0", "diagnose kafka/broker-0", "diagnose " + seedPod} {
		seen := len(f.emu.Ephemerals(channel, requester))
		f.slash(requester, channel, text)
		var reply string
		f.waitFor("the which-one reply", func() bool {
			for _, m := range f.emu.Ephemerals(channel, requester)[seen:] {
				if strings.Contains(m.Text, "Which one?") {
					reply = m.Text
					return true
				}
			}
			return false
		})
		for _, want := range []string{"`eu/kafka/" + seedPod + "`", "`us/kafka/" + seedPod + "`"} {
			if !strings.Contains(reply, want) {
				t.Errorf("%q: the reply lacks %s:\n%s", text, want, reply)
			}
		}
	}
	if n := len(f.emu.Messages(channel)); n != 0 {
		t.Fatalf("an ambiguous name posted %d messages (a guess)", n)
	}
	if _, s := f.eu.counts(); s != 0 {
		t.Errorf("eu's pod was read %d times for an ambiguous name", s)
	}
	if _, s := f.us.counts(); s != 0 {
		t.Errorf("us's pod was read %d times for an ambiguous name", s)
	}
}

func TestFleetApprovalActsOnlyOnItsCluster(t *testing.T) {
	// Diagnoses are shared, as in production: the two clusters' pods have
	// the same namespace, name, UID and restart count, and must still not
	// share one (nor its token).
	f := startFleet(t, func(o *Options) { o.ShareWindow = time.Hour })
	for _, tc := range []struct {
		text       string
		want       *fakeRepairer
		other      *fakeRepairer
		header     string
		wantDec    *countingDecisions
		otherDec   *countingDecisions
		otherCalls func() int32
	}{
		{"diagnose eu/kafka/broker-0", f.euRep, f.usRep, "eu/kafka/" + seedPod, f.euDec, f.usDec, f.us.resolves.Load},
		{"diagnose us/broker-0", f.usRep, f.euRep, "us/kafka/" + seedPod, f.usDec, f.euDec, f.eu.resolves.Load},
	} {
		otherBefore, wantBefore := len(tc.other.calls()), len(tc.want.calls())
		otherLookups := tc.otherCalls()
		m := f.diagnoseIn(tc.text)
		if tc.otherCalls() != otherLookups {
			t.Errorf("%q asked the other cluster", tc.text)
		}
		if text := blockTexts(t, m.Blocks); !strings.Contains(text, tc.header) {
			t.Fatalf("%q: the message does not name its cluster (%s):\n%s", tc.text, tc.header, text)
		}
		tok, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
		a, err := approval.Verify(testSecret, tok, f.clock.Now())
		if err != nil || a.KubeCluster != strings.Split(tc.header, "/")[0] {
			t.Fatalf("%q: token %+v, %v: want it bound to %s", tc.text, a, err, tc.header)
		}
		otherDec := tc.otherDec.n.Load()
		f.click(m, slackview.ActionApprove, approver)
		f.waitRepairDone(m)
		var thread string
		for _, r := range f.emu.Thread(channel, m.TS) {
			thread += r.Text + blockTexts(t, r.Blocks)
		}
		if !strings.Contains(thread, "on pod `"+tc.header+"`") {
			t.Errorf("%q: the repair checklist does not name its cluster (%s)", tc.text, tc.header)
		}
		if got := tc.want.calls(); len(got) != wantBefore+1 || got[len(got)-1].Pod != seedPod {
			t.Errorf("%q: the cluster's repairer ran %d repairs, want %d", tc.text, len(got), wantBefore+1)
		}
		if n := len(tc.other.calls()); n != otherBefore {
			t.Errorf("%q: the other cluster's repairer ran (%d repairs)", tc.text, n)
		}
		if tc.wantDec.n.Load() == 0 || tc.otherDec.n.Load() != otherDec {
			t.Errorf("%q: decision written to the wrong cluster (own %d, other %d→%d)", tc.text, tc.wantDec.n.Load(), otherDec, tc.otherDec.n.Load())
		}
	}
}

// TestFleetTokenForAnotherClusterIsRefused: a validly signed token whose
// cluster the bot does not serve, or that names no cluster (signed by a
// single-cluster bot), never acts on any cluster.
func TestFleetTokenForAnotherClusterIsRefused(t *testing.T) {
	f := startFleet(t)
	m := f.diagnoseIn("diagnose eu/kafka/broker-0")
	tok, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	a, err := approval.Verify(testSecret, tok, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cluster, want string }{
		{"ap", "which I do not serve"},
		{"", "does not say which Kubernetes cluster"},
	} {
		a.KubeCluster = tc.cluster
		forged, err := approval.Sign(testSecret, a)
		if err != nil {
			t.Fatal(err)
		}
		f.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: forged})
		f.ephemeral(channel, approver, tc.want)
	}
	if n := len(f.euRep.calls()) + len(f.usRep.calls()); n != 0 {
		t.Fatalf("a token for another cluster ran %d repairs", n)
	}
	if f.euDec.n.Load()+f.usDec.n.Load() != 0 {
		t.Fatalf("a token for another cluster wrote a decision record")
	}
	if !strings.Contains(f.logs.String(), `"reason":"unknown-cluster"`) {
		t.Errorf("the refusal is not in the audit log")
	}
}

// TestFleetHangingClusterCostsOneTimeoutPerBreakerPeriod: us hangs. An
// explicit eu command never asks us; a short name costs one LookupTimeout
// the first time (then answers from eu, saying us was not checked), and
// nothing while the breaker is open; /kafka status shows us as unreachable
// without waiting for it.
func TestFleetHangingClusterCostsOneTimeoutPerBreakerPeriod(t *testing.T) {
	f := startFleet(t)
	f.us.hang.Store(true)

	f.diagnoseIn("diagnose eu/kafka/broker-0")
	if n := f.us.resolves.Load(); n != 0 {
		t.Fatalf("an explicit eu command asked us %d times", n)
	}

	f.diagnoseIn("diagnose broker-0")
	note := f.ephemeral(channel, requester, "I could not check")
	if !strings.Contains(note.Text, "`us` (no answer within") || !strings.Contains(note.Text, "eu/kafka/"+seedPod) {
		t.Errorf("the note does not say what was diagnosed and what was not checked:\n%s", note.Text)
	}
	if n := f.us.resolves.Load(); n != 1 {
		t.Fatalf("us was asked %d times, want 1", n)
	}
	for range 3 {
		f.diagnoseIn("diagnose broker-0")
	}
	if n := f.us.resolves.Load(); n != 1 {
		t.Fatalf("with its breaker open, us was asked again (%d times)", n)
	}

	before := len(f.emu.Messages(channel))
	f.slash(requester, channel, "status")
	f.waitFor("the status message", func() bool { return len(f.emu.Messages(channel)) > before })
	status := blockTexts(t, f.emu.Messages(channel)[before].Blocks)
	for _, want := range []string{"eu", "us* cannot be reached (no answer within", seedPod} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if n := f.us.lists.Load(); n != 0 {
		t.Errorf("status asked us (%d) while its breaker was open", n)
	}
}

func TestFleetNotFoundNamesUncheckedClusters(t *testing.T) {
	f := startFleet(t)
	f.us.hang.Store(true)
	f.slash(requester, channel, "diagnose nothing-here-0")
	reply := f.ephemeral(channel, requester, "I found no Kafka pod")
	for _, want := range []string{"`nothing-here-0`", "(`eu`)", "I could not check `us` (no answer within"} {
		if !strings.Contains(reply.Text, want) {
			t.Errorf("reply lacks %q:\n%s", want, reply.Text)
		}
	}
}

func TestFleetUnknownClusterInCommand(t *testing.T) {
	f := startFleet(t)
	f.slash(requester, channel, "diagnose ap/kafka/broker-0")
	reply := f.ephemeral(channel, requester, "I serve no cluster named")
	if !strings.Contains(reply.Text, "`eu`, `us`") {
		t.Errorf("the reply does not list the clusters: %s", reply.Text)
	}
	if f.eu.resolves.Load()+f.us.resolves.Load() != 0 {
		t.Errorf("an unknown cluster's command asked a served one")
	}
}

// TestFleetAlertsSilencesAndSweepsStayInTheirCluster: each cluster's sweep
// posts through its own notifier view; the alert names its cluster, its
// Approve and Silence tokens are bound to it, a silence lands in that
// cluster's sweep only (the other cluster has the same pod), End silence
// ends it there, and /kafka silences and /kafka sweep cover every cluster.
func TestFleetAlertsSilencesAndSweepsStayInTheirCluster(t *testing.T) {
	n := alertnotify.New(alertChan)
	euSil, usSil := &fakeSilencer{}, &fakeSilencer{}
	f := startFleet(t, func(o *Options) {
		o.Alerts = n
		o.Clusters[0].Silencer, o.Clusters[0].Sweeper = euSil, euSil
		o.Clusters[1].Silencer, o.Clusters[1].Sweeper = usSil, usSil
	})
	ref, err := n.ForCluster("us").Notify(f.ctx(), seedAlert(t, f.clock.Now()))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.emu.Message(ref.Channel, ref.TS)
	if text := blockTexts(t, m.Blocks); !strings.Contains(text, "us/kafka/"+seedPod) {
		t.Fatalf("the alert does not name its cluster:\n%s", text)
	}
	tok, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	if a, err := approval.Verify(testSecret, tok, f.clock.Now()); err != nil || a.KubeCluster != "us" {
		t.Fatalf("the alert's Approve token is %+v, %v; want it bound to us", a, err)
	}
	(&alertHarness{harness: f.harness, notifier: n}).chooseSilence(m, approver, "24h")
	f.waitFor("the silence confirmation", func() bool { return len(f.emu.Thread(alertChan, m.TS)) >= 2 })
	if got := usSil.calls(); len(got) != 1 || got[0].Key != seedNamespace+"/"+seedPod {
		t.Fatalf("us's sweep got silences %+v", got)
	}
	if got := euSil.calls(); len(got) != 0 {
		t.Fatalf("eu's sweep got a silence meant for us: %+v", got)
	}
	if _, err := n.ForCluster("ap").Notify(f.ctx(), seedAlert(t, f.clock.Now())); err == nil {
		t.Errorf("a notifier view of an unserved cluster posted")
	}

	// /kafka silences lists both clusters' silences, each with an End
	// silence button bound to its own cluster.
	until := f.clock.Now().Add(time.Hour)
	euSil.set([]alert.Silence{{ID: "eu1", Key: "kafka/" + seedPod, Until: until, By: approver}}, nil)
	usSil.set([]alert.Silence{{ID: "us1", Key: "kafka/" + seedPod, Until: until, By: approver}}, nil)
	usSil.mu.Lock()
	usSil.created = append(usSil.created, alert.Silence{ID: "us1", Key: "kafka/" + seedPod, Until: until})
	usSil.mu.Unlock()
	f.slash(approver, channel, "silences")
	list := f.ephemeral(channel, approver, "silence(s) in force")
	for _, want := range []string{"eu: kafka/" + seedPod, "us: kafka/" + seedPod} {
		if !strings.Contains(list.Text, want) {
			t.Errorf("/kafka silences lacks %q:\n%s", want, list.Text)
		}
	}
	var usEnd string
	for _, b := range blocksOf(t, list.Blocks) {
		if text, _ := b["text"].(map[string]any); text != nil && strings.Contains(fmt.Sprint(text["text"]), "us1") {
			acc, _ := b["accessory"].(map[string]any)
			usEnd, _ = acc["value"].(string)
		}
	}
	if usEnd == "" {
		t.Fatalf("no End silence button for us's silence in %s", list.Blocks)
	}
	f.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: list.TS, ActionID: actionUnsilence, Value: usEnd})
	f.ephemeral(channel, approver, "ended the silence of `us: kafka/"+seedPod+"`")
	if got := usSil.endedIDs(); len(got) != 1 || got[0] != "us1" {
		t.Errorf("us's ended silences: %v", got)
	}
	if got := euSil.endedIDs(); len(got) != 0 {
		t.Errorf("eu's silence was ended by us's button: %v", got)
	}

	f.slash(approver, channel, "sweep")
	f.ephemeral(channel, approver, "Swept `eu`, `us`")
	if euSil.sweepCount() != 1 || usSil.sweepCount() != 1 {
		t.Errorf("/kafka sweep swept eu %d and us %d times, want once each", euSil.sweepCount(), usSil.sweepCount())
	}
}

// blocksOf decodes a message's raw blocks.
func blocksOf(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	return out
}

// TestFleetClearEscalationActsOnItsCluster: both clusters hold an
// escalation record for the same Kafka cluster key (same namespace and
// names) and UID; us's repair crashes again, and its Clear escalation
// button clears us's record only.
func TestFleetClearEscalationActsOnItsCluster(t *testing.T) {
	record := func() *fakeEscalations {
		return &fakeEscalations{records: map[string]EscalationRef{
			seedNamespace + "/foobar": {KafkaCluster: seedNamespace + "/foobar", UID: "uid-esc-1", Pod: seedPod},
		}}
	}
	euEsc, usEsc := record(), record()
	f := startFleet(t, func(o *Options) {
		o.Clusters[0].Escalations = euEsc
		o.Clusters[1].Escalations, o.Clusters[1].Repairer = usEsc, crashingRepairer{}
	})
	m := f.diagnoseIn("diagnose us/kafka/broker-0")
	f.click(m, slackview.ActionApprove, approver)
	var button slackemu.Message
	f.waitFor("the escalation message", func() bool {
		for _, r := range f.emu.Thread(channel, m.TS) {
			if strings.Contains(r.Text, "is *escalated*") {
				button = r
				return true
			}
		}
		return false
	})
	if !strings.Contains(button.Text, "us: "+seedNamespace+"/foobar") {
		t.Errorf("the escalation does not name its Kubernetes cluster: %q", button.Text)
	}
	f.click(button, actionClearEscalation, approver)
	f.waitFor("the cleared note", func() bool {
		for _, r := range f.emu.Thread(channel, m.TS) {
			if strings.Contains(r.Text, "cleared the escalation of `us: "+seedNamespace+"/foobar`") {
				return true
			}
		}
		return false
	})
	if records, clears := usEsc.count(); records != 0 || clears != 1 {
		t.Errorf("us: %d records left, %d cleared; want 0 and 1", records, clears)
	}
	if records, clears := euEsc.count(); records != 1 || clears != 0 {
		t.Errorf("eu's record was touched by us's button: %d left, %d cleared", records, clears)
	}
}

// TestFleetExplicitCommandOnAHangingCluster: a command naming a cluster
// that hangs is answered within LookupTimeout, saying so, and opens its
// breaker (a short name then skips it).
func TestFleetExplicitCommandOnAHangingCluster(t *testing.T) {
	f := startFleet(t)
	f.us.hang.Store(true)
	f.slash(requester, channel, "diagnose us/kafka/broker-0")
	f.ephemeral(channel, requester, "cluster us cannot be reached (no answer within 300ms)")
	f.diagnoseIn("diagnose broker-0")
	if n := f.us.resolves.Load(); n != 1 {
		t.Errorf("us was asked %d times, want once (then its breaker is open)", n)
	}
	if n := len(f.emu.Messages(channel)); n != 1 {
		t.Errorf("%d messages posted, want the one diagnosis of eu", n)
	}
}

// TestSingleClusterHonoursTokensWithoutACluster: a single-cluster bot
// (CLUSTER_NAME prod) signs its cluster into new tokens, still honours a
// token that names none (signed before issue 15: it can only mean its one
// cluster), and refuses one naming another cluster.
func TestSingleClusterHonoursTokensWithoutACluster(t *testing.T) {
	h := startBot(t, func(o *Options) { o.Clusters[0].Name = "prod" })
	m := h.diagnose()
	tok, _ := buttons(t, m.Blocks)[slackview.ActionApprove]["value"].(string)
	a, err := approval.Verify(testSecret, tok, h.clock.Now())
	if err != nil || a.KubeCluster != "prod" {
		t.Fatalf("new token %+v, %v: want it bound to prod", a, err)
	}
	a.KubeCluster = "staging"
	other, err := approval.Sign(testSecret, a)
	if err != nil {
		t.Fatal(err)
	}
	h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: other})
	h.ephemeral(channel, approver, "which I do not serve")
	if n := len(h.repairer.calls()); n != 0 {
		t.Fatalf("a token of another cluster ran %d repairs", n)
	}
	a.KubeCluster = ""
	old, err := approval.Sign(testSecret, a)
	if err != nil {
		t.Fatal(err)
	}
	h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: m.TS, ActionID: slackview.ActionApprove, Value: old})
	h.waitRepairDone(m)
	if got := h.repairer.calls(); len(got) != 1 || got[0].ApprovalID != a.ID {
		t.Fatalf("the token without a cluster ran %+v", got)
	}
}

// threadResumer stands in for a cluster's repairer resuming, after a
// restart, the repair whose thread it is given: it reports one step and
// the outcome through the bot's reporter, as recovery.Repairer.Resume does.
type threadResumer struct {
	thread chan string // the parent message's ts
	done   chan struct{}
}

func (r *threadResumer) Resume(ctx context.Context, newReporter func(channel, threadTS string) recovery.Reporter) error {
	defer close(r.done)
	var ts string
	select {
	case ts = <-r.thread:
	case <-ctx.Done():
		return ctx.Err()
	}
	rep := newReporter(channel, ts)
	rep.Report(ctx, recovery.Progress{Step: fakeSteps[0], Status: recovery.StepStarted})
	rep.Report(ctx, recovery.Progress{Step: fakeSteps[0], Status: recovery.StepDone})
	rep.Finish(ctx, recovery.Summary{Outcome: recovery.OutcomeRepaired, Text: "Repaired kafka/" + seedPod + "."})
	return nil
}

// TestFleetResumedRepairNamesItsCluster: on a multi-cluster bot the thread
// of a repair resumed after a restart names the cluster it runs in, as the
// first run's plan line does; only that cluster's resumer reports there.
func TestFleetResumedRepairNamesItsCluster(t *testing.T) {
	res := &threadResumer{thread: make(chan string, 1), done: make(chan struct{})}
	f := startFleet(t, func(o *Options) { o.Clusters[1].Resumer = res })
	m := f.diagnoseIn("diagnose us/kafka/" + seedPod)
	before := len(f.emu.Thread(channel, m.TS))
	res.thread <- m.TS
	<-res.done
	var head string
	f.waitFor("the resumed repair's checklist", func() bool {
		for _, r := range f.emu.Thread(channel, m.TS)[before:] {
			if text := r.Text + blockTexts(t, r.Blocks); strings.Contains(text, "Repair resumed") {
				head = text
				return true
			}
		}
		return false
	})
	if !strings.Contains(head, "Repair resumed* after the bot restarted in cluster `us`") {
		t.Errorf("the resumed repair's checklist does not name its cluster us:\n%s", head)
	}
}

// TestSafety09_ClusterApprovalChannelsCountForThatClusterOnly: a CLUSTERS_FILE
// entry's approvalChannels add channels where that cluster's repairs may be
// approved, and no other cluster's: an Approve of cluster us clicked in
// eu's extra channel is refused with nothing changed, while eu's is honoured.
func TestSafety09_ClusterApprovalChannelsCountForThatClusterOnly(t *testing.T) {
	f := startFleet(t, func(o *Options) { o.Clusters[0].ApprovalChannels = []string{otherChan} })
	diagnoseIn := func(text string) slackemu.Message {
		before := len(f.emu.Messages(otherChan))
		f.slash(requester, otherChan, text)
		f.waitFor("the diagnosis in "+otherChan, func() bool { return len(f.emu.Messages(otherChan)) > before })
		return f.emu.Messages(otherChan)[before]
	}

	us := diagnoseIn("diagnose us/broker-0")
	f.click(us, slackview.ActionApprove, approver)
	e := f.ephemeral(otherChan, approver, "Nothing was changed")
	if !strings.Contains(e.Text, "<#"+channel+">") || strings.Contains(e.Text, "<#"+otherChan+">") {
		t.Errorf("the refusal %q should name us's approval channel %s, not eu's %s", e.Text, channel, otherChan)
	}
	if n := len(f.usRep.calls()); n != 0 {
		t.Errorf("cluster us's repairer ran %d repairs for an Approve in eu's channel", n)
	}
	if f.usDec.n.Load() != 0 {
		t.Errorf("a decision was recorded in cluster us for an Approve in eu's channel")
	}

	eu := diagnoseIn("diagnose eu/broker-0")
	f.click(eu, slackview.ActionApprove, approver)
	f.waitFor("cluster eu's repair", func() bool { return len(f.euRep.calls()) == 1 })
	if n := len(f.usRep.calls()); n != 0 {
		t.Errorf("cluster us's repairer ran %d repairs", n)
	}
}
