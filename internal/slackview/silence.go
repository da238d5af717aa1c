// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// The words of alert silences and of /kafka silences and sweep: the
// Silence and End silence controls, why a click on them changed nothing
// (for Refused), the thread's confirmations, the list of silences and the
// sweep's answers. internal/handlers decides which applies.

// SilenceButton is the Silence button that silences what ("pod" or
// "cluster") for choice ("1h").
func SilenceButton(what, choice string) string { return "🔕 Silence " + what + " " + choice }

// SilenceOption is the Silence menu's option that silences what for choice.
func SilenceOption(what, choice string) string { return "🔕 Silence " + what + " for " + choice }

// Why a click on a Silence button silenced nothing.
const (
	RefuseSilenceExpired        = "This Silence button has expired. Nothing was silenced."
	RefuseSilenceInvalidToken   = "This button is not valid (it was not issued by this bot, or was altered). Nothing was silenced."
	RefuseSilenceChoice         = "This Silence choice is not one the bot offers. Nothing was silenced."
	RefuseSilenceWrongOrigin    = "This Silence button belongs to another channel. Nothing was silenced."
	RefuseSilenceUnknownCluster = "This Silence button is for a Kubernetes cluster I do not serve. Nothing was silenced."
	RefuseSilenceNoSilencer     = "Alerts are not enabled on this bot, so there is nothing to silence."
)

// RefuseSilenceNotApprover: Silence was clicked by someone not among
// approvers (ApproverList's phrase).
func RefuseSilenceNotApprover(approvers string) string {
	return "Silencing hides alerts from everyone, so only approvers may do it. Approvers: " + approvers + ". Nothing was silenced."
}

// SilenceFailed tells the clicker the silence could not be recorded.
func SilenceFailed(err string) string {
	return "⚠️ I could not record the silence: " + EscapeTruncate(err, 500)
}

// Silenced is the thread's reply: user silenced key (named in full) for
// took (a duration in words) until until, as silence id.
func Silenced(user, key, took string, until time.Time, id string) string {
	return fmt.Sprintf("🔕 %s silenced %s for %s, until %s (silence %s). No alerts about it are posted until then; `/kafka silences` lists the silences.",
		Mention(user), InlineCode(key, 300), took, Date(until, DateTime), InlineCode(id, 40))
}

// EndSilenceButton is the End silence button's text.
const EndSilenceButton = "🔔 End silence"

// EndSilenceConfirm asks before ending the silence of key.
func EndSilenceConfirm(key string) *slack.ConfirmationBlockObject {
	return slack.NewConfirmationBlockObject(Plain("End this silence?"),
		Plain(Truncate("Alerts about "+PlainSafe(key)+" are posted again from the next sweep.", MaxConfirmText)),
		Plain("End silence"), Plain("Cancel"))
}

// Why a click on an End silence button changed nothing (an invalid button:
// RefuseInvalidToken).
const (
	RefuseEndExpired        = "This silence has already ended. Nothing was changed."
	RefuseEndWrongOrigin    = "This End silence button belongs to another channel. Nothing was changed."
	RefuseEndUnknownCluster = "This End silence button is for a Kubernetes cluster I do not serve. Nothing was changed."
	RefuseEndNoSilencer     = "Alerts are not enabled on this bot, so there is no silence to end."
	RefuseEndNotInForce     = "This silence is no longer in force (it ended, or someone ended it). Nothing was changed."
)

// RefuseEndNotApprover: End silence was clicked by someone not among
// approvers (ApproverList's phrase).
func RefuseEndNotApprover(approvers string) string {
	return "Only approvers may end a silence. Approvers: " + approvers + ". Nothing was changed."
}

// EndSilenceFailed tells the clicker the silence could not be ended.
func EndSilenceFailed(err string) string {
	return "⚠️ I could not end the silence: " + EscapeTruncate(err, 500)
}

// SilenceEnded says user ended silence id of key (named in full) at at.
func SilenceEnded(user, key, id string, at time.Time) string {
	return fmt.Sprintf("🔔 %s ended the silence of %s (silence %s) at %s: its alerts are posted again from the next sweep.",
		Mention(user), InlineCode(key, 300), InlineCode(id, 40), Date(at, DateTime))
}

// AlertsDisabled answers /kafka silences and sweep on a bot without alerts.
const AlertsDisabled = "Alerts are not enabled on this bot (ALERT_CHANNEL is not set), so there are no sweeps or silences."

// The acks of /kafka sweep and /kafka silences.
const (
	Sweeping        = "🔎 Sweeping the Kafka pods…"
	ReadingSilences = "🔎 Reading the silences…"
)

