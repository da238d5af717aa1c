// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Fast tests of the click path: authorize (who may decide what, where) and
// the decision state machine of handleClick (refused, recorded, counted,
// approved, rejected), driven by calling them directly: no emulator, no
// Socket Mode, no API server. The Web API calls go to a recordingAPI.

const (
	clickTeam   = "T0EMU0001"
	clickTS     = "1700000000.000100"
	approver3   = "U0APPROVER3"
	clickNS     = "kafka"
	clickPod    = "broker-0"
	otherSecret = "another-bot's-approval-secret-0123456789"
)

var clickNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clickBench is a bot whose clicks are handled in the test's goroutine and
// whose poster records instead of calling Slack.
type clickBench struct {
	t        *testing.T
	b        *Bot
	api      *recordingAPI
	repairer *fakeRepairer
	// parent is the clicked message as the bot keeps it.
	parent *slacktransport.Message
}

// newClickBench builds the bot: one unnamed cluster with a repairer,
// approver the only approver, channel the only approval channel; mutate
// changes the options (it may replace the clusters).
func newClickBench(t *testing.T, mutate func(o *Options, rep *fakeRepairer)) *clickBench {
	t.Helper()
	rep := &fakeRepairer{}
	opts := Options{
		AppToken: "xapp-test", BotToken: "xoxb-test", ApprovalSecret: testSecret,
		Approvers: []string{approver}, ApprovalChannels: []string{channel},
		Clusters:  []ClusterOptions{{Reader: newFakeCluster(t), Repairer: rep}},
		Diagnoser: seedDiagnoser{}, Clock: func() time.Time { return clickNow },
	}
	if mutate != nil {
		mutate(&opts, rep)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); b.wg.Wait() })
	api := &recordingAPI{}
	b.runCtx = ctx
	b.poster = slacktransport.NewPoster(ctx, api, b.log, &b.wg)
	parent := b.messages.Track(channel, clickTS, nil)
	return &clickBench{t: t, b: b, api: api, repairer: rep, parent: parent}
}

// approvalFor is the approval a diagnosis in channel offers requester's
// request; change adjusts it before signing.
func approvalFor(change func(a *approval.Approval)) approval.Approval {
	a := approval.Approval{
		ID: "approval-1", Namespace: clickNS, Pod: clickPod, PodUID: "uid-1",
		Rule: "kraft-metadata-corrupt", Action: "move-aside", Target: "__cluster_metadata-0",
		Requester: requester, Channel: channel, Team: clickTeam,
		IssuedAt: clickNow.Add(-time.Minute), ExpiresAt: clickNow.Add(30 * time.Minute),
	}
	if change != nil {
		change(&a)
	}
	return a
}

