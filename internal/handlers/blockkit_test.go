// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/slack-go/slack"
)

// dateToken is a Slack date token, <!date^unix^format|fallback>.
var dateToken = regexp.MustCompile(`<!date\^\d+\^[^|>]+\|([^>]+)>`)

// shownDates replaces Slack date tokens by their UTC fallback text, for
// assertions on the time shown.
func shownDates(s string) string { return dateToken.ReplaceAllString(s, "$1") }

// validateBlocks checks rendered blocks against Slack's documented Block
// Kit limits (limits.md) and the bot's own escaping rule: no '<' in mrkdwn
// except the user mentions the bot writes itself. It returns every problem.
func validateBlocks(blocks []slack.Block) []string {
	raw, err := json.Marshal(blocks)
	if err != nil {
		return []string{"marshal: " + err.Error()}
	}
	return validateBlocksJSON(raw)
}

// ownMention matches what the bot writes itself in mrkdwn: user mentions
// and Slack date tokens.
var ownMention = regexp.MustCompile(`<@[UW][A-Z0-9]{2,31}>|<!date\^\d+\^\{[a-z_]+\}( at \{time\})?\|[0-9: -]+[A-Z]{3}>`)

func validateBlocksJSON(raw []byte) []string {
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return []string{"unmarshal: " + err.Error()}
	}
	var problems []string
	bad := func(where, format string, args ...any) {
		problems = append(problems, where+": "+fmt.Sprintf(format, args...))
	}
	if len(list) > slackview.MaxBlocks {
		bad("message", "%d blocks, limit %d", len(list), slackview.MaxBlocks)
	}
	text := func(where string, v any, max int, plainOnly bool) {
		obj, ok := v.(map[string]any)
		if !ok {
			bad(where, "missing text object")
			return
		}
		typ, _ := obj["type"].(string)
		s, _ := obj["text"].(string)
		switch {
		case typ != "plain_text" && typ != "mrkdwn":
			bad(where, "text type %q", typ)
		case plainOnly && typ != "plain_text":
			bad(where, "must be plain_text, is %s", typ)
		case strings.TrimSpace(s) == "":
			bad(where, "empty text")
		case utf8.RuneCountInString(s) > max:
			bad(where, "%d characters, limit %d", utf8.RuneCountInString(s), max)
		case !utf8.ValidString(s):
			bad(where, "invalid UTF-8")
		}
		if typ == "mrkdwn" && strings.Contains(ownMention.ReplaceAllString(s, ""), "<") {
			bad(where, "unescaped '<' in mrkdwn: %.80q", s)
		}
		if _, has := obj["emoji"]; has && typ == "mrkdwn" {
			bad(where, "emoji set on mrkdwn")
		}
	}
	seenIDs := map[string]bool{}
	for i, b := range list {
		where := fmt.Sprintf("blocks[%d]", i)
		if id, _ := b["block_id"].(string); id != "" {
			if len(id) > 255 {
				bad(where, "block_id of %d characters", len(id))
			}
			if seenIDs[id] {
				bad(where, "duplicate block_id %q", id)
			}
			seenIDs[id] = true
		}
		switch b["type"] {
		case "header":
			text(where+".text", b["text"], slackview.MaxHeaderText, true)
		case "section":
			fields, _ := b["fields"].([]any)
			if b["text"] == nil && len(fields) == 0 {
				bad(where, "section without text or fields")
			}
			if b["text"] != nil {
				text(where+".text", b["text"], slackview.MaxSectionText, false)
			}
			if len(fields) > slackview.MaxFields {
				bad(where, "%d fields, limit %d", len(fields), slackview.MaxFields)
			}
			for j, f := range fields {
				text(fmt.Sprintf("%s.fields[%d]", where, j), f, slackview.MaxFieldText, false)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > slackview.MaxContextElements {
				bad(where, "%d context elements, want 1..%d", len(els), slackview.MaxContextElements)
			}
			for j, e := range els {
				text(fmt.Sprintf("%s.elements[%d]", where, j), e, slackview.MaxSectionText, false)
			}
		case "divider":
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > 25 {
				bad(where, "%d action elements, want 1..25", len(els))
			}
			for j, e := range els {
				validateButton(fmt.Sprintf("%s.elements[%d]", where, j), e, text, bad)
			}
		default:
			bad(where, "unexpected block type %v", b["type"])
		}
	}
	return problems
}

func validateButton(where string, e any, text func(string, any, int, bool), bad func(string, string, ...any)) {
	el, _ := e.(map[string]any)
	if el["type"] == "overflow" {
		opts, _ := el["options"].([]any)
		if len(opts) < 1 || len(opts) > 5 {
			bad(where, "%d overflow options, want 1..5", len(opts))
		}
		for j, o := range opts {
			opt, _ := o.(map[string]any)
			text(fmt.Sprintf("%s.options[%d].text", where, j), opt["text"], 75, true)
			if v, _ := opt["value"].(string); v == "" || len(v) > 150 {
				bad(where, "option value %q: want 1..150 characters", v)
			}
		}
		if id, _ := el["action_id"].(string); id == "" || len(id) > 255 {
			bad(where, "action_id of %d characters", len(id))
		}
		return
	}
	if el["type"] != "button" {
		bad(where, "element type %v", el["type"])
		return
	}
	text(where+".text", el["text"], 75, true)
	if v, _ := el["value"].(string); len(v) > 2000 {
		bad(where, "value of %d characters, limit 2000", len(v))
	}
	if id, _ := el["action_id"].(string); id == "" || len(id) > 255 {
		bad(where, "action_id %q", id)
	}
	if s, ok := el["style"]; ok && s != "primary" && s != "danger" {
		bad(where, "style %v", s)
	}
	if c, ok := el["confirm"].(map[string]any); ok {
		text(where+".confirm.title", c["title"], 100, true)
		text(where+".confirm.text", c["text"], slackview.MaxConfirmText, false)
		text(where+".confirm.confirm", c["confirm"], 30, true)
		text(where+".confirm.deny", c["deny"], 30, true)
	}
}

// blockTexts returns every text in the blocks, in order, for assertions.
func blockTexts(t testing.TB, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("blocks are not JSON: %v", err)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["text"].(string); ok {
				b.WriteString(s)
				b.WriteString("\n")
			}
			for k, c := range x {
				if k != "text" || !isString(c) {
					walk(c)
				}
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return b.String()
}

func isString(v any) bool { _, ok := v.(string); return ok }

// buttons returns the buttons of the blocks by action_id.
func buttons(t testing.TB, raw []byte) map[string]map[string]any {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("blocks are not JSON: %v", err)
	}
	out := map[string]map[string]any{}
	for _, b := range list {
		if b["type"] != "actions" {
			continue
		}
		els, _ := b["elements"].([]any)
		for _, e := range els {
			el, _ := e.(map[string]any)
			if id, _ := el["action_id"].(string); id != "" {
				out[id] = el
			}
		}
	}
	return out
}
