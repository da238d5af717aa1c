package slackview

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Alert is the health sweep's alert about one pod: its diagnosis and how
// the sweep noticed it.
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
			blk = Context(BlockContext, fmt.Sprintf("Found by the health sweep · %s · read-only: nothing was changed · details in the thread",
				Date(d.Now, DateTime)))
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

// banner says this is an alert, how the pod was noticed and since when,
// on one line; the sweep's wording and the rule are in Details.
func (a Alert) banner() string {
	var s strings.Builder
	switch {
	case a.Changed:
		s.WriteString("🔀 *Alert: the finding changed*")
	case a.Repeat:
		s.WriteString("🔁 *Alert, still firing*")
	default:
		s.WriteString("🚨 *Alert from the health sweep*")
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
	if a.ReadError != "" {
		s.WriteString("\n⚠️ Only the pod's status was read (" + EscapeTruncate(OneLine(a.ReadError), 500) + "), so the diagnosis did not see the log.")
	}
	d.Blocks = CapBlocks(append([]slack.Block{Section(BlockDetailsAlert, s.String())}, d.Blocks...))
	return d
}