// SilencesUnreadable tells the asker the silences could not be read.
func SilencesUnreadable(err string) string {
	return "⚠️ I could not read the silences: " + EscapeTruncate(err, 500)
}

// ClusterUnreachable names a cluster that could not be asked, and why.
func ClusterUnreachable(cluster, why string) string {
	return fmt.Sprintf("`%s` cannot be reached (%s)", cluster, EscapeTruncate(why, 200))
}

// ClusterFailed names a cluster whose answer was an error.
func ClusterFailed(cluster, err string) string {
	return fmt.Sprintf("`%s`: %s", cluster, EscapeTruncate(err, 200))
}

// SilencesUnreadableOf heads a list of silences that lacks the clusters
// of problems (ClusterUnreachable, ClusterFailed).
func SilencesUnreadableOf(problems []string) string {
	return "⚠️ I could not read the silences of " + strings.Join(problems, "; ") + "."
}

// NoSilences answers /kafka silences when none is in force.
const NoSilences = "🔔 No silences are in force: every alert is posted."

// SilencesInForce heads the list of n silences.
func SilencesInForce(n int) string { return fmt.Sprintf("🔕 *%d silence(s) in force*", n) }

// SilenceLine is one silence of the list: of key until until (left from
// now), set by user by, as silence id.
func SilenceLine(key string, until, now time.Time, by, id string) string {
	return fmt.Sprintf("%s until %s (%s left), by %s · id %s", InlineCode(key, 300),
		Date(until, DateTime), until.Sub(now).Round(time.Minute), Mention(by), InlineCode(id, 40))
}

// SilenceItem is one silence in force in /kafka silences' list, with its
// End silence button (nil: none).
type SilenceItem struct {
	Key, By, ID string
	Until       time.Time
	End         *slack.ButtonBlockElement
}

// SilencesList is the answer to /kafka silences: the silences with an End
// silence button each, within Slack's block count (no blocks when there
// are none), and as text, one a line, within maxText characters.
func SilencesList(list []SilenceItem, now time.Time, maxText int) (blocks []slack.Block, text string) {
	if len(list) == 0 {
		return nil, NoSilences
	}
	var b strings.Builder
	b.WriteString(SilencesInForce(len(list)) + "\n")
	for i, s := range list {
		line := "• " + SilenceLine(s.Key, s.Until, now, s.By, s.ID) + "\n"
		if RuneLen(b.String())+RuneLen(line) > maxText {
			b.WriteString(AndMore(len(list) - i))
			break
		}
		b.WriteString(line)
	}
	blocks = []slack.Block{Section("kafkabot.silences", SilencesInForce(len(list)))}
	for i, s := range list {
		if len(blocks) == MaxBlocks-1 {
			blocks = append(blocks, slack.NewContextBlock("kafkabot.silences.more", Mrkdwn(AndMore(len(list)-i))))
			break
		}
		var accessory *slack.Accessory
		if s.End != nil {
			accessory = slack.NewAccessory(s.End)
		}
		blocks = append(blocks, slack.NewSectionBlock(Mrkdwn(SilenceLine(s.Key, s.Until, now, s.By, s.ID)), nil, accessory,
			slack.SectionBlockOptionBlockID(fmt.Sprintf("kafkabot.silences.%d", i))))
	}
	return blocks, strings.TrimRight(b.String(), "\n")
}

// AndMore ends a list cut short n items before its end.
func AndMore(n int) string { return fmt.Sprintf("_… and %d more_", n) }

// AlertChannel names the alert channel where a sweep's alerts go.
func AlertChannel(id string) string {
	if id == "" {
		return "the alert channel"
	}
	return "<#" + id + ">"
}

// SweepNotLeader answers /kafka sweep on a bot serving one cluster when a
// replica that does not lead the sweep was asked.
const SweepNotLeader = "↪️ Slack delivered this command to a replica that does not lead the sweep; the leader sweeps on its schedule. Try again to reach another replica."

// SweepFailed tells why a sweep failed.
func SweepFailed(why string) string { return "⚠️ The sweep failed: " + why }

// SweptAll: the only cluster was swept; where is AlertChannel's phrase.
func SweptAll(where string) string {
	return "✅ Swept every Kafka pod. New alerts, if any, are in " + where + "."
}

// Swept: the clusters were swept (names in backquotes).
func Swept(clusters []string, where string) string {
	return "✅ Swept " + strings.Join(clusters, ", ") + ". New alerts, if any, are in " + where + "."
}

// SweepNotLeaderOf: this replica does not lead the sweep of clusters.
func SweepNotLeaderOf(clusters []string) string {
	return "↪️ This replica does not lead the sweep of " + strings.Join(clusters, ", ") + "; its leader sweeps on its schedule. Try again to reach another replica."
}
