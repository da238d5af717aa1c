// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"strings"
	"time"
)

// The answers to /kafka commands that are not views of their own: the
// help, the acks, the refusals when the bot is busy, and what a
// diagnosis' requester is told when it cannot be posted or was shared.

// Usage is the help shown for /kafka help and for malformed commands;
// slashCommand is the command as typed (/kafka when it is not a valid name).
func Usage(slashCommand string) string {
	if slashCommand == "" || !validSlashName(slashCommand) {
		slashCommand = "/kafka"
	}
	c := slashCommand
	return "*Usage*\n" +
		"• `" + c + " diagnose [CLUSTER/][NAMESPACE/]POD` — diagnose a Kafka pod (also `-n NAMESPACE POD`; short names like `broker-0` work; `X/POD` means cluster X when I serve one of that name, else namespace X)\n" +
		"• `" + c + " status` — the Kafka pods I can see, by cluster, with their state\n" +
		"• `" + c + " silences` — the alert silences in force, each with an End silence button\n" +
		"• `" + c + " sweep` — run the health sweep now (alerts go to the alert channel)\n" +
		"• `" + c + " help` — this message\n" +
		"A repairable problem gets *Approve repair* / *Reject* buttons; only approvers can approve or silence alerts."
}

func validSlashName(s string) bool {
	if len(s) < 2 || len(s) > 32 || s[0] != '/' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// UsageProblem answers a command that was not understood: the problem (a
// parser's message, safe to show), then the help.
func UsageProblem(problem, slashCommand string) string {
	return "⚠️ " + problem + "\n\n" + Usage(slashCommand)
}

// Busy refuses a click or an alert command when every worker is busy.
const Busy = "⏳ I am busy with other requests right now. Please try again in a minute."

// QueueFull refuses a command when waiting requests fill the queue: it
// says why and when to try again (at least 5 s, in whole seconds).
func QueueFull(waiting int, retry time.Duration) string {
	secs := max(int((retry+time.Second-1)/time.Second), 5)
	return fmt.Sprintf("⏳ %d requests are already waiting, as many as I queue (QUEUE_SIZE). Please try again in about %d seconds.", waiting, secs)
}

// ReadingStatus acks /kafka status.
const ReadingStatus = "🔎 Reading the Kafka pods' status…"

// Diagnosing acks /kafka diagnose of target (the command's validated
// [CLUSTER/][NAMESPACE/]POD).
func Diagnosing(target string) string {
	return "🔎 Diagnosing `" + target + "`… the result will be posted in this channel."
}

// CannotListPods tells the asker of /kafka status that the pod list failed.
func CannotListPods(err string) string {
	return "⚠️ I could not list the Kafka pods: " + EscapeTruncate(err, 500)
}

// NotInChannel tells the asker that the bot cannot post in the channel
// (Slack's error code), before the short version of the answer.
func NotInChannel(code string) string {
	return fmt.Sprintf("⚠️ I cannot post in this channel (`%s`). Invite me with `/invite @kafkabot` and try again. The short version:", code)
}

// OnlyMatch tells the asker that pod (cluster/namespace/pod) is diagnosed
// as the only match found while the clusters unchecked could not be asked.
func OnlyMatch(pod string, unchecked []string) string {
	return fmt.Sprintf("ℹ️ Diagnosing %s, the only match I found. I could not check %s.",
		InlineCode(pod, 300), strings.Join(unchecked, ", "))
}

// CannotRead tells the asker that pod's diagnosis failed with err.
func CannotRead(pod, err string) string {
	return fmt.Sprintf("⚠️ I could not read %s: %s", InlineCode(pod, 200), EscapeTruncate(err, 1500))
}

// GaveUpWaiting tells an asker who joined a diagnosis that its message
// was not posted in time.
const GaveUpWaiting = "⚠️ I gave up waiting for the diagnosis to be posted; please ask again."

// CannotPostDiagnosis tells the asker that posting the diagnosis failed
// with err, followed by its short version (fallback).
func CannotPostDiagnosis(err, fallback string) string {
	return fmt.Sprintf("⚠️ I could not post the diagnosis in this channel (%s). The short version:\n%s",
		EscapeTruncate(err, 300), fallback)
}

// SharedDiagnosis links an asker to pod's diagnosis of age ago, asked for
// by requester, for the same pod UID and restart count.
func SharedDiagnosis(pod string, age time.Duration, requester string, restarts int32, link string) string {
	return fmt.Sprintf("📎 %s was diagnosed %s ago for %s (same pod UID, restart count %d), without reading the cluster again: <%s|see the diagnosis>.",
		InlineCode(pod, 300), age, Mention(requester), restarts, link)
}
