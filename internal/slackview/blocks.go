// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"
)

// Slack's Block Kit limits.
const (
	MaxBlocks          = 50
	MaxSectionText     = 3000
	MaxFieldText       = 2000
	MaxFields          = 10
	MaxHeaderText      = 150
	MaxContextElements = 10
	MaxConfirmText     = 300
	MaxFallbackText    = 3000 // top-level text: Slack advises 4000
)

// Block IDs of the bot's messages. Handlers find blocks by these IDs when
// they rewrite a message (the status line, the buttons).
const (
	BlockHeader   = "kafkabot.header"
	BlockSummary  = "kafkabot.summary"
	BlockCause    = "kafkabot.cause"
	BlockAsk      = "kafkabot.ask"
	BlockEvidence = "kafkabot.evidence"
	BlockFacts    = "kafkabot.facts"
	BlockRemedy   = "kafkabot.remedy"
	BlockAlso     = "kafkabot.also"
	BlockContext  = "kafkabot.context"
	BlockStatus   = "kafkabot.status"
	BlockDecision = "kafkabot.decision"
	BlockActions  = "kafkabot.actions"
	BlockAlert    = "kafkabot.alert"
	BlockMembers  = "kafkabot.members"
	BlockSilence  = "kafkabot.silence"
	BlockProgress = "kafkabot.progress"
	BlockOutcome  = "kafkabot.outcome"

	// The details reply's own facts and context (its other blocks use
	// the IDs above, which the top-level message does not).
	BlockDetailsFacts   = "kafkabot.details.facts"
	BlockDetailsContext = "kafkabot.details.context"
	BlockDetailsAlert   = "kafkabot.details.alert"

	ActionApprove = "kafkabot.approve"
	ActionReject  = "kafkabot.reject"

	// ActionSilence prefixes the action_id of a Silence button (then the
	// choice: "1h", "24h", "7d"; its value is the signed grant).
	ActionSilence = "kafkabot.silence."
	// ActionSilenceMenu prefixes the action_id of an alert's Silence menu
	// (an overflow menu). The rest of the action_id is a signed silence
	// grant for the longest choice: an overflow option's value holds at
	// most 150 characters, too few for a token, so the options' values only
	// name the duration, which must be one of grant.SilenceChoices and
	// within the grant.
	ActionSilenceMenu = "kafkabot.silencemenu."
)

// Message is a rendered message: its blocks and the plain-text fallback
// Slack shows in notifications.
type Message struct {
	Blocks   []slack.Block
	Fallback string
}

// CapBlocks keeps a message within Slack's block count, keeping the
// actions block (the buttons) if it is the last one.
func CapBlocks(blocks []slack.Block) []slack.Block {
	if len(blocks) <= MaxBlocks {
		return blocks
	}
	last := blocks[len(blocks)-1]
	out := slices.Clone(blocks[:MaxBlocks-2])
	out = append(out, slack.NewContextBlock("kafkabot.more", Mrkdwn(fmt.Sprintf("_%d more block(s) not shown_", len(blocks)-MaxBlocks+1))))
	if last.BlockType() == slack.MBTAction {
		return append(out, last)
	}
	return append(out, blocks[MaxBlocks-2])
}

// Section is a mrkdwn section, cut to Slack's limit.
func Section(blockID, text string) *slack.SectionBlock {
	return slack.NewSectionBlock(Mrkdwn(Truncate(text, MaxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockID))
}

// Header is a header block of plain text, cut to Slack's limit.
func Header(text string) *slack.HeaderBlock {
	return slack.NewHeaderBlock(Plain(Truncate(text, MaxHeaderText)), slack.HeaderBlockOptionBlockID(BlockHeader))
}

// Context is a one-element mrkdwn context block.
func Context(blockID, text string) *slack.ContextBlock {
	return slack.NewContextBlock(blockID, Mrkdwn(Truncate(text, MaxSectionText)))
}

// Mrkdwn is a mrkdwn text object ("-" for blank text, which Slack rejects).
func Mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, nonEmpty(text), false, false)
}

// Plain is a plain_text object ("-" for blank text).
func Plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, nonEmpty(text), false, false)
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// StatusLine is the message's status context block.
func StatusLine(text string) *slack.ContextBlock {
	return Context(BlockStatus, "*Status:* "+text)
}

// HasButtons reports whether blocks still offer the Approve / Reject decision.
func HasButtons(blocks []slack.Block) bool {
	for _, b := range blocks {
		if b.BlockType() == slack.MBTAction && b.ID() == BlockActions {
			return true
		}
	}
	return false
}

// Decided rewrites a message whose buttons were clicked: the buttons and
// any earlier decision and status lines go; the decision (who decided,
// when) and a status line follow what is left.
func Decided(blocks []slack.Block, decision, status string) []slack.Block {
	var out []slack.Block
	for _, b := range blocks {
		if b.BlockType() == slack.MBTAction || b.ID() == BlockDecision || b.ID() == BlockStatus {
			continue
		}
		out = append(out, b)
	}
	out = append(out, slack.NewContextBlock(BlockDecision, Mrkdwn(Truncate(decision, MaxSectionText))), StatusLine(status))
	return CapBlocks(out)
}

// WithStatus replaces a message's status line (in place), or adds one.
func WithStatus(blocks []slack.Block, status string) []slack.Block {
	replaced := false
	for i, b := range blocks {
		if b.ID() == BlockStatus {
			blocks[i] = StatusLine(status)
			replaced = true
		}
	}
	if !replaced {
		blocks = CapBlocks(append(blocks, StatusLine(status)))
	}
	return blocks
}
