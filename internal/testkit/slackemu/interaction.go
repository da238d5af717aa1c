// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// verificationToken is the deprecated "token" field of interaction payloads (Slack's legacy verification
// token, not a credential).
const verificationToken = "emuVerificationToken0001"

// teamDomain is the workspace domain payloads carry.
const teamDomain = "emulator"

// SlashCommand is a slash command a user types. ChannelID and UserID are required; Command defaults to
// "/kafka", TeamID to the server's team, ChannelName and UserName to known names or the lower-cased ids.
type SlashCommand struct{ TeamID, ChannelID, ChannelName, UserID, UserName, Command, Text string }

// Click is a button click on a message the app posted. ChannelID, UserID, MessageTS and ActionID are
// required. Value, when set, must equal the button's value (a real click carries the stored value; use
// SendClickRaw to forge one).
//
// For an overflow menu (or another element with options), Option names the value of the option chosen;
// the action then carries it as selected_option, as Slack sends it.
type Click struct{ TeamID, ChannelID, UserID, UserName, MessageTS, ActionID, Value, Option string }

// slashCommandPayload has the keys of a real Socket Mode slash command (slack-go issue #1265), including
// is_enterprise_install as a string.
type slashCommandPayload struct {
	Token               string `json:"token"`
	TeamID              string `json:"team_id"`
	TeamDomain          string `json:"team_domain"`
	ChannelID           string `json:"channel_id"`
	ChannelName         string `json:"channel_name"`
	UserID              string `json:"user_id"`
	UserName            string `json:"user_name"`
	Command             string `json:"command"`
	Text                string `json:"text"`
	APIAppID            string `json:"api_app_id"`
	IsEnterpriseInstall string `json:"is_enterprise_install"`
	ResponseURL         string `json:"response_url"`
	TriggerID           string `json:"trigger_id"`
}

// SendSlashCommand delivers a slash_commands envelope (accepts_response_payload true) and returns its
// envelope_id. It does not wait for the app: use WaitAck.
func (s *Server) SendSlashCommand(ctx context.Context, c SlashCommand) (string, error) {
	if c.ChannelID == "" || c.UserID == "" {
		return "", fmt.Errorf("sending slash command %q: ChannelID and UserID are required", c.Command)
	}
	if c.Command == "" {
		c.Command = "/kafka"
	}
	if !strings.HasPrefix(c.Command, "/") {
		return "", fmt.Errorf("sending slash command %q: a command starts with '/'", c.Command)
	}
	s.mu.Lock()
	if c.TeamID == "" {
		c.TeamID = s.opts.TeamID
	}
	if c.ChannelName != "" {
		s.channels.names[c.ChannelID] = c.ChannelName
	}
	if c.UserName != "" {
		s.channels.userNames[c.UserID] = c.UserName
	}
	target := &responseTarget{channel: c.ChannelID, user: c.UserID}
	responseURL := s.newResponseURLLocked("commands", c.TeamID, target)
	payload := slashCommandPayload{
		Token:               verificationToken,
		TeamID:              c.TeamID,
		TeamDomain:          teamDomain,
		ChannelID:           c.ChannelID,
		ChannelName:         s.channels.name(c.ChannelID),
		UserID:              c.UserID,
		UserName:            s.channels.userName(c.UserID),
		Command:             c.Command,
		Text:                c.Text,
		APIAppID:            s.opts.AppID,
		IsEnterpriseInstall: "false",
		ResponseURL:         responseURL,
		TriggerID:           newTriggerID(),
	}
	s.mu.Unlock()
	return s.send(ctx, &envelope{
		kind:                   envelopeSlashCommands,
		payload:                mustJSON(payload),
		acceptsResponsePayload: true,
		invoker:                target,
	})
}

