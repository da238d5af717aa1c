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

// The words of a repair's thread around the checklist and the outcome.

// RepairFallback is the fallback text of a diagnosis message rewritten as
// pod's repair progresses.
func RepairFallback(pod string) string { return "Kafka repair of " + pod }

// RepairHead is the checklist's head line when the repair began without
// one (pod names the pod).
func RepairHead(pod string) string { return "*Repair of " + InlineCode(pod, 200) + "*" }

// ResumedHead is the checklist's head line of a repair a restarted bot
// resumes; cluster names its cluster on a bot serving several ("": one).
func ResumedHead(cluster string) string {
	head := "🔁 *Repair resumed* after the bot restarted"
	if cluster != "" {
		head += " in cluster " + InlineCode(cluster, 80)
	}
	return head
}

// StepRunStatus is the message's status line while step n of total (its
// name and the executor's status word) is in state.
func StepRunStatus(state StepState, n, total int, step, status string) string {
	return fmt.Sprintf("%s repair in progress, step %d of %d: %s (%s)", state.Icon(), n, total,
		EscapeTruncate(OneLine(step), 300), EscapeMrkdwn(status))
}

// A step's detail too long for a checklist line (LongDetail) is shown
// whole elsewhere; the line says where.
const (
	// DetailInReply: a skipped step's text (a dry run's pod spec or
	// script) is a reply of its own (StepReply).
	DetailInReply = "the full text is in the reply below"
	// DetailInOutcome: any other step's text is a Note of the outcome.
	DetailInOutcome = "shown in full in the outcome below"
)

// LongDetail reports whether a step's detail is too long for a checklist
// line.
func LongDetail(detail string) bool {
	return RuneLen(detail) > 600 || strings.Count(detail, "\n") > 6
}

// StepReply is a step's long detail as a thread reply of its own.
func StepReply(step, detail string) string {
	return fmt.Sprintf("*%s*\n%s", EscapeTruncate(OneLine(step), 200), EscapeTruncate(detail, MaxSectionText))
}

// DropTook removes the executor's leading "took …" line from a step's
// detail.
func DropTook(detail string) string {
	first, rest, ok := strings.Cut(detail, "\n")
	if ok && strings.HasPrefix(first, "took ") {
		return rest
	}
	return detail
}
