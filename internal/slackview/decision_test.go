// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"strings"
	"testing"
	"time"
)

// TestDecisionWords pins the words of an approval's decision where they
// vary with their input: plurals, empty lists, the cluster phrase, dashes
// for missing values.
func TestDecisionWords(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	eleven := []string{"U01", "U02", "U03", "U04", "U05", "U06", "U07", "U08", "U09", "U10", "U11"}
	tests := []struct {
		name, got, want string
	}{
		{"one more approver", CountedReply("U0ALICE", 1, 2),
			"✅ <@U0ALICE> approved (1 of 2). The repair starts when one more approver approves. Nothing was changed yet."},
		{"more approvers", CountedReply("U0ALICE", 1, 3),
			"✅ <@U0ALICE> approved (1 of 3). The repair starts when 2 more approvers approve. Nothing was changed yet."},
		{"counted status", CountedStatus(2, 3, []string{"U0ALICE", "U0BOB"}),
			"⏳ 2 of 3 approvals: approved by <@U0ALICE>, <@U0BOB>; waiting for one more approver"},
		{"one vote dropped, self-approval forbidden", VotesDropped([]string{"U0ALICE"}, "", false),
			"⚠️ Earlier approval(s) by <@U0ALICE> no longer count: that person is not an approver now, or asked for this diagnosis and self-approval is forbidden. They were removed from the decision record."},
		{"votes dropped in a cluster, self-approval allowed", VotesDropped([]string{"U0ALICE", "U0BOB"}, OfCluster("east"), true),
			"⚠️ Earlier approval(s) by <@U0ALICE>, <@U0BOB> no longer count: they are not an approver of cluster `east` now. They were removed from the decision record."},
		{"approval channels, sorted", ApprovalChannels([]string{"C0B", "C0A"}), "<#C0A>, <#C0B>"},
		{"no approval channel", ApprovalChannels(nil), "no channel (set APPROVAL_CHANNELS or ALERT_CHANNEL)"},
		{"no approver", ApproverList(nil), "nobody (APPROVERS is empty)"},
		{"at most ten approvers", ApproverList(eleven),
			"<@U01>, <@U02>, <@U03>, <@U04>, <@U05>, <@U06>, <@U07>, <@U08>, <@U09>, <@U10>, …"},
		{"channel refusal in a cluster", RefuseChannel(OfCluster("east"), "<#C0A>"),
			"Repairs of cluster `east` are approved only in <#C0A>, not here. Nothing was changed."},
		{"approver refusal on one cluster", RefuseNotApprover(OfCluster(""), "<@U0BOB>"),
			"You are not allowed to approve repairs Approvers: <@U0BOB>. Nothing was changed."},
		{"plan without target and UID", Plan("restart", "", "kafka/broker-0", "", "oom"),
			"`restart` of `-` on pod `kafka/broker-0` (UID `-`), for finding `oom`."},
		{"already approved by you", AlreadyApprovedByYou(1, 3),
			"You already approved this repair (1 of 3 approvals); 2 more approvers must approve too. Nothing more was done."},
		{"already rejected", AlreadyRejected("U0BOB", at),
			"This repair was already rejected by <@U0BOB> at <!date^1772366400^{date_short_pretty} at {time}|2026-03-01 12:00 UTC>. Nothing was changed."},
		{"resumed in a cluster", ResumedHead("east"), "🔁 *Repair resumed* after the bot restarted in cluster `east`"},
		{"resumed on one cluster", ResumedHead(""), "🔁 *Repair resumed* after the bot restarted"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestUsageNamesTheCommand: the help names the command as typed when it
// is a valid slash command name, else /kafka.
func TestUsageNamesTheCommand(t *testing.T) {
	for typed, want := range map[string]string{
		"/kafka": "`/kafka status`", "/kafka-prod": "`/kafka-prod status`", "": "`/kafka status`",
		"/Kafka": "`/kafka status`", "/kafka`; rm": "`/kafka status`",
	} {
		if got := Usage(typed); !strings.Contains(got, want) {
			t.Errorf("Usage(%q) lacks %q:\n%s", typed, want, got)
		}
	}
}
