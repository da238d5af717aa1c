// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Block Kit limits, from Slack's reference pages (see limits.md in the research notes).
const (
	maxBlocks            = 50
	maxBlockIDLen        = 255
	maxSectionTextLen    = 3000
	maxSectionFields     = 10
	maxSectionFieldLen   = 2000
	maxHeaderTextLen     = 150
	maxContextElements   = 10
	maxContextTextLen    = 3000
	maxActionsElements   = 25
	maxButtonTextLen     = 75
	maxButtonValueLen    = 2000
	maxButtonURLLen      = 3000
	maxActionIDLen       = 255
	maxOptionTextLen     = 75
	maxOptionValueLen    = 150
	maxOverflowOptions   = 5
	maxAccessibilityLen  = 75
	maxConfirmTitleLen   = 100
	maxConfirmTextLen    = 300
	maxConfirmButtonLen  = 30
	maxMarkdownBlockLen  = 12000
	maxUpdateTextLen     = 4000
	maxPostTextLen       = 40000
	maxMessageAttachment = 100
)

const (
	plainText = "plain_text"
	mrkdwn    = "mrkdwn"
)

var (
	plainOnly   = []string{plainText}
	anyTextType = []string{plainText, mrkdwn}
	styles      = []string{"primary", "danger"}
)

// otherInteractiveElements are element types accepted without a deep check (the bot renders buttons only).
var otherInteractiveElements = []string{
	"static_select", "external_select", "users_select", "conversations_select", "channels_select",
	"multi_static_select", "multi_external_select", "multi_users_select", "multi_conversations_select",
	"multi_channels_select", "overflow", "datepicker", "timepicker", "datetimepicker", "checkboxes",
	"radio_buttons", "workflow_button", "plain_text_input", "number_input", "email_text_input",
	"url_text_input", "rich_text_input", "file_input", "image",
}

// otherBlockTypes are block types accepted without a deep check.
var otherBlockTypes = []string{"image", "rich_text", "input", "file", "video", "table", "context_actions"}

// errBlocksFormat means the blocks field is not a JSON array of objects (invalid_blocks_format).
var errBlocksFormat = fmt.Errorf("blocks is not a JSON array of objects")

// parseBlocks checks a "blocks" form value. It returns the compacted array (nil when empty), the Block Kit
// violations in Slack's wording ("must be less than 3001 characters [json-pointer:/blocks/0/text/text]"),
// or errBlocksFormat.
func parseBlocks(raw string) (json.RawMessage, []string, error) {
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBlocksFormat, err)
	}
	if len(blocks) > maxBlocks {
		return nil, []string{fmt.Sprintf("no more than %d items allowed [json-pointer:/blocks]", maxBlocks)}, nil
	}
	var v blockValidator
	for i, b := range blocks {
		if b == nil {
			return nil, nil, fmt.Errorf("%w: block %d is null", errBlocksFormat, i)
		}
		v.block(b, fmt.Sprintf("/blocks/%d", i))
	}
	if len(v.errs) > 0 {
		return nil, v.errs, nil
	}
	if len(blocks) == 0 {
		return nil, nil, nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(raw)); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errBlocksFormat, err)
	}
	return compact.Bytes(), nil, nil
}

// blockValidator collects Block Kit violations as Slack words them.
type blockValidator struct{ errs []string }

func (v *blockValidator) add(ptr, format string, args ...any) {
	v.errs = append(v.errs, fmt.Sprintf(format, args...)+" [json-pointer:"+ptr+"]")
}

