package handlers

import (
	"strings"
	"unicode/utf8"
)

// ellipsis marks text cut to fit a limit.
const ellipsis = "…"

// escapeMrkdwn escapes Slack's three control characters so that text from
// users, pods and logs is shown as written and never becomes a mention,
// link or @channel.
func escapeMrkdwn(s string) string {
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

// truncateRunes cuts s to at most max characters, ending with an ellipsis
// when something was cut.
func truncateRunes(s string, max int) string {
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
	b.WriteString(ellipsis)
	return b.String()
}

// escapeTruncate escapes s for mrkdwn and cuts it so that the escaped text
// has at most max characters, never splitting an entity.
func escapeTruncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	esc := escapeMrkdwn(s)
	if utf8.RuneCountInString(esc) <= max {
		return esc
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		piece := escapeMrkdwn(string(r))
		w := utf8.RuneCountInString(piece)
		if n+w > max-1 {
			break
		}
		b.WriteString(piece)
		n += w
	}
	b.WriteString(ellipsis)
	return b.String()
}

// runeLen is the length Slack counts: characters, not bytes.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// sanitizeLine makes one line of untrusted text safe inside a code block:
// control characters become spaces and backticks cannot close the block.
func sanitizeLine(s string) string {
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

// inlineCode renders untrusted text as inline code, escaped and cut to max characters.
func inlineCode(s string, max int) string {
	return "`" + escapeTruncate(sanitizeLine(s), max-2) + "`"
}

// plainSafe makes untrusted text harmless in plain_text objects (headers,
// confirm dialogs), where entities are not decoded: angle brackets become
// look-alike guillemets so nothing can read as a mention or link.
func plainSafe(s string) string {
	return strings.NewReplacer("<", "‹", ">", "›").Replace(sanitizeLine(s))
}
