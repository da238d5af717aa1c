// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// The health sweep's other messages: grouped alerts, resolutions and the
// periodic summary.

// Resolutions as the sweep names them.
const (
	ResolutionRecovered  = "recovered"
	ResolutionPodGone    = "pod-gone"
	ResolutionSuperseded = "superseded"
)

// Bounds of the sweep's lists.
const (
	maxSummaryLines = 40
	maxGroupLines   = 60
	maxThreadText   = 3900
)

// AlertFacts is what the sweep says about one unhealthy pod, for lists,
// resolutions and thread lines.
type AlertFacts struct {
	// Key is "namespace/pod/rule".
	Key            string
	Namespace, Pod string
	// Rule, Title and Severity are the best finding's; Title is empty for
	// an unhealthy pod no rule explains.
	Rule, Title string
	Severity    diagnose.Severity
	// Reason is how the sweep noticed the pod; Detail says it for people.
	Reason, Detail       string
	StartsAt, ResolvedAt time.Time
	// Resolution is why the alert stopped firing.
	Resolution      string
	Repeat, Changed bool
	// Source is who raised the alert (the zero value: the health sweep).
	Source Source
}

// ResolvedHeader is the header of a resolved alert.
func ResolvedHeader(label, title string) slack.Block {
	text := "✅ Resolved · " + PlainSafe(label)
	if title != "" {
		text += ": " + PlainSafe(OneLine(title))
	}
	return slack.NewHeaderBlock(Plain(Truncate(text, MaxHeaderText)), slack.HeaderBlockOptionBlockID(BlockHeader))
}

// ResolvedBanner says why and when the alert resolved.
func ResolvedBanner(a AlertFacts) slack.Block {
	text := "✅ *Resolved:* " + resolutionWords(a)
	if !a.StartsAt.IsZero() && !a.ResolvedAt.IsZero() {
		text += fmt.Sprintf("\nFired from %s to %s (%s).", Date(a.StartsAt, DateTime),
			Date(a.ResolvedAt, DateTime), a.ResolvedAt.Sub(a.StartsAt).Round(time.Second))
	}
	return Section(BlockAlert, text)
}

// ResolvedAlert is a resolved alert whose original blocks this
// process never saw (it restarted since the alert was posted).
func ResolvedAlert(a AlertFacts) []slack.Block {
	var what strings.Builder
	fmt.Fprintf(&what, "*Was:* %s", EscapeTruncate(OneLine(cmp.Or(a.Title, "unhealthy, no known failure pattern matched")), 300))
	if a.Rule != "" {
		fmt.Fprintf(&what, " (rule %s", InlineCode(a.Rule, 120))
		if a.Severity != "" {
			fmt.Fprintf(&what, ", severity %s", EscapeMrkdwn(string(a.Severity)))
		}
		what.WriteString(")")
	}
	if a.Reason != "" {
		fmt.Fprintf(&what, "\n*Noticed:* %s", EscapeTruncate(a.Reason, 100))
		if a.Detail != "" {
			what.WriteString(" — " + EscapeTruncate(OneLine(a.Detail), 500))
		}
	}
	return []slack.Block{
		ResolvedHeader(PodLabel(a.Namespace, a.Pod), a.Title),
		ResolvedBanner(a),
		Section(BlockSummary, what.String()),
		slack.NewContextBlock(BlockContext, Mrkdwn(capitalize(a.Source.foundBy())+" · the full diagnosis is no longer shown (the bot restarted since it was posted)")),
	}
}

func resolutionWords(a AlertFacts) string {
	pod := InlineCode(PodLabel(a.Namespace, a.Pod), 200)
	switch a.Resolution {
	case ResolutionRecovered:
		return pod + " is Ready again and stayed Ready for the grace period."
	case ResolutionPodGone:
		return pod + " is gone (deleted and not recreated) for the grace period."
	case ResolutionSuperseded:
		return pod + " still fails, but with another finding, which has an alert of its own."
	}
	return pod + " is no longer unhealthy (" + EscapeTruncate(cmp.Or(a.Resolution, "resolved"), 60) + ")."
}