func (v *blockValidator) block(b map[string]any, p string) {
	typ, _ := b["type"].(string)
	if typ == "" {
		v.add(p, "missing required field: type")
		return
	}
	v.maxLen(b, "block_id", p, maxBlockIDLen)
	switch typ {
	case "section":
		v.onlyKeys(b, p, "type", "block_id", "text", "fields", "accessory", "expand")
		text, hasText := b["text"]
		fields, hasFields := b["fields"]
		if !hasText && !hasFields {
			v.add(p, "missing required field: text")
		}
		if hasText {
			v.textObject(text, p+"/text", anyTextType, maxSectionTextLen)
		}
		if hasFields {
			v.array(fields, p+"/fields", maxSectionFields, func(item any, ip string) {
				v.textObject(item, ip, anyTextType, maxSectionFieldLen)
			})
		}
		if acc, ok := b["accessory"]; ok {
			v.element(acc, p+"/accessory")
		}
	case "header":
		v.onlyKeys(b, p, "type", "block_id", "text", "level")
		if text, ok := b["text"]; ok {
			v.textObject(text, p+"/text", plainOnly, maxHeaderTextLen)
		} else {
			v.add(p, "missing required field: text")
		}
	case "divider":
		v.onlyKeys(b, p, "type", "block_id")
	case "context":
		v.onlyKeys(b, p, "type", "block_id", "elements")
		v.requiredArray(b, "elements", p, maxContextElements, func(item any, ip string) {
			if obj, ok := item.(map[string]any); ok && obj["type"] == "image" {
				v.image(obj, ip)
				return
			}
			v.textObject(item, ip, anyTextType, maxContextTextLen)
		})
	case "actions":
		v.onlyKeys(b, p, "type", "block_id", "elements")
		v.requiredArray(b, "elements", p, maxActionsElements, v.element)
	case "markdown":
		v.onlyKeys(b, p, "type", "block_id", "text")
		if _, ok := b["text"].(string); !ok {
			v.add(p, "missing required field: text")
		}
		v.maxLen(b, "text", p, maxMarkdownBlockLen)
	default:
		if !slices.Contains(otherBlockTypes, typ) {
			v.add(p, "failed to match all allowed schemas")
		}
	}
}

// textObject checks a plain_text or mrkdwn object. When both types are allowed, Slack prefixes the
// specific errors with "failed to match all allowed schemas" at the object (as in real answers).
func (v *blockValidator) textObject(val any, p string, types []string, maxChars int) {
	start := len(v.errs)
	defer func() {
		if len(types) > 1 && len(v.errs) > start {
			v.errs = slices.Insert(v.errs, start, "failed to match all allowed schemas [json-pointer:"+p+"]")
		}
	}()
	obj, ok := val.(map[string]any)
	if !ok {
		v.add(p, "must be an object")
		return
	}
	typ, _ := obj["type"].(string)
	switch {
	case typ == "":
		v.add(p, "missing required field: type")
	case !slices.Contains(types, typ):
		v.add(p+"/type", "must be a valid enum value")
	}
	switch text, present := obj["text"]; {
	case !present:
		v.add(p, "missing required field: text")
	default:
		s, isString := text.(string)
		n := utf8.RuneCountInString(s)
		switch {
		case !isString:
			v.add(p+"/text", "must be a string")
		case n == 0:
			v.add(p+"/text", "must be more than 0 characters")
		case n > maxChars:
			v.add(p+"/text", "must be less than %d characters", maxChars+1)
		}
	}
	switch typ {
	case plainText:
		v.onlyKeys(obj, p, "type", "text", "emoji")
	case mrkdwn:
		v.onlyKeys(obj, p, "type", "text", "verbatim")
	}
}

// element checks an interactive element (in an actions block or a section accessory).
func (v *blockValidator) element(val any, p string) {
	obj, ok := val.(map[string]any)
	if !ok {
		v.add(p, "failed to match all allowed schemas")
		return
	}
	typ, _ := obj["type"].(string)
	switch {
	case typ == "button":
		v.button(obj, p)
	case typ == "image":
		v.image(obj, p)
	case typ == "overflow":
		v.overflow(obj, p)
	case slices.Contains(otherInteractiveElements, typ):
		v.maxLen(obj, "action_id", p, maxActionIDLen)
		if c, ok := obj["confirm"]; ok {
			v.confirm(c, p+"/confirm")
		}
	default:
		v.add(p, "failed to match all allowed schemas")
	}
}

// overflow checks an overflow menu: 1 to 5 options, each a plain_text text and a value of at most 150
// characters (Slack's documented option limits).
func (v *blockValidator) overflow(obj map[string]any, p string) {
	v.onlyKeys(obj, p, "type", "action_id", "options", "confirm")
	v.maxLen(obj, "action_id", p, maxActionIDLen)
	v.requiredArray(obj, "options", p, maxOverflowOptions, func(val any, op string) {
		opt, ok := val.(map[string]any)
		if !ok {
			v.add(op, "must be an object")
			return
		}
		v.onlyKeys(opt, op, "text", "value", "description", "url")
		if text, ok := opt["text"]; ok {
			v.textObject(text, op+"/text", plainOnly, maxOptionTextLen)
		} else {
			v.add(op, "missing required field: text")
		}
		v.maxLen(opt, "value", op, maxOptionValueLen)
	})
	if c, ok := obj["confirm"]; ok {
		v.confirm(c, p+"/confirm")
	}
}

