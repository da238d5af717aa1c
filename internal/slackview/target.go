// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"strings"
)

// The answers to /kafka diagnose when the pod it names is not one pod of
// one cluster: a problem, several matches, or none.

// Problem is a problem with a command as the asker sees it (text is safe
// to show).
func Problem(text string) string { return "⚠️ " + text }

// Unchecked notes, on a line of its own, the clusters that could not be
// checked (each "`name` (why)"), or is "" for none.
func Unchecked(clusters []string) string {
	if len(clusters) == 0 {
		return ""
	}
	return "\nI could not check " + strings.Join(clusters, ", ") + "."
}

// ManyMatches answers a pod name what that matches in more than one
// place: lines lists them, example is the first full name (or a
// placeholder), unchecked is Unchecked's note.
func ManyMatches(what, example string, lines []string, unchecked string) string {
	return fmt.Sprintf(
		"❓ %s matches Kafka pods in more than one place. Which one? Ask again with the full name, like `/kafka diagnose %s`:\n%s%s",
		InlineCode(what, 300), example, strings.Join(lines, "\n"), unchecked)
}

// NoMatch answers a pod name what found in no cluster of checked (names
// in backquotes); unchecked is Unchecked's note.
func NoMatch(what string, checked []string, unchecked string) string {
	text := fmt.Sprintf("⚠️ I found no Kafka pod %s in any cluster I could check", InlineCode(what, 300))
	if len(checked) > 0 {
		text += " (" + strings.Join(checked, ", ") + ")"
	}
	return text + "." + unchecked
}
