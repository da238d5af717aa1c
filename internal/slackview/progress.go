// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// StepState is where a repair step is, as the checklist shows it.
type StepState string

// Step states.
const (
	StepPending   StepState = "pending"
	StepRunning   StepState = "running"
	StepDone      StepState = "done"
	StepSkipped   StepState = "skipped"
	StepFailed    StepState = "failed"
	StepCleanedUp StepState = "cleaned-up"
)

// Icon is the state's checklist mark.
func (s StepState) Icon() string {
	switch s {
	case StepPending:
		return "⏸"
	case StepRunning:
		return "⏳"
	case StepDone:
		return "✅"
	case StepSkipped:
		return "⏭️"
	case StepFailed:
		return "❌"
	case StepCleanedUp:
		return "🧹"
	}
	return "•"
}

// Step is one line of a repair's checklist.
type Step struct {
	Name  string
	State StepState
	// Took is how long the step ran (Running: so far).
	Took time.Duration
	// Detail is what the step saw or did, for people (may be several lines).
	Detail string
}

// Progress is a repair's checklist: one thread reply, edited in place as
// the steps advance.
type Progress struct {
	// Head is the first line (mrkdwn, already safe): who approved what.
	Head  string
	Steps []Step
	// Done marks the checklist final (the outcome is posted beside it).
	Done bool
}

// Bounds of the checklist.
const (
	maxStepName   = 200
	maxStepDetail = 600
)

// Message renders the checklist.
func (p Progress) Message() Message {
	var b strings.Builder
	b.WriteString(Truncate(p.Head, 1000))
	for _, s := range p.Steps {
		line := fmt.Sprintf("\n%s %s", s.State.Icon(), EscapeTruncate(OneLine(s.Name), maxStepName))
		switch {
		case s.State == StepRunning:
			line += " _(running)_"
		case s.State == StepPending && p.Done:
			line += " _(not run)_"
		case s.Took > 0 && s.State != StepPending:
			line += " · " + HumanDuration(s.Took)
		}
		if d := stepDetail(s.Detail); d != "" {
			line += "\n" + d
		}
		if RuneLen(b.String())+RuneLen(line) > MaxSectionText-40 {
			b.WriteString("\n_… more steps not shown_")
			break
		}
		b.WriteString(line)
	}
	blocks := []slack.Block{Section(BlockProgress, b.String())}
	fallback := "Repair progress"
	if p.Done {
		fallback = "Repair steps"
	}
	return Message{Blocks: blocks, Fallback: fallback}
}

// stepDetail drops the executor's "took …" line (the checklist shows the
// duration itself) and quotes the rest, escaped.
func stepDetail(detail string) string {
	var lines []string
	for _, l := range strings.Split(detail, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "took ") && !strings.Contains(l[5:], " ") || l == "already done" {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ↳ " + EscapeTruncate(SanitizeLine(l), maxStepDetail) + "\n")
		if RuneLen(b.String()) > 2*maxStepDetail {
			b.WriteString("    ↳ _…_\n")
			break
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// OutcomeKind is how a repair ended.
type OutcomeKind string

// Outcomes, as recovery names them.
const (
	OutcomeRepaired   OutcomeKind = "repaired"
	OutcomeGateFailed OutcomeKind = "gate-failed"
	OutcomeFailed     OutcomeKind = "failed"
	OutcomeDryRun     OutcomeKind = "dry-run"
	OutcomeCrashAgain OutcomeKind = "crashed-again"
)

// Words says the outcome with its emoji.
func (o OutcomeKind) Words() (icon, words string) {
	switch o {
	case OutcomeRepaired:
		return "✅", "succeeded: the broker is back"
	case OutcomeDryRun:
		return "📝", "dry run finished: nothing was changed"
	case OutcomeGateFailed:
		return "🛑", "stopped by a safety check: nothing was changed"
	case OutcomeCrashAgain:
		return "❌", "ran, but the broker crashed again"
	case OutcomeFailed:
		return "❌", "failed"
	}
	return "❔", "ended (" + EscapeTruncate(string(o), 40) + ")"
}

// Alarming says whether the outcome needs people now: it is then posted to
// the channel as well as the thread.
func (o OutcomeKind) Alarming() bool {
	return o != OutcomeRepaired && o != OutcomeDryRun
}

// Outcome is a repair's final reply: how it ended and the summary (backup
// location, the new pod's state, recovery lines, or why it stopped).
type Outcome struct {
	Kind OutcomeKind
	// Summary is the repairer's plain text; the user IDs of People (the
	// approvers and the requester) in it are shown as mentions.
	Summary string
	People  []string
	// Took is the whole repair's duration (0: unknown).
	Took time.Duration
	// StepsShown says a checklist already lists every step with its
	// duration: the summary's "Steps: …" line is then left out.
	StepsShown bool
	// Notes are long step outputs kept whole, such as the restarted
	// broker's recovery log lines: shown as code blocks.
	Notes []Note
}

// Note is a step's long output.
type Note struct {
	Title string
	Text  string
}

// Message renders the outcome reply.
func (o Outcome) Message() Message {
	icon, words := o.Kind.Words()
	head := fmt.Sprintf("%s *Repair %s.*", icon, words)
	if o.Took > 0 {
		head += " _(" + HumanDuration(o.Took) + ")_"
	}
	text := head
	if sum := o.summary(); sum != "" {
		text += "\n" + MentionIDs(EscapeTruncate(sum, 2800), o.People...)
	}
	blocks := []slack.Block{Section(BlockOutcome, text)}
	for i, n := range o.Notes {
		if i == 5 {
			break
		}
		blocks = append(blocks, Section(fmt.Sprintf("%s.note.%d", BlockOutcome, i), noteText(n)))
	}
	return Message{
		Blocks:   blocks,
		Fallback: Truncate(icon+" *Repair "+words+".*", MaxFallbackText),
	}
}

func (o Outcome) summary() string {
	if !o.StepsShown {
		return o.Summary
	}
	var keep []string
	for _, l := range strings.Split(o.Summary, "\n") {
		if !strings.HasPrefix(l, "Steps: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// noteText renders a note as a titled code block, each line made safe,
// cut to fit one section with a note of what was left out.
func noteText(n Note) string {
	head := "*" + EscapeTruncate(OneLine(n.Title), 200) + "*\n```\n"
	budget := MaxSectionText - RuneLen(head) - 60
	var b strings.Builder
	lines := strings.Split(strings.TrimSpace(n.Text), "\n")
	for i, l := range lines {
		l = EscapeTruncate(SanitizeLine(l), maxEvidenceLineText)
		if b.Len() > 0 && RuneLen(b.String())+RuneLen(l)+1 > budget {
			return head + b.String() + "```\n" + fmt.Sprintf("_%d more line(s) not shown_", len(lines)-i)
		}
		b.WriteString(l + "\n")
	}
	return head + b.String() + "```"
}

// Status is the parent message's status line for the outcome.
func (o Outcome) Status() string {
	icon, words := o.Kind.Words()
	return fmt.Sprintf("%s Repair %s — see the thread", icon, words)
}