// SendClick delivers an interactive envelope with a block_actions payload for a click on the button
// ActionID of the stored message (ChannelID, MessageTS), as Slack builds it: the message as currently
// stored, the action's block_id, text and value from that message. It fails when the message or the
// action does not exist.
func (s *Server) SendClick(ctx context.Context, c Click) (string, error) {
	if err := checkClick(c); err != nil {
		return "", err
	}
	s.mu.Lock()
	m, ok := s.store.get(c.ChannelID, c.MessageTS)
	if !ok {
		s.mu.Unlock()
		return "", fmt.Errorf("clicking %s on message %s in %s: message %w", c.ActionID, c.MessageTS, c.ChannelID, ErrNotFound)
	}
	blockID, element, found := findAction(m.Blocks, c.ActionID)
	if !found {
		s.mu.Unlock()
		return "", fmt.Errorf("clicking %s on message %s in %s: action %w in the message's blocks",
			c.ActionID, c.MessageTS, c.ChannelID, ErrNotFound)
	}
	value, _ := element["value"].(string)
	if c.Value != "" && c.Value != value {
		s.mu.Unlock()
		return "", fmt.Errorf("clicking %s on message %s: Value %q differs from the button's value (use SendClickRaw to forge)",
			c.ActionID, c.MessageTS, c.Value)
	}
	if typ, _ := element["type"].(string); typ == "overflow" {
		opt, ok := findOption(element, c.Option)
		if !ok {
			s.mu.Unlock()
			return "", fmt.Errorf("choosing %q in menu %s on message %s: option %w", c.Option, c.ActionID, c.MessageTS, ErrNotFound)
		}
		action := object{{"type", "overflow"}, {"action_id", c.ActionID}, {"block_id", blockID},
			{"selected_option", opt}, {"action_ts", actionTS()}}
		payload := s.blockActionsLocked(c, m, action)
		s.mu.Unlock()
		return s.send(ctx, &envelope{kind: envelopeInteractive, payload: mustJSON(payload)})
	}
	action := object{{"action_id", c.ActionID}, {"block_id", blockID}}
	if text, ok := element["text"]; ok {
		action = append(action, field{"text", text})
	}
	if _, ok := element["value"]; ok {
		action = append(action, field{"value", value})
	}
	for _, optional := range []string{"style", "confirm", "url"} {
		if v, ok := element[optional]; ok {
			action = append(action, field{optional, v})
		}
	}
	action = append(action, field{"type", "button"}, field{"action_ts", actionTS()})
	payload := s.blockActionsLocked(c, m, action)
	s.mu.Unlock()
	return s.send(ctx, &envelope{kind: envelopeInteractive, payload: mustJSON(payload)})
}

// SendClickRaw delivers a block_actions click without looking anything up: the action carries c.ActionID,
// blockID and c.Value (or, with c.Option, a menu's selected option) as given, so tests can forge clicks (a tampered value, a message that was never
// posted). The payload embeds the stored message when there is one.
func (s *Server) SendClickRaw(ctx context.Context, c Click, blockID string) (string, error) {
	if err := checkClick(c); err != nil {
		return "", err
	}
	s.mu.Lock()
	m, ok := s.store.get(c.ChannelID, c.MessageTS)
	if !ok {
		m = &Message{Channel: c.ChannelID, TS: c.MessageTS, User: s.opts.BotUserID}
	}
	action := object{
		{"action_id", c.ActionID},
		{"block_id", blockID},
		{"text", object{{"type", plainText}, {"text", c.ActionID}, {"emoji", true}}},
		{"value", c.Value},
		{"type", "button"},
		{"action_ts", actionTS()},
	}
	if c.Option != "" { // a forged menu choice
		action = object{
			{"type", "overflow"},
			{"action_id", c.ActionID},
			{"block_id", blockID},
			{"selected_option", object{{"text", object{{"type", plainText}, {"text", c.Option}, {"emoji", true}}}, {"value", c.Option}}},
			{"action_ts", actionTS()},
		}
	}
	payload := s.blockActionsLocked(c, m, action)
	s.mu.Unlock()
	return s.send(ctx, &envelope{kind: envelopeInteractive, payload: mustJSON(payload)})
}

func checkClick(c Click) error {
	if c.ChannelID == "" || c.UserID == "" || c.MessageTS == "" || c.ActionID == "" {
		return fmt.Errorf("sending click %q: ChannelID, UserID, MessageTS and ActionID are required", c.ActionID)
	}
	return nil
}

