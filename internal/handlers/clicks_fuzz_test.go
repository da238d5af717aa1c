// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// fuzzNow is the fuzz target's clock: the genuine token below is valid then.
var fuzzNow = time.Date(2026, 11, 29, 17, 5, 0, 0, time.UTC)

// countingRepairer records the requests it is asked to run.
type countingRepairer struct {
	mu   sync.Mutex
	reqs []recovery.Request
}

func (r *countingRepairer) Repair(ctx context.Context, req recovery.Request, rep recovery.Reporter) recovery.Summary {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	s := recovery.Summary{Outcome: recovery.OutcomeDryRun}
	rep.Finish(ctx, s)
	return s
}

// genuineFuzzToken is a token this bot signed for the seed incident.
func genuineFuzzToken(t testing.TB) string {
	t.Helper()
	tok, err := approval.Sign(testSecret, approval.Approval{
		ID: "FUZZ0001", Namespace: seedNamespace, Pod: seedPod, PodUID: seedUID,
		Rule: "metadata-log-offset-mismatch", Action: "move-metadata-log", Target: "__cluster_metadata-0",
		Requester: requester, Channel: channel, Team: "T0EMU0001",
		IssuedAt: fuzzNow.Add(-time.Minute), ExpiresAt: fuzzNow.Add(29 * time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// clickPayload is a block_actions payload as Slack sends it.
func clickPayload(team, chan_, user, actionID, value string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "block_actions", "team": map[string]any{"id": team}, "user": map[string]any{"id": user, "team_id": team},
		"channel":   map[string]any{"id": chan_},
		"container": map[string]any{"type": "message", "message_ts": "1764435600.000100", "channel_id": chan_},
		"message": map[string]any{"ts": "1764435600.000100", "blocks": []any{map[string]any{
			"type": "actions", "block_id": slackview.BlockActions,
			"elements": []any{
				map[string]any{"type": "button", "action_id": slackview.ActionApprove, "text": map[string]any{"type": "plain_text", "text": "Approve"}, "value": value},
				map[string]any{"type": "button", "action_id": slackview.ActionReject, "text": map[string]any{"type": "plain_text", "text": "Reject"}, "value": value},
			}}}},
		"actions": []any{map[string]any{"type": "button", "action_id": actionID, "block_id": slackview.BlockActions, "value": value}},
	})
	return string(b)
}

// FuzzInteractionPayload decodes arbitrary interactive payloads the way
// slack-go does (into slack.InteractionCallback) and runs the bot's click
// handling on them: it never panics, and it asks the Repairer to run only
// for a token this bot signed, clicked Approve by an approver in the
// token's own channel and workspace, an approval channel, by someone other
// than the requester, with exactly the token's request.
func FuzzInteractionPayload(f *testing.F) {
	genuine := genuineFuzzToken(f)
	f.Add(clickPayload("T0EMU0001", channel, approver, slackview.ActionApprove, genuine))
	f.Add(clickPayload("T0EMU0001", channel, approver, slackview.ActionReject, genuine))
	f.Add(clickPayload("T0EMU0001", otherChan, approver, slackview.ActionApprove, genuine))
	f.Add(clickPayload("T0OTHERWS", channel, approver, slackview.ActionApprove, genuine))
	f.Add(clickPayload("T0EMU0001", channel, stranger, slackview.ActionApprove, genuine))
	f.Add(clickPayload("T0EMU0001", channel, approver, slackview.ActionApprove, genuine[:len(genuine)-3]+"AAA"))
	f.Add(clickPayload("T0EMU0001", channel, approver, slackview.ActionApprove, strings.Repeat("A", 10<<10)))
	f.Add(`{"type":"block_actions","actions":[null]}`)
	f.Add(`{"type":"block_actions","actions":[{"action_id":"kafkabot_approve"}],"message":{"blocks":[{"type":"unknown"}]}}`)
	if raw, err := os.ReadFile("testdata/socket.envelope.interactive.block_actions.java-sdk-test.json"); err == nil {
		var env struct{ Payload json.RawMessage }
		if json.Unmarshal(raw, &env) == nil {
			f.Add(string(env.Payload))
		}
	}
	f.Fuzz(func(t *testing.T, payload string) { handlePayloadChecked(t, payload) })
}

// handlePayloadChecked runs one payload through decoding and click
// handling and checks the fuzz target's invariant; it returns how many
// repairs ran.
func handlePayloadChecked(t *testing.T, payload string) int {
	{
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(payload), &cb); err != nil {
			return 0
		}
		c, ok := clickFrom(cb)
		if !ok {
			return 0
		}
		rep := &countingRepairer{}
		b, err := New(Options{
			AppToken: "xapp-fuzz", BotToken: "xoxb-fuzz", ApprovalSecret: testSecret, Approvers: []string{approver},
			ApprovalChannels: []string{channel},
			Clusters:         []ClusterOptions{{Reader: newFakeCluster(t), Repairer: rep}}, Diagnoser: seedDiagnoser{},
			Clock: func() time.Time { return fuzzNow },
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b.poster = slacktransport.NewPoster(ctx, &recordingAPI{}, b.log, &b.wg)
		b.handleClick(ctx, c)
		b.wg.Wait()

		rep.mu.Lock()
		defer rep.mu.Unlock()
		if len(rep.reqs) == 0 {
			return 0
		}
		a, err := approval.Verify(testSecret, c.Token, fuzzNow)
		switch {
		case len(rep.reqs) != 1:
			t.Fatalf("one click ran %d repairs", len(rep.reqs))
		case err != nil:
			t.Fatalf("a repair ran on a token that does not verify (%v): %q", err, c.Token)
		case !c.Approve || !b.isApprover(c.User):
			t.Fatalf("a repair ran on approve=%t by %q", c.Approve, c.User)
		case !b.clusters.All()[0].approvalChannels[c.Channel]:
			t.Fatalf("a repair ran on an approval in channel %q, not an approval channel", c.Channel)
		case c.User == a.Requester:
			t.Fatalf("a repair ran on its requester's own approval")
		case a.CheckOrigin(c.Team, c.Channel) != nil:
			t.Fatalf("a repair ran from team %q channel %q for a token of %q/%q", c.Team, c.Channel, a.Team, a.Channel)
		}
		got := rep.reqs[0]
		if got.ApprovalID != a.ID || got.Pod != a.Pod || got.Namespace != a.Namespace || got.PodUID != a.PodUID ||
			got.Action != a.Action || got.Target != a.Target || got.Approver != c.User {
			t.Fatalf("the repair request %+v is not the token's %+v", got, a)
		}
		return len(rep.reqs)
	}
}

// TestInteractionPayloadSeeds checks the fuzz target's seeds do what they
// stand for: the genuine approval runs one repair, each replay or forgery
// none, so the invariant above is exercised on both sides.
func TestInteractionPayloadSeeds(t *testing.T) {
	genuine := genuineFuzzToken(t)
	tests := []struct {
		name    string
		payload string
		repairs int
	}{
		{"genuine approval", clickPayload("T0EMU0001", channel, approver, slackview.ActionApprove, genuine), 1},
		{"reject", clickPayload("T0EMU0001", channel, approver, slackview.ActionReject, genuine), 0},
		{"replayed in another channel", clickPayload("T0EMU0001", otherChan, approver, slackview.ActionApprove, genuine), 0},
		{"replayed from another workspace", clickPayload("T0OTHERWS", channel, approver, slackview.ActionApprove, genuine), 0},
		{"not an approver", clickPayload("T0EMU0001", channel, stranger, slackview.ActionApprove, genuine), 0},
		{"altered signature", clickPayload("T0EMU0001", channel, approver, slackview.ActionApprove, genuine[:len(genuine)-3]+"AAA"), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := handlePayloadChecked(t, tc.payload); got != tc.repairs {
				t.Errorf("%d repairs, want %d", got, tc.repairs)
			}
		})
	}
}
