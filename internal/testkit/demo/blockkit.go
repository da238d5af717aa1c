// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
)

// Block Kit, read back from the emulator's message store, rendered for a
// terminal (RenderText) or a browser (RenderHTML). Only what the bot posts
// is rendered: header, section (text and fields), context, divider and
// actions with buttons; any other block is named, not dropped silently.

// kitBlock is one Block Kit block as JSON holds it.
type kitBlock struct {
	Type      string       `json:"type"`
	BlockID   string       `json:"block_id"`
	Text      *kitText     `json:"text"`
	Fields    []kitText    `json:"fields"`
	Elements  []kitElement `json:"elements"`
	Accessory *kitElement  `json:"accessory"`
}

// kitText is a text object: plain_text or mrkdwn.
type kitText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// kitElement is a context element (a text object) or an interactive one
// (a button, whose text is itself a text object).
type kitElement struct {
	Type     string          `json:"type"`
	RawText  json.RawMessage `json:"text"`
	ActionID string          `json:"action_id"`
	Value    string          `json:"value"`
	Style    string          `json:"style"`
	// Options are an overflow menu's choices.
	Options []struct {
		Text  kitText `json:"text"`
		Value string  `json:"value"`
	} `json:"options"`
	Confirm *struct {
		Title   kitText `json:"title"`
		Text    kitText `json:"text"`
		Confirm kitText `json:"confirm"`
		Deny    kitText `json:"deny"`
	} `json:"confirm"`
}

// text is the element's text: a context element's own, or a button's label.
func (e kitElement) text() string {
	var s string
	if json.Unmarshal(e.RawText, &s) == nil {
		return s
	}
	var t kitText
	if json.Unmarshal(e.RawText, &t) == nil {
		return t.Text
	}
	return ""
}

func parseBlocks(raw json.RawMessage) ([]kitBlock, error) {
	var blocks []kitBlock
	if len(raw) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("reading the message's blocks: %w", err)
	}
	return blocks, nil
}

// selectBlocks returns the blocks of raw whose block_id is one of ids, in
// their order, as a Block Kit JSON array.
func selectBlocks(raw json.RawMessage, ids ...string) (json.RawMessage, error) {
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("reading the message's blocks: %w", err)
	}
	kept := []json.RawMessage{}
	for _, b := range blocks {
		var id struct {
			BlockID string `json:"block_id"`
		}
		if err := json.Unmarshal(b, &id); err != nil {
			return nil, fmt.Errorf("reading the message's blocks: %w", err)
		}
		if slices.Contains(ids, id.BlockID) {
			kept = append(kept, b)
		}
	}
	out, err := json.Marshal(kept)
	if err != nil {
		return nil, fmt.Errorf("selecting blocks: %w", err)
	}
	return out, nil
}

// Button is an interactive button of a message.
type Button struct {
	ActionID, Label, Value, Style string
	// Options are an overflow menu's choices (its Label is "⋯").
	Options []string
	// ConfirmTitle and ConfirmText are the confirm dialog's, if any.
	ConfirmTitle, ConfirmText string
}

// Buttons returns the buttons of a message's actions blocks.
func Buttons(raw json.RawMessage) ([]Button, error) {
	blocks, err := parseBlocks(raw)
	if err != nil {
		return nil, err
	}
	var out []Button
	for _, b := range blocks {
		for _, e := range b.Elements {
			if b.Type == "actions" && e.Type == "overflow" {
				btn := Button{ActionID: e.ActionID, Label: "⋯"}
				for _, o := range e.Options {
					btn.Options = append(btn.Options, o.Text.Text)
				}
				out = append(out, btn)
				continue
			}
			if b.Type != "actions" || e.Type != "button" {
				continue
			}
			btn := Button{ActionID: e.ActionID, Label: e.text(), Value: e.Value, Style: e.Style}
			if e.Confirm != nil {
				btn.ConfirmTitle, btn.ConfirmText = e.Confirm.Title.Text, e.Confirm.Text.Text
			}
			out = append(out, btn)
		}
	}
	return out, nil
}

// Users maps Slack user IDs to the names mentions show.
type Users map[string]string

func (u Users) name(id string) string {
	if n, ok := u[id]; ok {
		return n
	}
	return id
}