// ResolutionLine is the thread line of a resolved alert.
func ResolutionLine(a AlertFacts) string {
	icon := "✅"
	switch a.Resolution {
	case ResolutionSuperseded:
		icon = "🔀"
	case ResolutionPodGone:
		icon = "👻"
	}
	line := icon + " " + resolutionWords(a)
	if a.Rule != "" {
		line += " Finding " + InlineCode(a.Rule, 120)
	}
	if !a.StartsAt.IsZero() {
		line += fmt.Sprintf(" fired since %s", Date(a.StartsAt, DateTime))
	}
	return line + "."
}

// MemberLine is one pod of a grouped alert or a summary.
func MemberLine(a AlertFacts) string {
	title := cmp.Or(a.Title, "no known failure pattern matched")
	line := fmt.Sprintf("• %s %s — %s", severityIconFor(a), InlineCode(a.Pod, 120), EscapeTruncate(OneLine(title), 200))
	if a.Rule != "" {
		line += " (" + InlineCode(a.Rule, 100) + ")"
	}
	if a.Reason != "" {
		line += " · " + EscapeTruncate(a.Reason, 60)
	}
	return line
}

// severityIconFor is an alerting pod's emoji: the worse of its finding's
// severity and how the sweep noticed it; an alerting pod is never better
// than 🟠, and red when no rule explains it.
func severityIconFor(a AlertFacts) string {
	if a.Title == "" {
		return LevelCritical.Icon()
	}
	return max(SeverityLevel(a.Severity), reasonLevel(a.Reason)).Icon()
}

// reasonLevel is how bad the sweep's reason for alerting is.
func reasonLevel(reason string) Level {
	switch reason {
	case "CrashLoopBackOff", "OOMKilled", "Error":
		return LevelCritical
	}
	return LevelMedium
}

// memberSections lays member lines out in sections within Slack's limits.
func memberSections(title string, lines []string) []slack.Block {
	var blocks []slack.Block
	var cur strings.Builder
	cur.WriteString(title)
	flush := func() {
		if cur.Len() > 0 {
			blocks = append(blocks, Section(fmt.Sprintf("%s.%d", BlockMembers, len(blocks)), strings.TrimRight(cur.String(), "\n")))
			cur.Reset()
		}
	}
	for i, l := range lines {
		if i == maxGroupLines {
			flush()
			cur.WriteString(fmt.Sprintf("_… and %d more_", len(lines)-i))
			break
		}
		if RuneLen(cur.String())+RuneLen(l)+1 > MaxSectionText-100 {
			flush()
		}
		cur.WriteString(l + "\n")
	}
	flush()
	return blocks
}

// Group is a grouped alert: several unhealthy pods of one Kafka cluster
// in one message, each a line (MemberLine), and the cluster's Silence
// control (nil for none).
type Group struct {
	Namespace, Cluster string
	// Firing is how many members fire; Lines are the members' lines.
	Firing  int
	Lines   []string
	Now     time.Time
	Silence slack.Block
}

// Message renders the grouped alert.
func (g Group) Message() Message {
	label := PodLabel(g.Namespace, cmp.Or(g.Cluster, "?"))
	blocks := []slack.Block{
		Header(fmt.Sprintf("🔴 Kafka cluster %s: %d pods unhealthy", PlainSafe(label), g.Firing)),
		Section(BlockAlert, fmt.Sprintf("🚨 *Grouped alert from the health sweep:* %d pods of the Kafka cluster %s are unhealthy at once, "+
			"so they share this message. Pods that join or recover are listed in the thread.\n"+
			"Each pod's full diagnosis, with repair buttons where the bot can repair it: `/kafka diagnose NAMESPACE/POD`.",
			g.Firing, InlineCode(label, 200))),
	}
	blocks = append(blocks, memberSections("*Pods*\n", g.Lines)...)
	blocks = append(blocks, Context(BlockContext, fmt.Sprintf("Found by the health sweep · updated %s · read-only: nothing was changed",
		Date(g.Now, DateTime))))
	if g.Silence != nil {
		blocks = append(blocks, g.Silence)
	}
	fallback := Truncate(EscapeMrkdwn(fmt.Sprintf("🚨 Kafka alert: %d pods of cluster %s are unhealthy", g.Firing, label)), MaxFallbackText)
	return Message{Blocks: CapBlocks(blocks), Fallback: fallback}
}

