// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Ellipsis marks text cut to fit a limit.
const Ellipsis = "…"

// EscapeMrkdwn escapes Slack's three control characters so that text from
// users, pods and logs is shown as written and never becomes a mention,
// link or @channel.
func EscapeMrkdwn(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Truncate cuts s to at most max characters, ending with an ellipsis when
// something was cut.
func Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max-1 {
			break
		}
		b.WriteRune(r)
		n++
	}
	b.WriteString(Ellipsis)
	return b.String()
}

// EscapeTruncate escapes s for mrkdwn and cuts it so that the escaped text
// has at most max characters, never splitting an entity.
func EscapeTruncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	esc := EscapeMrkdwn(s)
	if utf8.RuneCountInString(esc) <= max {
		return esc
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		piece := EscapeMrkdwn(string(r))
		w := utf8.RuneCountInString(piece)
		if n+w > max-1 {
			break
		}
		b.WriteString(piece)
		n += w
	}
	b.WriteString(Ellipsis)
	return b.String()
}

// RuneLen is the length Slack counts: characters, not bytes.
func RuneLen(s string) int { return utf8.RuneCountInString(s) }

// SanitizeLine makes one line of untrusted text safe inside a code block:
// control characters become spaces and backticks cannot close the block.
func SanitizeLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '`':
			return 'ˋ'
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
}

// InlineCode renders untrusted text as inline code, escaped and cut to max characters.
func InlineCode(s string, max int) string {
	return "`" + EscapeTruncate(SanitizeLine(s), max-2) + "`"
}

// InlineCodeOrEmpty is InlineCode, or "" for empty text.
func InlineCodeOrEmpty(s string, max int) string {
	if s == "" {
		return ""
	}
	return InlineCode(s, max)
}

// PlainSafe makes untrusted text harmless in plain_text objects (headers,
// confirm dialogs), where entities are not decoded: angle brackets become
// look-alike guillemets so nothing can read as a mention or link.
func PlainSafe(s string) string {
	return strings.NewReplacer("<", "‹", ">", "›").Replace(SanitizeLine(s))
}

// OneLine folds untrusted text onto one line with single spaces.
func OneLine(s string) string {
	return strings.Join(strings.Fields(SanitizeLine(s)), " ")
}

// SweepRequester is the requester recorded for what the health sweep found.
const SweepRequester = "sweep"

// Mention renders a Slack user ID as a mention (<@U…>), so every client
// shows the person's current display name; anything that is not a user ID
// is escaped text ("the health sweep" for SweepRequester, "someone" for "").
func Mention(user string) string {
	switch {
	case IsUserID(user):
		return "<@" + user + ">"
	case user == SweepRequester:
		return "the health sweep"
	case user == "":
		return "someone"
	}
	return EscapeTruncate(user, 40)
}

// IsUserID reports whether s looks like a Slack user ID (U… or W…).
func IsUserID(s string) bool {
	if len(s) < 3 || len(s) > 32 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// MentionIDs rewrites every whole-word occurrence of the given user IDs in
// already-escaped mrkdwn text as a mention. It is for text written by other
// packages (a repair summary says "approved by U0BOB"), so that people are
// never shown as raw IDs. Only IDs passed in are touched.
func MentionIDs(text string, ids ...string) string {
	for _, id := range ids {
		if !IsUserID(id) {
			continue
		}
		var b strings.Builder
		rest := text
		for {
			i := strings.Index(rest, id)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(id)
			before := i > 0 && isIDChar(rest[i-1]) || i > 0 && rest[i-1] == '@'
			after := end < len(rest) && isIDChar(rest[end])
			b.WriteString(rest[:i])
			if before || after {
				b.WriteString(id)
			} else {
				b.WriteString("<@" + id + ">")
			}
			rest = rest[end:]
		}
		text = b.String()
	}
	return text
}

func isIDChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z'
}

// Date formats in mrkdwn: see https://api.slack.com/reference/surfaces/formatting#date-formatting.
const (
	// DateTime shows "Apr 28th, 2025 at 8:22 AM" (or "today at …") in the reader's time zone.
	DateTime = "{date_short_pretty} at {time}"
	// TimeOnly shows "8:22 AM" in the reader's time zone.
	TimeOnly = "{time}"
)

// Date renders t as a Slack date token: each reader sees it in their own
// time zone; clients that cannot render it show the UTC fallback.
func Date(t time.Time, format string) string {
	if t.IsZero() {
		return "an unknown time"
	}
	fallback := t.UTC().Format("2006-01-02 15:04 MST")
	if format == TimeOnly {
		fallback = t.UTC().Format("15:04 MST")
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
}

// PlainTime is t for plain_text objects (headers, confirm dialogs), where
// date tokens are not rendered: UTC, said so.
func PlainTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 MST") }

// HumanBytes writes n bytes as bytes, KiB or MiB.
func HumanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// HumanDuration writes a duration the way people read it: 850ms, 12s, 3m20s, 1h, 24h, 7d.
func HumanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
