// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Layout estimates how a message's blocks wrap in Slack's desktop client,
// in text lines, so that tests can hold a message to a reading budget
// ("at most 8 lines above the buttons"). It is a model, not a browser:
// each block type wraps at the characters per line its font fits in the
// message column at the window width, mentions and dates count as what
// they display, and mrkdwn markers count as nothing.
type Layout struct {
	// Lines is each block's estimated line count, in order.
	Lines []int
	// AboveActions is the lines before the first actions block (all of
	// them when there is none); Total is every block's.
	AboveActions, Total int
}

// Column widths in characters per line at a 1280 px window: Slack's
// sidebar and the avatar gutter leave about 900 px of message column.
// Body text is 15 px Lato (~7.5 px a character), headers 18 px bold,
// context 13 px, code 12 px monospace; section fields are two columns.
type widths struct{ header, body, field, context, code, buttons int }

func widthsAt(windowPx int) widths {
	col := max(windowPx-380, 200)
	return widths{
		header:  col * 10 / 95,
		body:    col * 10 / 75,
		field:   (col/2 - 16) * 10 / 75,
		context: col * 10 / 65,
		code:    (col - 24) * 10 / 72,
		buttons: col * 10 / 90,
	}
}

var (
	layoutMention = regexp.MustCompile(`<@[A-Z0-9]+>`)
	layoutDate    = regexp.MustCompile(`<!date\^\d+\^[^|>]*\|([^>]*)>`)
	layoutLink    = regexp.MustCompile(`<[^<>|]+\|([^<>]+)>`)
	layoutMarks   = strings.NewReplacer("*", "", "_", "", "~", "", "`", "", "&lt;", "<", "&gt;", ">", "&amp;", "&")
)

// displayText is mrkdwn as the reader sees it: mentions as "@a.person",
// dates as their fallback, links as their label, no emphasis markers.
func displayText(s string) string {
	s = layoutMention.ReplaceAllString(s, "@someone.on")
	s = layoutDate.ReplaceAllString(s, "$1")
	s = layoutLink.ReplaceAllString(s, "$1")
	return s
}

// wrap counts the lines text takes at perLine characters, code blocks at
// code characters; every explicit line takes at least one.
func wrap(text string, perLine, code int) int {
	n := 0
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		fences := strings.Count(line, "```")
		w := perLine
		if inCode || fences > 0 {
			w = code
		}
		if fences%2 == 1 {
			inCode = !inCode
		}
		line = strings.ReplaceAll(line, "```", "")
		if strings.TrimSpace(line) == "" && fences > 0 {
			continue // a fence on its own line draws the box, not a line
		}
		chars := utf8.RuneCountInString(layoutMarks.Replace(displayText(line)))
		n += max(1, (chars+w-1)/w)
	}
	return n
}

// LayoutOf estimates the layout of a Block Kit JSON array at a window
// width in pixels (1280 for a laptop).
func LayoutOf(blocks json.RawMessage, windowPx int) (Layout, error) {
	var list []struct {
		Type string `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text"`
		Fields []struct {
			Text string `json:"text"`
		} `json:"fields"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(blocks, &list); err != nil {
		return Layout{}, fmt.Errorf("reading blocks: %w", err)
	}
	w := widthsAt(windowPx)
	var l Layout
	seenActions := false
	for _, b := range list {
		n := 0
		switch b.Type {
		case "header":
			if b.Text != nil {
				n = wrap(b.Text.Text, w.header, w.header)
			}
		case "section":
			if b.Text != nil {
				n = wrap(b.Text.Text, w.body, w.code)
			}
			for i := 0; i < len(b.Fields); i += 2 {
				row := wrap(b.Fields[i].Text, w.field, w.field)
				if i+1 < len(b.Fields) {
					row = max(row, wrap(b.Fields[i+1].Text, w.field, w.field))
				}
				n += row
			}
		case "context":
			var parts []string
			for _, e := range b.Elements {
				var t struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(e, &t)
				parts = append(parts, t.Text)
			}
			n = wrap(strings.Join(parts, "  "), w.context, w.context)
		case "actions":
			chars := 0
			for _, e := range b.Elements {
				var el struct {
					Text struct {
						Text string `json:"text"`
					} `json:"text"`
				}
				_ = json.Unmarshal(e, &el)
				chars += utf8.RuneCountInString(el.Text.Text) + 6 // padding and gap
			}
			n = max(1, (chars+w.buttons-1)/w.buttons)
			seenActions = true
		case "divider":
			n = 1
		default:
			n = 1
		}
		l.Lines = append(l.Lines, n)
		l.Total += n
		if !seenActions {
			l.AboveActions += n
		}
	}
	return l, nil
}

// ThreadStats counts what happened in a thread: replies posted, replies
// broadcast to the channel too, and edits of the replies and of the parent.
type ThreadStats struct {
	Posts, Broadcasts, ReplyEdits, ParentEdits int
}

// ThreadStats returns the counts of the thread under (channel, ts).
func (s *Server) ThreadStats(channel, ts string) ThreadStats {
	var st ThreadStats
	for _, m := range s.Thread(channel, ts) {
		st.Posts++
		st.ReplyEdits += m.Updated
		if m.Broadcast {
			st.Broadcasts++
		}
	}
	if m, ok := s.Message(channel, ts); ok {
		st.ParentEdits = m.Updated
	}
	return st
}