// RenderText renders a message's blocks as plain terminal text, one
// block after another; fallback is used when there are no blocks.
func RenderText(raw json.RawMessage, fallback string, users Users) (string, error) {
	blocks, err := parseBlocks(raw)
	if err != nil {
		return "", err
	}
	if len(blocks) == 0 {
		return MrkdwnToText(fallback, users), nil
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "header":
			title := textOf(b.Text, users)
			parts = append(parts, title+"\n"+strings.Repeat("═", min(displayWidth(title), 74)))
		case "section":
			var s []string
			if b.Text != nil {
				s = append(s, textOf(b.Text, users))
			}
			for _, f := range b.Fields {
				s = append(s, "  "+strings.ReplaceAll(textOf(&f, users), "\n", ": "))
			}
			parts = append(parts, strings.Join(s, "\n"))
		case "context":
			var s []string
			for _, e := range b.Elements {
				s = append(s, MrkdwnToText(e.text(), users))
			}
			parts = append(parts, strings.Join(s, " · "))
		case "divider":
			parts = append(parts, strings.Repeat("─", 60))
		case "actions":
			var s []string
			for _, e := range b.Elements {
				if e.Type == "overflow" {
					s = append(s, "[ ⋯ ]")
					continue
				}
				s = append(s, "[ "+MrkdwnToText(e.text(), users)+" ]")
			}
			parts = append(parts, strings.Join(s, "  "))
		default:
			parts = append(parts, "("+b.Type+" block)")
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

func textOf(t *kitText, users Users) string {
	if t == nil {
		return ""
	}
	if t.Type == "plain_text" {
		return t.Text
	}
	return MrkdwnToText(t.Text, users)
}

// displayWidth approximates the columns s takes: one per rune.
func displayWidth(s string) int { return len([]rune(s)) }

var (
	// dateRe is a Slack date token; it shows its fallback here (the UTC
	// time), where Slack shows the reader's own time zone.
	dateRe        = regexp.MustCompile(`<!date\^\d+\^[^|>]*\|([^>]*)>`)
	escapedDateRe = regexp.MustCompile(`&lt;!date\^\d+\^[^|&]*\|(.*?)&gt;`)
	mentionRe     = regexp.MustCompile(`<@([A-Z0-9]+)>`)
	linkRe        = regexp.MustCompile(`<([^<>|]+)\|([^<>]+)>`)
	boldRe        = regexp.MustCompile(`\*([^*\n]+)\*`)
	italicRe      = regexp.MustCompile(`(^|[\s(])_([^_\n]+)_($|[\s).,:;])`)
	// The same, once the text is HTML-escaped.
	escapedMentionRe = regexp.MustCompile(`&lt;@([A-Z0-9]+)&gt;`)
	escapedLinkRe    = regexp.MustCompile(`&lt;([^&|]+)\|(.+?)&gt;`)
)

// mrkdwnSpan is a piece of mrkdwn: plain text, `inline code` or a
// ```code block```.
type mrkdwnSpan struct {
	kind string // "text", "code", "pre"
	text string
}

// splitCode cuts mrkdwn into text and code spans; code is never formatted.
func splitCode(s string) []mrkdwnSpan {
	var out []mrkdwnSpan
	for s != "" {
		pre := strings.Index(s, "```")
		code := strings.Index(s, "`")
		switch {
		case pre >= 0 && pre == code:
			end := strings.Index(s[pre+3:], "```")
			if end < 0 {
				out = append(out, mrkdwnSpan{"text", s})
				return out
			}
			out = append(out, mrkdwnSpan{"text", s[:pre]}, mrkdwnSpan{"pre", strings.Trim(s[pre+3:pre+3+end], "\n")})
			s = s[pre+3+end+3:]
		case code >= 0:
			end := strings.Index(s[code+1:], "`")
			if end < 0 {
				out = append(out, mrkdwnSpan{"text", s})
				return out
			}
			out = append(out, mrkdwnSpan{"text", s[:code]}, mrkdwnSpan{"code", s[code+1 : code+1+end]})
			s = s[code+1+end+1:]
		default:
			out = append(out, mrkdwnSpan{"text", s})
			return out
		}
	}
	return out
}

// unescapeSlack undoes the three escapes Slack's mrkdwn requires.
func unescapeSlack(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// MrkdwnToText renders Slack mrkdwn as plain text: emphasis markers
// dropped, mentions as @name, links as "text (url)", code blocks indented.
func MrkdwnToText(s string, users Users) string {
	var b strings.Builder
	afterPre := false
	for _, sp := range splitCode(s) {
		switch sp.kind {
		case "pre":
			b.WriteString("\n")
			for line := range strings.Lines(unescapeSlack(sp.text)) {
				b.WriteString("    " + strings.TrimRight(line, "\n") + "\n")
			}
		case "code":
			b.WriteString(unescapeSlack(sp.text))
		default:
			if afterPre {
				// The block already ended its last line.
				sp.text = strings.TrimPrefix(sp.text, "\n")
			}
			t := dateRe.ReplaceAllString(sp.text, "$1")
			t = mentionRe.ReplaceAllStringFunc(t, func(m string) string {
				return "@" + users.name(mentionRe.FindStringSubmatch(m)[1])
			})
			t = linkRe.ReplaceAllString(t, "$2 ($1)")
			t = boldRe.ReplaceAllString(t, "$1")
			t = italicRe.ReplaceAllString(t, "$1$2$3")
			b.WriteString(unescapeSlack(t))
		}
		afterPre = sp.kind == "pre"
	}
	return strings.Trim(strings.ReplaceAll(b.String(), "\n\n\n", "\n\n"), "\n")
}

// mrkdwnToHTML renders Slack mrkdwn as HTML, escaping all text.
func mrkdwnToHTML(s string, users Users) string {
	var b strings.Builder
	for _, sp := range splitCode(s) {
		switch sp.kind {
		case "pre":
			b.WriteString("<pre>" + html.EscapeString(unescapeSlack(sp.text)) + "</pre>")
		case "code":
			b.WriteString("<code>" + html.EscapeString(unescapeSlack(sp.text)) + "</code>")
		default:
			t := html.EscapeString(unescapeSlack(sp.text))
			t = escapedDateRe.ReplaceAllString(t, "$1")
			// Mentions and links were escaped with the rest: match the escaped form.
			t = escapedMentionRe.ReplaceAllStringFunc(t, func(m string) string {
				id := strings.TrimSuffix(strings.TrimPrefix(m, "&lt;@"), "&gt;")
				return `<span class="mention">@` + html.EscapeString(users.name(id)) + `</span>`
			})
			t = escapedLinkRe.ReplaceAllString(t, `<a href="$1">$2</a>`)
			t = boldRe.ReplaceAllString(t, "<b>$1</b>")
			t = italicRe.ReplaceAllString(t, "$1<i>$2</i>$3")
			b.WriteString(strings.ReplaceAll(t, "\n", "<br>"))
		}
	}
	return b.String()
}

// MessageView is what RenderHTML draws: one message as Slack shows it.
type MessageView struct {
	// Channel is the channel's name, without '#'.
	Channel string
	// Author is the app's display name; Time the shown time ("17:04").
	Author, Time string
	Blocks       json.RawMessage
	Fallback     string
	Users        Users
	// Replies, when set, shows the thread's reply count under the message.
	Replies int
	// Note, when set, is a caption line at the bottom of the page.
	Note string
}

// RenderHTML renders a message as a standalone HTML page styled after
// Slack's desktop client, for a screenshot.
func RenderHTML(v MessageView) (string, error) {
	blocks, err := parseBlocks(v.Blocks)
	if err != nil {
		return "", err
	}
	var body strings.Builder
	if len(blocks) == 0 {
		body.WriteString(`<div class="section">` + mrkdwnToHTML(v.Fallback, v.Users) + `</div>`)
	}
	for _, b := range blocks {
		switch b.Type {
		case "header":
			body.WriteString(`<div class="header">` + html.EscapeString(textOrEmpty(b.Text)) + `</div>`)
		case "section":
			body.WriteString(`<div class="section">`)
			if b.Text != nil {
				body.WriteString(`<div>` + textHTML(b.Text, v.Users) + `</div>`)
			}
			if len(b.Fields) > 0 {
				body.WriteString(`<div class="fields">`)
				for _, f := range b.Fields {
					body.WriteString(`<div>` + textHTML(&f, v.Users) + `</div>`)
				}
				body.WriteString(`</div>`)
			}
			body.WriteString(`</div>`)
		case "context":
			body.WriteString(`<div class="context">`)
			for i, e := range b.Elements {
				if i > 0 {
					body.WriteString(" · ")
				}
				body.WriteString(mrkdwnToHTML(e.text(), v.Users))
			}
			body.WriteString(`</div>`)
		case "divider":
			body.WriteString(`<hr>`)
		case "actions":
			body.WriteString(`<div class="actions">`)
			for _, e := range b.Elements {
				if e.Type == "overflow" {
					body.WriteString(`<span class="button overflow">⋮</span>`)
					continue
				}
				body.WriteString(`<span class="button ` + html.EscapeString(e.Style) + `">` + html.EscapeString(e.text()) + `</span>`)
			}
			body.WriteString(`</div>`)
		default:
			body.WriteString(`<div class="context">(` + html.EscapeString(b.Type) + ` block)</div>`)
		}
	}
	if v.Replies > 0 {
		fmt.Fprintf(&body, `<div class="replies">💬 %d repl%s</div>`, v.Replies, map[bool]string{true: "y", false: "ies"}[v.Replies == 1])
	}
	note := ""
	if v.Note != "" {
		note = `<div class="note">` + html.EscapeString(v.Note) + `</div>`
	}
	return fmt.Sprintf(htmlPage, html.EscapeString(v.Channel), html.EscapeString(v.Author), html.EscapeString(v.Time), body.String(), note), nil
}

func textOrEmpty(t *kitText) string {
	if t == nil {
		return ""
	}
	return t.Text
}

func textHTML(t *kitText, users Users) string {
	if t.Type == "plain_text" {
		return strings.ReplaceAll(html.EscapeString(t.Text), "\n", "<br>")
	}
	return mrkdwnToHTML(t.Text, users)
}

// htmlPage is the page around a message: channel bar, avatar, name, APP
// badge, time, then the blocks.
const htmlPage = `<!doctype html>
<html><head><meta charset="utf-8"><style>
body { margin: 0; font: 15px/1.46668 -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", Helvetica, Arial, sans-serif; color: #1d1c1d; background: #fff; }
.bar { padding: 12px 20px; border-bottom: 1px solid #ddd; font-weight: 900; font-size: 18px; }
.msg { display: flex; padding: 16px 20px; }
.avatar { width: 36px; height: 36px; border-radius: 6px; background: #2eb67d; color: #fff; font-weight: 900; display: flex; align-items: center; justify-content: center; margin-right: 10px; flex: none; }
.content { flex: 1; min-width: 0; }
.who { font-weight: 900; } .app { font-size: 10px; font-weight: 700; color: #616061; background: #ddd; border-radius: 2px; padding: 1px 3px; margin: 0 4px; vertical-align: 2px; } .time { color: #616061; font-size: 12px; }
.header { font-size: 18px; font-weight: 900; margin: 6px 0 4px; }
.section { margin: 6px 0; }
.fields { display: grid; grid-template-columns: 1fr 1fr; gap: 6px 16px; margin-top: 6px; }
.context { color: #616061; font-size: 13px; margin: 6px 0; }
pre { background: #f8f8f8; border: 1px solid #ddd; border-radius: 4px; padding: 8px; font: 12px/1.5 Monaco, Menlo, Consolas, "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
code { color: #c01343; background: #f8f8f8; border: 1px solid #ddd; border-radius: 3px; padding: 0 3px; font: 12px Monaco, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
.mention { color: #1264a3; background: #e8f5fa; border-radius: 3px; padding: 0 2px; }
.actions { margin: 10px 0 4px; }
.button { display: inline-block; border: 1px solid #bbb; border-radius: 4px; padding: 4px 12px; font-weight: 700; font-size: 14px; margin-right: 8px; }
.button.primary { background: #007a5a; border-color: #007a5a; color: #fff; }
.button.danger { background: #fff; border-color: #e01e5a; color: #e01e5a; }
.button.overflow { padding: 4px 8px; }
.replies { color: #1264a3; font-size: 13px; font-weight: 700; margin: 6px 0; }
.note { color: #616061; font-size: 12px; padding: 0 20px 12px; font-style: italic; }
hr { border: none; border-top: 1px solid #ddd; }
</style></head><body>
<div class="bar"># %s</div>
<div class="msg"><div class="avatar">K</div><div class="content">
<div><span class="who">%s</span><span class="app">APP</span><span class="time">%s</span></div>
%s
</div></div>
%s
</body></html>
`
