// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Alert is the health sweep's alert about one pod: its diagnosis and how
// the sweep noticed it. Diagnosis.Source says who raised it (the health
// sweep, or an external system such as Alertmanager).
type Alert struct {
	Diagnosis Diagnosis
	// Reason is how the sweep noticed the pod (CrashLoopBackOff, OOMKilled,
	// FrequentRestarts); Detail says it for people.
	Reason, Detail string
	// Rule is the best finding's rule ("" when none matched).
	Rule string
	// StartsAt is when the alert began firing.
	StartsAt time.Time
	// Repeat: posted again, nothing changed. Changed: the finding changed.
	Repeat, Changed bool
	// ReadError is set when only the pod's status could be read.
	ReadError string
	// Silence is the alert's Silence control (placed after Approve /
	// Reject, never above them); nil for none.
	Silence slack.BlockElement
}

// Message is the alert: the diagnosis message with a one-line banner
// saying it is an alert, and the Silence control beside the buttons.
func (a Alert) Message() Message {
	d := a.Diagnosis
	diag := d.Message()
	blocks := make([]slack.Block, 0, len(diag.Blocks)+2)
	for _, blk := range diag.Blocks {
		switch blk.ID() {
		case BlockHeader:
			blocks = append(blocks, blk, Context(BlockAlert, a.banner()))
			continue
		case BlockContext:
			blk = Context(BlockContext, fmt.Sprintf("%s · %s · read-only: nothing was changed · details in the thread",
				capitalize(d.Source.foundBy()), Date(d.Now, DateTime)))
		case BlockActions:
			if a.Silence != nil {
				if ab, ok := blk.(*slack.ActionBlock); ok {
					els := append(append([]slack.BlockElement(nil), ab.Elements.ElementSet...), a.Silence)
					blk = slack.NewActionBlock(BlockActions, els...)
				}
			}
		}
		blocks = append(blocks, blk)
	}
	if a.Silence != nil && !HasButtons(blocks) {
		blocks = append(blocks, slack.NewActionBlock(BlockSilence, a.Silence))
	}
	return Message{Blocks: CapBlocks(blocks), Fallback: d.fallback("🚨 Kafka alert: ")}
}

// banner says this is an alert, who raised it, how the pod was noticed
// and since when, on one line; the sweep's wording and the rule are in
// Details.
func (a Alert) banner() string {
	src := a.Diagnosis.Source
	var s strings.Builder
	switch {
	case a.Changed:
		s.WriteString("🔀 *Alert: the finding changed*")
	case a.Repeat:
		s.WriteString("🔁 *Alert, still firing*")
	case src.external():
		s.WriteString("🚨 *Alert from " + src.system() + "*" + src.alertSuffix())
	default:
		s.WriteString("🚨 *Alert from the health sweep*")
	}
	if (a.Changed || a.Repeat) && src.external() {
		s.WriteString(" · from " + src.system() + src.alertSuffix())
	}
	s.WriteString(" · noticed " + EscapeTruncate(cmp.Or(a.Reason, "unhealthy"), 60))
	if !a.StartsAt.IsZero() {
		s.WriteString(" · firing since " + Date(a.StartsAt, DateTime))
	}
	if a.ReadError != "" {
		s.WriteString(" · ⚠️ only the pod's status was read, so the diagnosis did not see the log")
	}
	return s.String()
}

// Details is the alert's first thread reply: the diagnosis' details under
// a line saying how the sweep noticed the pod, in its words.
func (a Alert) Details() Message {
	d := a.Diagnosis.Details()
	var s strings.Builder
	s.WriteString("*Noticed:* " + EscapeTruncate(cmp.Or(a.Reason, "unhealthy"), 100))
	if a.Detail != "" {
		s.WriteString(" — " + EscapeTruncate(OneLine(a.Detail), 500))
	}
	if !a.StartsAt.IsZero() {
		s.WriteString(" · firing since " + Date(a.StartsAt, DateTime))
	}
	if a.Rule != "" {
		s.WriteString(" · rule " + InlineCode(a.Rule, 120))
	}
	if src := a.Diagnosis.Source; src.external() {
		s.WriteString("\n*Raised by:* " + src.system())
		if src.Alert != "" {
			s.WriteString(" alert " + InlineCode(src.Alert, maxSourceAlert))
		}
		s.WriteString("; this diagnosis is the bot's own reading of the pod")
	}
	if a.ReadError != "" {
		s.WriteString("\n⚠️ Only the pod's status was read (" + EscapeTruncate(OneLine(a.ReadError), 500) + "), so the diagnosis did not see the log.")
	}
	d.Blocks = CapBlocks(append([]slack.Block{Section(BlockDetailsAlert, s.String())}, d.Blocks...))
	return d
}

// maxSourceAlert bounds an external alert's name as shown.
const maxSourceAlert = 100

// Source is who raised an alert: the health sweep (the zero value), or an
// external system such as Alertmanager and the alert's name there.
type Source struct {
	// System names the system ("Alertmanager"); "" means the health sweep.
	System string
	// Alert is the alert's name there (Alertmanager's alertname label).
	Alert string
}

func (s Source) external() bool { return s.System != "" }

// system is the system's name as mrkdwn.
func (s Source) system() string { return EscapeTruncate(OneLine(s.System), 60) }

// alertSuffix is " (`alertname`)", or "" without a name.
func (s Source) alertSuffix() string {
	if s.Alert == "" {
		return ""
	}
	return " (" + InlineCode(s.Alert, maxSourceAlert) + ")"
}

// foundBy says who raised the alert, in lower case: "found by the health
// sweep", or "raised by Alertmanager (`KubePodCrashLooping`)".
func (s Source) foundBy() string {
	if !s.external() {
		return "found by the health sweep"
	}
	return "raised by " + s.system() + s.alertSuffix()
}
