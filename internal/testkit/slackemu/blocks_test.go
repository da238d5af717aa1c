// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// text returns a JSON text object.
func text(typ string, n int) string {
	return fmt.Sprintf(`{"type":%q,"text":%q}`, typ, strings.Repeat("a", n))
}

func button(fields string) string {
	return `{"type":"button","text":` + text(plainText, 5) + fields + `}`
}

func confirm(title, body, yes, no int) string {
	return fmt.Sprintf(`,"confirm":{"title":%s,"text":%s,"confirm":%s,"deny":%s}`,
		text(plainText, title), text(mrkdwn, body), text(plainText, yes), text(plainText, no))
}

func repeatJSON(item string, n int) string {
	return strings.TrimSuffix(strings.Repeat(item+",", n), ",")
}

func TestParseBlocksLimits(t *testing.T) {
	tests := []struct {
		name   string
		blocks string
		want   []string // nil: valid
	}{
		{"empty", `[]`, nil},
		{"50 blocks", "[" + repeatJSON(`{"type":"divider"}`, 50) + "]", nil},
		{"51 blocks", "[" + repeatJSON(`{"type":"divider"}`, 51) + "]",
			[]string{"no more than 50 items allowed [json-pointer:/blocks]"}},
		{"section text 3000", `[{"type":"section","text":` + text(mrkdwn, 3000) + `}]`, nil},
		{"section text 3001", `[{"type":"section","text":` + text(mrkdwn, 3001) + `}]`, []string{
			"failed to match all allowed schemas [json-pointer:/blocks/0/text]",
			"must be less than 3001 characters [json-pointer:/blocks/0/text/text]"}},
		{"section text counts characters, not bytes", `[{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("é", 3000) + `"}}]`, nil},
		{"section empty text", `[{"type":"section","text":` + text(mrkdwn, 0) + `}]`, []string{
			"failed to match all allowed schemas [json-pointer:/blocks/0/text]",
			"must be more than 0 characters [json-pointer:/blocks/0/text/text]"}},
		{"section without text or fields", `[{"type":"section"}]`,
			[]string{"missing required field: text [json-pointer:/blocks/0]"}},
		{"emoji on mrkdwn", `[{"type":"section","text":{"type":"mrkdwn","text":"x","emoji":true}}]`, []string{
			"failed to match all allowed schemas [json-pointer:/blocks/0/text]",
			"invalid additional property: emoji [json-pointer:/blocks/0/text]"}},
		{"unknown text type", `[{"type":"section","text":{"type":"markdown","text":"x"}}]`, []string{
			"failed to match all allowed schemas [json-pointer:/blocks/0/text]",
			"must be a valid enum value [json-pointer:/blocks/0/text/type]"}},
		{"10 fields of 2000", `[{"type":"section","fields":[` + repeatJSON(text(mrkdwn, 2000), 10) + `]}]`, nil},
		{"11 fields", `[{"type":"section","fields":[` + repeatJSON(text(mrkdwn, 1), 11) + `]}]`,
			[]string{"no more than 10 items allowed [json-pointer:/blocks/0/fields]"}},
		{"field 2001", `[{"type":"section","fields":[` + text(mrkdwn, 2001) + `]}]`, []string{
			"failed to match all allowed schemas [json-pointer:/blocks/0/fields/0]",
			"must be less than 2001 characters [json-pointer:/blocks/0/fields/0/text]"}},
		{"header 150", `[{"type":"header","text":` + text(plainText, 150) + `}]`, nil},
		{"header 151", `[{"type":"header","text":` + text(plainText, 151) + `}]`,
			[]string{"must be less than 151 characters [json-pointer:/blocks/0/text/text]"}},
		{"header mrkdwn", `[{"type":"header","text":` + text(mrkdwn, 5) + `}]`,
			[]string{"must be a valid enum value [json-pointer:/blocks/0/text/type]"}},
		{"context 10", `[{"type":"context","elements":[` + repeatJSON(text(mrkdwn, 1), 10) + `]}]`, nil},
		{"context 11", `[{"type":"context","elements":[` + repeatJSON(text(mrkdwn, 1), 11) + `]}]`,
			[]string{"no more than 10 items allowed [json-pointer:/blocks/0/elements]"}},
		{"context image", `[{"type":"context","elements":[{"type":"image","image_url":"https://x/y.png","alt_text":"y"}]}]`, nil},
		{"actions 25", `[{"type":"actions","elements":[` + repeatJSON(button(""), 25) + `]}]`, nil},
		{"actions 26", `[{"type":"actions","elements":[` + repeatJSON(button(""), 26) + `]}]`,
			[]string{"no more than 25 items allowed [json-pointer:/blocks/0/elements]"}},
		{"actions without elements", `[{"type":"actions"}]`,
			[]string{"missing required field: elements [json-pointer:/blocks/0]"}},
		{"button text 76", `[{"type":"actions","elements":[{"type":"button","text":` + text(plainText, 76) + `}]}]`,
			[]string{"must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]"}},
		{"button mrkdwn text", `[{"type":"actions","elements":[{"type":"button","text":` + text(mrkdwn, 5) + `}]}]`,
			[]string{"must be a valid enum value [json-pointer:/blocks/0/elements/0/text/type]"}},
		{"button value 2000", `[{"type":"actions","elements":[` + button(`,"value":"`+strings.Repeat("v", 2000)+`"`) + `]}]`, nil},
		{"button value 2001", `[{"type":"actions","elements":[` + button(`,"value":"`+strings.Repeat("v", 2001)+`"`) + `]}]`,
			[]string{"must be less than 2001 characters [json-pointer:/blocks/0/elements/0/value]"}},
		{"action_id 256", `[{"type":"actions","elements":[` + button(`,"action_id":"`+strings.Repeat("a", 256)+`"`) + `]}]`,
			[]string{"must be less than 256 characters [json-pointer:/blocks/0/elements/0/action_id]"}},
		{"button url 3001", `[{"type":"actions","elements":[` + button(`,"url":"`+strings.Repeat("u", 3001)+`"`) + `]}]`,
			[]string{"must be less than 3001 characters [json-pointer:/blocks/0/elements/0/url]"}},
		{"button style", `[{"type":"actions","elements":[` + button(`,"style":"green"`) + `]}]`,
			[]string{"must be a valid enum value [json-pointer:/blocks/0/elements/0/style]"}},
		{"block_id 256", `[{"type":"divider","block_id":"` + strings.Repeat("b", 256) + `"}]`,
			[]string{"must be less than 256 characters [json-pointer:/blocks/0/block_id]"}},
		{"confirm at limits", `[{"type":"actions","elements":[` + button(confirm(100, 300, 30, 30)) + `]}]`, nil},
		{"confirm over limits", `[{"type":"actions","elements":[` + button(confirm(101, 301, 31, 31)) + `]}]`, []string{
			"must be less than 101 characters [json-pointer:/blocks/0/elements/0/confirm/title/text]",
			"failed to match all allowed schemas [json-pointer:/blocks/0/elements/0/confirm/text]",
			"must be less than 301 characters [json-pointer:/blocks/0/elements/0/confirm/text/text]",
			"must be less than 31 characters [json-pointer:/blocks/0/elements/0/confirm/confirm/text]",
			"must be less than 31 characters [json-pointer:/blocks/0/elements/0/confirm/deny/text]"}},
		{"confirm missing deny", `[{"type":"actions","elements":[` + button(`,"confirm":{"title":`+text(plainText, 1)+`,"text":`+text(mrkdwn, 1)+`,"confirm":`+text(plainText, 1)+`}`) + `]}]`,
			[]string{"missing required field: deny [json-pointer:/blocks/0/elements/0/confirm]"}},
		{"section accessory button", `[{"type":"section","text":` + text(mrkdwn, 3) + `,"accessory":` + button(`,"value":"v"`) + `}]`, nil},
		{"select element", `[{"type":"actions","elements":[{"type":"static_select","action_id":"pick","options":[]}]}]`, nil},
		{"unknown element", `[{"type":"actions","elements":[{"type":"slider"}]}]`,
			[]string{"failed to match all allowed schemas [json-pointer:/blocks/0/elements/0]"}},
		{"image accessory without alt_text", `[{"type":"section","text":` + text(mrkdwn, 1) + `,"accessory":{"type":"image","image_url":"https://x/y.png"}}]`,
			[]string{"missing required field: alt_text [json-pointer:/blocks/0/accessory]"}},
		{"fields not an array", `[{"type":"section","fields":"x"}]`,
			[]string{"must be an array [json-pointer:/blocks/0/fields]"}},
		{"empty elements", `[{"type":"actions","elements":[]}]`,
			[]string{"must provide at least 1 item [json-pointer:/blocks/0/elements]"}},
		{"markdown block 12001", `[{"type":"markdown","text":"` + strings.Repeat("m", 12001) + `"}]`,
			[]string{"must be less than 12001 characters [json-pointer:/blocks/0/text]"}},
		{"unknown block type", `[{"type":"carousel"}]`,
			[]string{"failed to match all allowed schemas [json-pointer:/blocks/0]"}},
		{"extra block property", `[{"type":"divider","color":"red"}]`,
			[]string{"invalid additional property: color [json-pointer:/blocks/0]"}},
		{"block without type", `[{"text":"x"}]`,
			[]string{"missing required field: type [json-pointer:/blocks/0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.blocks)) {
				t.Fatalf("test input is not JSON: %s", tt.blocks)
			}
			_, got, err := parseBlocks(tt.blocks)
			if err != nil {
				t.Fatalf("parseBlocks: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestParseBlocksFormat(t *testing.T) {
	for _, raw := range []string{`{`, `{"type":"divider"}`, `"blocks"`, `[1]`, `[null]`} {
		if _, _, err := parseBlocks(raw); !errors.Is(err, errBlocksFormat) {
			t.Errorf("parseBlocks(%s) error = %v, want errBlocksFormat", raw, err)
		}
	}
}

func TestParseBlocksCompactsAndClears(t *testing.T) {
	blocks, violations, err := parseBlocks("[ {\"type\": \"divider\"} ]")
	if err != nil || violations != nil || string(blocks) != `[{"type":"divider"}]` {
		t.Errorf("parseBlocks = %s %v %v, want the compacted array", blocks, violations, err)
	}
	if blocks, _, _ := parseBlocks("[]"); blocks != nil {
		t.Errorf("empty array parsed to %s, want nil (no blocks)", blocks)
	}
}