func (v *blockValidator) button(b map[string]any, p string) {
	v.onlyKeys(b, p, "type", "text", "action_id", "url", "value", "style", "confirm", "accessibility_label")
	if text, ok := b["text"]; ok {
		v.textObject(text, p+"/text", plainOnly, maxButtonTextLen)
	} else {
		v.add(p, "missing required field: text")
	}
	v.maxLen(b, "action_id", p, maxActionIDLen)
	v.maxLen(b, "value", p, maxButtonValueLen)
	v.maxLen(b, "url", p, maxButtonURLLen)
	v.maxLen(b, "accessibility_label", p, maxAccessibilityLen)
	v.enum(b, "style", p, styles)
	if c, ok := b["confirm"]; ok {
		v.confirm(c, p+"/confirm")
	}
}

// confirm checks a confirmation dialog object. Its text may be plain_text or mrkdwn: current docs say
// plain_text, older docs and the SDKs accept both.
func (v *blockValidator) confirm(val any, p string) {
	obj, ok := val.(map[string]any)
	if !ok {
		v.add(p, "must be an object")
		return
	}
	v.onlyKeys(obj, p, "title", "text", "confirm", "deny", "style")
	parts := []struct {
		key   string
		types []string
		max   int
	}{
		{"title", plainOnly, maxConfirmTitleLen},
		{"text", anyTextType, maxConfirmTextLen},
		{"confirm", plainOnly, maxConfirmButtonLen},
		{"deny", plainOnly, maxConfirmButtonLen},
	}
	for _, part := range parts {
		if t, ok := obj[part.key]; ok {
			v.textObject(t, p+"/"+part.key, part.types, part.max)
		} else {
			v.add(p, "missing required field: %s", part.key)
		}
	}
	v.enum(obj, "style", p, styles)
}

func (v *blockValidator) image(obj map[string]any, p string) {
	if _, ok := obj["alt_text"].(string); !ok {
		v.add(p, "missing required field: alt_text")
	}
	_, hasURL := obj["image_url"]
	_, hasFile := obj["slack_file"]
	if !hasURL && !hasFile {
		v.add(p, "missing required field: image_url")
	}
}

func (v *blockValidator) requiredArray(obj map[string]any, key, p string, maxItems int, each func(any, string)) {
	val, ok := obj[key]
	if !ok {
		v.add(p, "missing required field: %s", key)
		return
	}
	v.array(val, p+"/"+key, maxItems, each)
}

func (v *blockValidator) array(val any, p string, maxItems int, each func(any, string)) {
	items, ok := val.([]any)
	switch {
	case !ok:
		v.add(p, "must be an array")
		return
	case len(items) == 0:
		v.add(p, "must provide at least 1 item") // wording not confirmed by a real capture
		return
	case len(items) > maxItems:
		v.add(p, "no more than %d items allowed", maxItems)
		return
	}
	for i, item := range items {
		each(item, fmt.Sprintf("%s/%d", p, i))
	}
}

func (v *blockValidator) maxLen(obj map[string]any, key, p string, maxChars int) {
	val, ok := obj[key]
	if !ok {
		return
	}
	s, isString := val.(string)
	switch {
	case !isString:
		v.add(p+"/"+key, "must be a string")
	case utf8.RuneCountInString(s) > maxChars:
		v.add(p+"/"+key, "must be less than %d characters", maxChars+1)
	}
}

func (v *blockValidator) enum(obj map[string]any, key, p string, values []string) {
	val, ok := obj[key]
	if !ok {
		return
	}
	if s, _ := val.(string); !slices.Contains(values, s) {
		v.add(p+"/"+key, "must be a valid enum value")
	}
}

func (v *blockValidator) onlyKeys(obj map[string]any, p string, keys ...string) {
	extra := make([]string, 0)
	for k := range obj {
		if !slices.Contains(keys, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra) // deterministic order
	for _, k := range extra {
		v.add(p, "invalid additional property: %s", k)
	}
}