// sign signs a with secret.
func sign(t *testing.T, secret []byte, a approval.Approval) string {
	t.Helper()
	token, err := approval.Sign(secret, a)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// buttonsOf are a diagnosis message's blocks with its Approve and Reject
// buttons carrying token.
func buttonsOf(token string) []slack.Block {
	return []slack.Block{
		slackview.Section(slackview.BlockSummary, "diagnosis"),
		slack.NewActionBlock(slackview.BlockActions,
			slack.NewButtonBlockElement(slackview.ActionApprove, token, slackview.Plain("Approve repair")),
			slack.NewButtonBlockElement(slackview.ActionReject, token, slackview.Plain("Reject"))),
	}
}

// clickOn is user's click (Approve or Reject) on a message in channel
// whose buttons carry token.
func clickOn(user string, approve bool, token string) click {
	return click{Team: clickTeam, Channel: channel, User: user, MessageTS: clickTS, Approve: approve,
		Token: token, Blocks: buttonsOf(token)}
}

func TestAuthorize(t *testing.T) {
	twoClusters := func(o *Options, rep *fakeRepairer) {
		o.Clusters = []ClusterOptions{
			{Name: "east", Reader: newFakeCluster(t), Repairer: rep, Approvers: []string{approver2}, ApprovalChannels: []string{otherChan}},
			{Name: "west", Reader: newFakeCluster(t), Repairer: rep},
		}
	}
	tests := []struct {
		name     string
		opts     func(o *Options, rep *fakeRepairer)
		approval func(a *approval.Approval)
		secret   string // signs the token instead of testSecret
		click    func(c *click)
		// wantReason is the audit reason of the refusal ("": authorized);
		// wantTell what the clicker is told; wantCluster the cluster the
		// click may act on ("" the unnamed one, "-" none: refused before
		// the token named one).
		wantReason, wantTell, wantCluster string
	}{
		{name: "approver approves in the approval channel", wantCluster: ""},
		{name: "requester rejects", click: func(c *click) { c.User, c.Approve = requester, false }, wantCluster: ""},
		{name: "approver rejects", click: func(c *click) { c.Approve = false }, wantCluster: ""},
		{name: "stranger rejects", click: func(c *click) { c.User, c.Approve = stranger, false },
			wantReason: "not-allowed-to-reject", wantTell: slackview.RefuseReject},
		{name: "stranger approves", click: func(c *click) { c.User = stranger },
			wantReason: "not-an-approver", wantTell: slackview.RefuseNotApprover("", "<@"+approver+">")},
		{name: "requester approves, self-approval forbidden",
			opts:       func(o *Options, _ *fakeRepairer) { o.Approvers = append(o.Approvers, requester) },
			click:      func(c *click) { c.User = requester },
			wantReason: "self-approval", wantTell: slackview.RefuseSelfApproval},
		{name: "requester approves, self-approval allowed",
			opts: func(o *Options, _ *fakeRepairer) {
				o.Approvers = append(o.Approvers, requester)
				o.AllowSelfApproval = true
			},
			click: func(c *click) { c.User = requester }, wantCluster: ""},
		{name: "expired", approval: func(a *approval.Approval) {
			a.IssuedAt, a.ExpiresAt = clickNow.Add(-31*time.Minute), clickNow.Add(-time.Minute)
		}, wantReason: "expired", wantTell: slackview.RefuseExpired, wantCluster: "-"},
		{name: "issued in the future", approval: func(a *approval.Approval) {
			a.IssuedAt, a.ExpiresAt = clickNow.Add(time.Hour), clickNow.Add(2*time.Hour)
		}, wantReason: "not-yet-valid", wantTell: slackview.RefuseNotYetValid, wantCluster: "-"},
		{name: "signed by another bot", secret: otherSecret,
			wantReason: "invalid-token:bad-signature", wantTell: slackview.RefuseInvalidToken, wantCluster: "-"},
		{name: "not a token", click: func(c *click) { c.Token = "not-a-token" },
			wantReason: "invalid-token:malformed", wantTell: slackview.RefuseInvalidToken, wantCluster: "-"},
		{name: "a cluster the bot does not serve", approval: func(a *approval.Approval) { a.KubeCluster = "north" },
			wantReason: "unknown-cluster", wantTell: slackview.RefuseUnknownCluster("north"), wantCluster: "-"},
		{name: "clicked in another channel", click: func(c *click) { c.Channel = otherChan },
			wantReason: "wrong-origin:channel", wantTell: slackview.RefuseWrongOrigin, wantCluster: ""},
		{name: "clicked in another workspace", click: func(c *click) { c.Team = "T0OTHERWS" },
			wantReason: "wrong-origin:team", wantTell: slackview.RefuseWrongOrigin, wantCluster: ""},
		{name: "buttons already gone", click: func(c *click) { c.Blocks = c.Blocks[:1] },
			wantReason: "already-decided", wantTell: slackview.RefuseAlreadyDecided, wantCluster: ""},
		{name: "approved outside the approval channels",
			approval:   func(a *approval.Approval) { a.Channel = otherChan },
			click:      func(c *click) { c.Channel = otherChan },
			wantReason: "channel-not-allowed", wantTell: slackview.RefuseChannel("", "<#"+channel+">"), wantCluster: ""},
		{name: "rejected outside the approval channels",
			approval: func(a *approval.Approval) { a.Channel = otherChan },
			click:    func(c *click) { c.Channel, c.Approve = otherChan, false }, wantCluster: ""},
		{name: "two clusters: an unnamed token", opts: twoClusters,
			wantReason: "unknown-cluster", wantTell: slackview.RefuseNoCluster, wantCluster: "-"},
		{name: "two clusters: the cluster's own approver", opts: twoClusters,
			approval: func(a *approval.Approval) { a.KubeCluster = "east" },
			click:    func(c *click) { c.User = approver2 }, wantCluster: "east"},
		{name: "two clusters: a bot-wide approver is not the cluster's", opts: twoClusters,
			approval:   func(a *approval.Approval) { a.KubeCluster = "east" },
			wantReason: "not-an-approver", wantTell: slackview.RefuseNotApprover(slackview.OfCluster("east"), "<@"+approver2+">"),
			wantCluster: "east"},
		{name: "two clusters: the cluster's own approval channel", opts: twoClusters,
			approval: func(a *approval.Approval) { a.KubeCluster, a.Channel = "east", otherChan },
			click:    func(c *click) { c.User, c.Channel = approver2, otherChan }, wantCluster: "east"},
		{name: "two clusters: another cluster's approval channel", opts: twoClusters,
			approval:   func(a *approval.Approval) { a.KubeCluster, a.Channel = "west", otherChan },
			click:      func(c *click) { c.Channel = otherChan },
			wantReason: "channel-not-allowed", wantTell: slackview.RefuseChannel(slackview.OfCluster("west"), "<#"+channel+">"),
			wantCluster: "west"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bench := newClickBench(t, tt.opts)
			secret := testSecret
			if tt.secret != "" {
				secret = []byte(tt.secret)
			}
			c := clickOn(approver, true, sign(t, secret, approvalFor(tt.approval)))
			if tt.click != nil {
				tt.click(&c)
			}
			_, m, r := bench.b.authorize(c)
			switch {
			case tt.wantReason == "" && r != nil:
				t.Fatalf("refused (%s: %q), want authorized", r.reason, r.tell)
			case tt.wantReason != "" && r == nil:
				t.Fatalf("authorized, want refused as %s", tt.wantReason)
			case r != nil && (r.reason != tt.wantReason || r.tell != tt.wantTell):
				t.Errorf("refused as %s: %q\nwant %s: %q", r.reason, r.tell, tt.wantReason, tt.wantTell)
			}
			gotCluster := "-"
			if m != nil {
				gotCluster = m.Name
			}
			if gotCluster != tt.wantCluster {
				t.Errorf("cluster %q, want %q", gotCluster, tt.wantCluster)
			}
		})
	}
}