// blockActionsLocked builds a block_actions payload with the keys, in order, of a real one for a button in
// a top-level message (java-slack-sdk EnvelopeTest.interactive).
func (s *Server) blockActionsLocked(c Click, m *Message, action object) object {
	if c.TeamID == "" {
		c.TeamID = s.opts.TeamID
	}
	if c.UserName != "" {
		s.channels.userNames[c.UserID] = c.UserName
	}
	userName := s.channels.userName(c.UserID)
	container := object{
		{"type", "message"},
		{"message_ts", m.TS},
		{"channel_id", c.ChannelID},
		{"is_ephemeral", false},
	}
	if m.ThreadTS != "" { // modelled by slack-go and java-slack-sdk; not seen in a real capture
		container = append(container, field{"thread_ts", m.ThreadTS})
	}
	target := &responseTarget{channel: c.ChannelID, user: c.UserID, messageTS: m.TS}
	return object{
		{"type", "block_actions"},
		{"user", object{{"id", c.UserID}, {"username", userName}, {"name", userName}, {"team_id", c.TeamID}}},
		{"api_app_id", s.opts.AppID},
		{"token", verificationToken},
		{"container", container},
		{"trigger_id", newTriggerID()},
		{"team", object{{"id", c.TeamID}, {"domain", teamDomain}}},
		{"channel", object{{"id", c.ChannelID}, {"name", s.channels.name(c.ChannelID)}}},
		{"message", s.messageObject(m, true)},
		{"response_url", s.newResponseURLLocked("actions", c.TeamID, target)},
		{"actions", []object{action}},
	}
}

// findOption returns the option of a menu element whose value is value.
func findOption(element map[string]any, value string) (map[string]any, bool) {
	opts, _ := element["options"].([]any)
	for _, o := range opts {
		if opt, ok := o.(map[string]any); ok && opt["value"] == value {
			return opt, true
		}
	}
	return nil, false
}

// findAction finds the interactive element with actionID in a blocks array (actions blocks and section
// accessories) and returns its block's block_id.
func findAction(blocks json.RawMessage, actionID string) (string, map[string]any, bool) {
	if blocks == nil {
		return "", nil, false
	}
	var list []map[string]any
	if err := json.Unmarshal(blocks, &list); err != nil {
		return "", nil, false
	}
	for _, b := range list {
		blockID, _ := b["block_id"].(string)
		var candidates []any
		if elements, ok := b["elements"].([]any); ok && b["type"] == "actions" {
			candidates = elements
		}
		if acc, ok := b["accessory"]; ok {
			candidates = append(candidates, acc)
		}
		for _, c := range candidates {
			if e, ok := c.(map[string]any); ok && e["action_id"] == actionID {
				return blockID, e, true
			}
		}
	}
	return "", nil, false
}

// fillGeneratedIDs gives blocks without block_id, and buttons without action_id, ids the way Slack does
// when it stores a message. Blocks that already have them are returned unchanged (byte for byte).
func fillGeneratedIDs(blocks json.RawMessage) json.RawMessage {
	if blocks == nil {
		return nil
	}
	var list []map[string]any
	if err := json.Unmarshal(blocks, &list); err != nil {
		return blocks
	}
	changed := false
	setIfMissing := func(obj map[string]any, key string) {
		if _, ok := obj[key]; !ok {
			obj[key] = randomID(4)
			changed = true
		}
	}
	for _, b := range list {
		setIfMissing(b, "block_id")
		var elements []any
		if els, ok := b["elements"].([]any); ok && b["type"] == "actions" {
			elements = els
		}
		if acc, ok := b["accessory"]; ok {
			elements = append(elements, acc)
		}
		for _, e := range elements {
			if el, ok := e.(map[string]any); ok && el["type"] != "image" {
				setIfMissing(el, "action_id")
			}
		}
	}
	if !changed {
		return blocks
	}
	out, err := json.Marshal(list)
	if err != nil {
		return blocks
	}
	return out
}

// randomID returns n random URL-safe characters, like Slack's generated block_ids ("2Le", "K8xp").
func randomID(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// newTriggerID returns an id shaped like Slack's trigger_id ("37053613634.26768298162.440952c0…").
func newTriggerID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return strconv.FormatInt(time.Now().UnixMilli(), 10) + ".26768298162." + hex.EncodeToString(b)
}

// actionTS is an action_ts: the click time as "seconds.microseconds".
func actionTS() string {
	now := time.Now().UnixMicro()
	return fmt.Sprintf("%d.%06d", now/1_000_000, now%1_000_000)
}