// GroupThreadText is the thread line of pods joining a grouped alert (or
// still firing, when every one is a repeat); firing counts all members.
func GroupThreadText(alerts []AlertFacts, firing int) string {
	var lines []string
	repeat := true
	for _, a := range alerts {
		lines = append(lines, MemberLine(a))
		repeat = repeat && a.Repeat && !a.Changed
	}
	firing = max(firing, len(alerts))
	head := fmt.Sprintf("➕ %d more pod(s) of this cluster are unhealthy (%d firing in all):", len(alerts), firing)
	if repeat {
		head = fmt.Sprintf("🔁 Still firing (%d pods):", firing)
	}
	return Truncate(head+"\n"+strings.Join(lines, "\n"), maxThreadText)
}

// GroupResolvedLine is the thread line of a grouped alert once resolved.
const GroupResolvedLine = "✅ Every pod of this group is healthy again (or gone): the group alert is resolved."

// ResolvedGroup is a grouped alert once every member recovered or left.
func ResolvedGroup(namespace, cluster string, lines []string, now time.Time) Message {
	label := PodLabel(namespace, cmp.Or(cluster, "?"))
	blocks := []slack.Block{
		slack.NewHeaderBlock(Plain(Truncate("✅ Resolved · Kafka cluster "+PlainSafe(label), MaxHeaderText)), slack.HeaderBlockOptionBlockID(BlockHeader)),
		Section(BlockAlert, fmt.Sprintf("✅ *Resolved:* every pod of this group is healthy again (or gone) since %s. The thread tells each pod's story.",
			Date(now, DateTime))),
	}
	blocks = append(blocks, memberSections("*Pods that were unhealthy*\n", lines)...)
	return Message{Blocks: CapBlocks(blocks), Fallback: EscapeMrkdwn("Resolved: Kafka cluster " + label)}
}

// SweepSummary is the periodic report of a scheduled sweep.
type SweepSummary struct {
	At        time.Time
	KafkaPods int
	// Firing are the alerts firing now, silenced ones included, by key.
	Firing   []AlertFacts
	Silenced int
}

// Message renders the summary.
func (s SweepSummary) Message() Message {
	head := fmt.Sprintf("🩺 Kafka health sweep: %d alert(s) firing", len(s.Firing))
	if len(s.Firing) == 0 {
		head = fmt.Sprintf("🩺 Kafka health sweep: all %d Kafka pods healthy", s.KafkaPods)
	}
	blocks := []slack.Block{slack.NewHeaderBlock(Plain(head), slack.HeaderBlockOptionBlockID(BlockHeader))}
	firing := slices.Clone(s.Firing)
	slices.SortFunc(firing, func(a, b AlertFacts) int { return strings.Compare(a.Key, b.Key) })
	var lines []string
	for i, a := range firing {
		if i == maxSummaryLines {
			lines = append(lines, fmt.Sprintf("_… and %d more_", len(firing)-i))
			break
		}
		line := fmt.Sprintf("• %s %s — %s", severityIconFor(a), InlineCode(PodLabel(a.Namespace, a.Pod), 200),
			EscapeTruncate(OneLine(cmp.Or(a.Title, "no known failure pattern matched")), 200))
		if !a.StartsAt.IsZero() {
			line += " · since " + Date(a.StartsAt, DateTime)
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		blocks = append(blocks, memberSections("", lines)...)
	}
	ctx := fmt.Sprintf("Looked at %d Kafka pod(s) at %s", s.KafkaPods, Date(s.At, DateTime))
	if s.Silenced > 0 {
		ctx += fmt.Sprintf(" · %d of the alerts are silenced (`/kafka silences`)", s.Silenced)
	}
	blocks = append(blocks, Context(BlockContext, ctx))
	return Message{Blocks: CapBlocks(blocks), Fallback: EscapeMrkdwn(head)}
}

// PodLabel is "namespace/name".
func PodLabel(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
