// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"errors"
	"testing"
)

// TestWordsOfSilencesEscalationsAndTargets pins the sentences that
// internal/handlers used to write inline, word for word, where no handlers
// test reads them whole.
func TestWordsOfSilencesEscalationsAndTargets(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"many matches", ManyMatches("kafka-0", "a/ns/kafka-0", []string{"• `a/ns/kafka-0`", "• `b/ns/kafka-0`"}, Unchecked([]string{"`c` (timeout)"})),
			"❓ `kafka-0` matches Kafka pods in more than one place. Which one? Ask again with the full name, like `/kafka diagnose a/ns/kafka-0`:\n" +
				"• `a/ns/kafka-0`\n• `b/ns/kafka-0`\nI could not check `c` (timeout)."},
		{"no match", NoMatch("ns/kafka-0", []string{"`a`", "`b`"}, Unchecked(nil)),
			"⚠️ I found no Kafka pod `ns/kafka-0` in any cluster I could check (`a`, `b`)."},
		{"no match, none checked", NoMatch("kafka-0", nil, Unchecked([]string{"`a` (down)", "`b` (down)"})),
			"⚠️ I found no Kafka pod `kafka-0` in any cluster I could check.\nI could not check `a` (down), `b` (down)."},
		{"problem", Problem("no such namespace"), "⚠️ no such namespace"},
		{"unreadable silences", SilencesUnreadableOf([]string{ClusterUnreachable("a", "timeout"), ClusterFailed("b", errors.New("forbidden").Error())}),
			"⚠️ I could not read the silences of `a` cannot be reached (timeout); `b`: forbidden."},
		{"unreadable", SilencesUnreadable("boom"), "⚠️ I could not read the silences: boom"},
		{"silence button", SilenceButton("pod", "1h"), "🔕 Silence pod 1h"},
		{"silence option", SilenceOption("cluster", "7d"), "🔕 Silence cluster for 7d"},
		{"sweep, one cluster", SweptAll(AlertChannel("C1")), "✅ Swept every Kafka pod. New alerts, if any, are in <#C1>."},
		{"sweep, several", Swept([]string{"`a`", "`b`"}, AlertChannel("")), "✅ Swept `a`, `b`. New alerts, if any, are in the alert channel."},
		{"not leader of", SweepNotLeaderOf([]string{"`a`"}),
			"↪️ This replica does not lead the sweep of `a`; its leader sweeps on its schedule. Try again to reach another replica."},
		{"escalation refused", Refused(RefuseEscalationUnknownCluster("eu") + RefuseEscalationNothing),
			"🚫 This button is for a Kubernetes cluster I do not serve (`eu`). Nothing was changed."},
		{"escalation not approver", RefuseEscalationNotApprover(OfCluster("eu"), "<@U1>"),
			"Only approvers of cluster `eu` may allow automated repairs again. Approvers: <@U1>."},
		{"escalation clear failed", ClearEscalationFailed("foobar", "conflict"),
			"⚠️ I did not clear the escalation of `foobar`: conflict. `bot escalation list` shows the records."},
		{"escalated", Escalated("eu: foobar", "foobar"),
			"🛑 Cluster `eu: foobar` is *escalated*: the bot runs no automated repair of any of its brokers until a person clears this. " +
				"Find the cause first (the controllers' snapshot, the disks); then an approver clears it here, or anyone with cluster access runs `bot escalation clear foobar`."},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestConfirmDialogs checks the confirm dialogs of End silence and Clear
// escalation.
func TestConfirmDialogs(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		title, text, confirm, deny string
		got                        func() (string, string, string, string)
	}{
		{"end silence", "End this silence?", "Alerts about ns/kafka-0 are posted again from the next sweep.", "End silence", "Cancel",
			func() (string, string, string, string) {
				c := EndSilenceConfirm("ns/kafka-0")
				return c.Title.Text, c.Text.Text, c.Confirm.Text, c.Deny.Text
			}},
		{"clear escalation", "Allow automated repairs again?", "The bot will again offer automated repairs of foobar.", "Clear escalation", "Cancel",
			func() (string, string, string, string) {
				c := ClearEscalationConfirm("foobar")
				return c.Title.Text, c.Text.Text, c.Confirm.Text, c.Deny.Text
			}},
	} {
		title, text, confirm, deny := tc.got()
		if title != tc.title || text != tc.text || confirm != tc.confirm || deny != tc.deny {
			t.Errorf("%s: got %q %q %q %q", tc.name, title, text, confirm, deny)
		}
	}
}
