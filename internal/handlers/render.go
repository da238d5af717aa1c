// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// The handlers post what internal/slackview renders; these short names
// keep the Socket Mode, poster and click code readable.

// Slack's Block Kit limits.
const (
	maxBlocks          = slackview.MaxBlocks
	maxSectionText     = slackview.MaxSectionText
	maxFieldText       = slackview.MaxFieldText
	maxFields          = slackview.MaxFields
	maxHeaderText      = slackview.MaxHeaderText
	maxContextElements = slackview.MaxContextElements
	maxConfirmText     = slackview.MaxConfirmText
	maxFallbackText    = slackview.MaxFallbackText
)

// Block and action IDs of the bot's messages.
const (
	blockHeader   = slackview.BlockHeader
	blockSummary  = slackview.BlockSummary
	blockContext  = slackview.BlockContext
	blockStatus   = slackview.BlockStatus
	blockDecision = slackview.BlockDecision
	blockActions  = slackview.BlockActions

	actionApprove = slackview.ActionApprove
	actionReject  = slackview.ActionReject
)

var (
	escapeMrkdwn   = slackview.EscapeMrkdwn
	truncateRunes  = slackview.Truncate
	escapeTruncate = slackview.EscapeTruncate
	runeLen        = slackview.RuneLen
	inlineCode     = slackview.InlineCode
	plainSafe      = slackview.PlainSafe
	oneLine        = slackview.OneLine
	mention        = slackview.Mention
	section        = slackview.Section
	mrkdwn         = slackview.Mrkdwn
	plain          = slackview.Plain
	capBlocks      = slackview.CapBlocks
	statusBlock    = slackview.StatusLine
	hasButtons     = slackview.HasButtons
	repairable     = slackview.Repairable
)