// scriptedDecisions answers every Decide with err.
type scriptedDecisions struct{ err error }

func (d scriptedDecisions) Decide(context.Context, approval.Click) (approval.Outcome, error) {
	return approval.Outcome{}, d.err
}

// vote is one click of a decision scenario and what it must do.
type vote struct {
	user    string
	approve bool
	// told is what the clicker is shown ("": nothing).
	told string
	// said are the thread replies this click posts, in order (nil: not
	// checked).
	said []string
	// status and decision are the message's status and decision lines
	// afterwards ("": not checked).
	status, decision string
	// repairs is the number of repairs started so far.
	repairs int
}

func TestClickDecisions(t *testing.T) {
	plan := slackview.Plan("move-aside", "__cluster_metadata-0", clickNS+"/"+clickPod, "uid-1", "kraft-metadata-corrupt")
	twoRequired := func(o *Options, _ *fakeRepairer) {
		o.Approvers = []string{approver, approver2}
		o.RequiredApprovals = 2
	}
	tests := []struct {
		name  string
		opts  func(o *Options, rep *fakeRepairer)
		votes []vote
	}{
		{name: "one approval starts the repair", votes: []vote{
			{user: approver, approve: true, decision: slackview.ApprovedLine([]string{approver}, clickNow), repairs: 1},
			{user: approver, approve: true, told: slackview.Refused(slackview.AlreadyApproved([]string{approver}, clickNow)), repairs: 1},
		}},
		{name: "a rejection stops a later approval", votes: []vote{
			{user: requester, approve: false, said: []string{slackview.RejectedReply(requester, clickPod)},
				status: slackview.RejectedStatus, decision: slackview.RejectedLine(requester, clickNow)},
			{user: approver, approve: true, told: slackview.Refused(slackview.AlreadyRejected(requester, clickNow))},
		}},
		{name: "two approvals: counted, not twice, then started", opts: twoRequired, votes: []vote{
			{user: approver, approve: true, said: []string{slackview.CountedReply(approver, 1, 2)},
				status: slackview.CountedStatus(1, 2, []string{approver})},
			{user: approver, approve: true, told: slackview.Refused(slackview.AlreadyApprovedByYou(1, 2))},
			{user: approver2, approve: true, decision: slackview.ApprovedLine([]string{approver, approver2}, clickNow), repairs: 1},
		}},
		{name: "a rejection between two approvals", opts: twoRequired, votes: []vote{
			{user: approver, approve: true, status: slackview.CountedStatus(1, 2, []string{approver})},
			{user: approver2, approve: false, status: slackview.RejectedStatus},
			{user: approver2, approve: true, told: slackview.Refused(slackview.AlreadyRejected(approver2, clickNow))},
		}},
		{name: "no executor in this build", opts: func(o *Options, _ *fakeRepairer) { o.Clusters[0].Repairer = nil }, votes: []vote{
			{user: approver, approve: true, said: []string{slackview.NoExecutorReply(approver, plan)},
				status: slackview.NoExecutorStatus, decision: slackview.ApprovedLine([]string{approver}, clickNow)},
		}},
		{name: "the decision cannot be recorded",
			opts: func(o *Options, _ *fakeRepairer) {
				o.Clusters[0].Decisions = scriptedDecisions{errors.New("lease conflict")}
			},
			votes: []vote{{user: approver, approve: true, told: slackview.Refused(slackview.RefuseNotRecorded)}}},
		{name: "the decision record is not signed by this bot",
			opts: func(o *Options, _ *fakeRepairer) {
				o.Clusters[0].Decisions = scriptedDecisions{fmt.Errorf("reading the record: %w", approval.ErrUnsignedRecord)}
			},
			votes: []vote{{user: approver, approve: true, told: slackview.UnsignedRecord("approval-1", clickNS),
				said: []string{slackview.UnsignedRecord("approval-1", clickNS)}}}},
		{name: "an authorization refusal records nothing", votes: []vote{
			{user: stranger, approve: true, told: slackview.Refused(slackview.RefuseNotApprover("", "<@"+approver+">"))},
			{user: approver, approve: true, repairs: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bench := newClickBench(t, tt.opts)
			token := sign(t, testSecret, approvalFor(nil))
			for i, v := range tt.votes {
				bench.step(i, token, v)
			}
		})
	}
}

// TestClickDropsVotesThatNoLongerCount: a vote recorded under settings
// that listed its approver (another replica, or before APPROVERS changed)
// is dropped by the next Approve, which says so in the thread, and does
// not count toward the approval.
func TestClickDropsVotesThatNoLongerCount(t *testing.T) {
	shared := newMemoryDecisions()
	withApprovers := func(approvers ...string) func(o *Options, _ *fakeRepairer) {
		return func(o *Options, _ *fakeRepairer) {
			o.Approvers, o.RequiredApprovals = approvers, 2
			o.Clusters[0].Decisions = shared
		}
	}
	token := sign(t, testSecret, approvalFor(nil))
	before := newClickBench(t, withApprovers(approver, approver2))
	before.step(0, token, vote{user: approver, approve: true, status: slackview.CountedStatus(1, 2, []string{approver})})
	after := newClickBench(t, withApprovers(approver2, approver3))
	after.step(1, token, vote{user: approver2, approve: true,
		said: []string{
			slackview.VotesDropped([]string{approver}, "", false),
			slackview.CountedReply(approver2, 1, 2),
		},
		status: slackview.CountedStatus(1, 2, []string{approver2})})
	after.step(2, token, vote{user: approver3, approve: true, repairs: 1})
}

// step handles v's click on the message whose buttons carry token and
// checks what it did; i numbers it in failures.
func (cb *clickBench) step(i int, token string, v vote) {
	t := cb.t
	t.Helper()
	postsBefore, toldBefore := cb.api.sent()
	cb.b.handleClick(t.Context(), clickOn(v.user, v.approve, token))
	cb.b.wg.Wait() // the thread's queue and a started repair
	posts, told := cb.api.sent()
	var gotTold string
	for _, e := range told[len(toldBefore):] {
		if e.User == v.user {
			gotTold = e.Text
		}
	}
	if gotTold != v.told {
		t.Errorf("click %d by %s: told %q\nwant %q", i, v.user, gotTold, v.told)
	}
	var said []string
	for _, p := range posts[len(postsBefore):] {
		if p.Thread == clickTS {
			said = append(said, p.Text)
		}
	}
	if v.said != nil && strings.Join(said, "\n---\n") != strings.Join(v.said, "\n---\n") {
		t.Errorf("click %d by %s: thread replies %q\nwant %q", i, v.user, said, v.said)
	}
	if n := len(cb.repairer.calls()); n != v.repairs {
		t.Errorf("click %d by %s: %d repairs started, want %d", i, v.user, n, v.repairs)
	}
	status, decision := cb.lines()
	if v.status != "" && status != "*Status:* "+v.status {
		t.Errorf("click %d by %s: status line %q, want %q", i, v.user, status, "*Status:* "+v.status)
	}
	if v.decision != "" && decision != v.decision {
		t.Errorf("click %d by %s: decision line %q, want %q", i, v.user, decision, v.decision)
	}
}

// lines returns the clicked message's status and decision lines as the
// bot last rewrote them ("" for none).
func (cb *clickBench) lines() (status, decision string) {
	blocks, _ := cb.parent.Snapshot()
	for _, b := range blocks {
		cb, ok := b.(*slack.ContextBlock)
		if !ok || len(cb.ContextElements.Elements) == 0 {
			continue
		}
		text, _ := cb.ContextElements.Elements[0].(*slack.TextBlockObject)
		switch {
		case text == nil:
		case cb.BlockID == slackview.BlockStatus:
			status = text.Text
		case cb.BlockID == slackview.BlockDecision:
			decision = text.Text
		}
	}
	return status, decision
}
