// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// crashingRepairer is a repair whose broker crashes again.
type crashingRepairer struct{}

func (crashingRepairer) Repair(ctx context.Context, _ recovery.Request, rep recovery.Reporter) recovery.Summary {
	sum := recovery.Summary{Outcome: recovery.OutcomeCrashAgain, Text: "foobar-kafka-broker-0 crashed again after the repair."}
	rep.Finish(ctx, sum)
	return sum
}

// fakeEscalations holds one record per cluster.
type fakeEscalations struct {
	mu      sync.Mutex
	records map[string]EscalationRef
	clears  int
}

func (f *fakeEscalations) EscalationFor(_ context.Context, namespace, pod, _ string) (EscalationRef, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.records {
		if strings.HasPrefix(r.KafkaCluster, namespace+"/") && r.Pod == pod {
			return r, true, nil
		}
	}
	return EscalationRef{}, false, nil
}

func (f *fakeEscalations) ClearEscalation(_ context.Context, kafkaCluster, uid string) (EscalationRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.records[kafkaCluster]
	if !ok || r.UID != uid {
		return EscalationRef{}, errors.New("no such escalation record")
	}
	delete(f.records, kafkaCluster)
	f.clears++
	return r, nil
}

func (f *fakeEscalations) count() (records, clears int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.records), f.clears
}

// TestSafety02_ClearEscalationButton: after a repair whose broker crashed
// again, the thread offers approvers a Clear escalation button naming the
// cluster and the CLI command; a non-approver's click, a click in another
// channel and a forged value change nothing; an approver's click clears
// exactly that record and says so in the thread.
func TestSafety02_ClearEscalationButton(t *testing.T) {
	esc := &fakeEscalations{records: map[string]EscalationRef{
		seedNamespace + "/foobar": {KafkaCluster: seedNamespace + "/foobar", UID: "uid-esc-1", Pod: seedPod},
	}}
	h := startBot(t, func(o *Options) { o.Clusters[0].Repairer = crashingRepairer{}; o.Clusters[0].Escalations = esc })
	m := h.diagnose()
	h.click(m, slackview.ActionApprove, approver)
	var button slackemu.Message
	h.waitFor("the escalation message with its button", func() bool {
		for _, r := range h.emu.Thread(channel, m.TS) {
			if strings.Contains(r.Text, "is *escalated*") {
				button = r
				return true
			}
		}
		return false
	})
	if !strings.Contains(button.Text, "bot escalation clear "+seedNamespace+"/foobar") {
		t.Errorf("the escalation message does not name the CLI command: %q", button.Text)
	}
	token, _ := buttons(t, button.Blocks)[actionClearEscalation]["value"].(string)
	if token == "" {
		t.Fatalf("no Clear escalation button in %s", button.Blocks)
	}

	h.click(button, actionClearEscalation, stranger)
	h.ephemeral(channel, stranger, "Only approvers may allow automated repairs again")
	h.clickRaw(slackemu.Click{ChannelID: otherChan, UserID: approver, MessageTS: button.TS, ActionID: actionClearEscalation, Value: token})
	h.ephemeral(otherChan, approver, "belongs to another channel")
	part, sig, _ := strings.Cut(token, ".")
	h.clickRaw(slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: button.TS, ActionID: actionClearEscalation, Value: part + "x." + sig})
	h.ephemeral(channel, approver, "not valid")
	if records, clears := esc.count(); records != 1 || clears != 0 {
		t.Fatalf("refused clicks changed the records: %d left, %d cleared", records, clears)
	}

	h.click(button, actionClearEscalation, approver)
	h.waitFor("the cleared note", func() bool {
		for _, r := range h.emu.Thread(channel, m.TS) {
			if strings.Contains(r.Text, "cleared the escalation of `"+seedNamespace+"/foobar`") {
				return true
			}
		}
		return false
	})
	if records, clears := esc.count(); records != 0 || clears != 1 {
		t.Errorf("after the approver's click: %d records left, %d cleared; want 0 and 1", records, clears)
	}
	if !strings.Contains(h.logs.String(), `"event":"escalation.cleared"`) {
		t.Error("no audit line for the clear")
	}
}
