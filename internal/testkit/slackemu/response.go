// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"
)

// maxResponseURLUses is how often a response_url may be used ("up to 5 times within 30 minutes").
const maxResponseURLUses = 5

// responseTarget is where a slash-command or click response goes: the channel, the invoking user and, for
// clicks, the message clicked.
type responseTarget struct {
	channel, user, messageTS string
	uses                     int
}

// responseURLs maps the secret last path segment of each response_url to its target. Guarded by
// Server.mu.
type responseURLs map[string]*responseTarget

// newResponseURLLocked issues a response_url on the emulator shaped like Slack's
// (https://hooks.slack.com/commands/T…/123/secret).
func (s *Server) newResponseURLLocked(kind, teamID string, t *responseTarget) string {
	secret := randomID(24)
	s.responses[secret] = t
	return fmt.Sprintf("%s/%s/%s/%d/%s", s.baseURL, kind, teamID, len(s.responses), secret)
}

// responseMessage is the JSON body of a response (ack payload or response_url post).
type responseMessage struct {
	Text            string          `json:"text"`
	Blocks          json.RawMessage `json:"blocks"`
	ResponseType    string          `json:"response_type"`
	ReplaceOriginal flexBool        `json:"replace_original"`
	DeleteOriginal  flexBool        `json:"delete_original"`
	ThreadTS        string          `json:"thread_ts"`
}

// flexBool decodes true, "true", false or "false".
type flexBool bool

// UnmarshalJSON accepts a JSON boolean or a string holding one.
func (b *flexBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch t := v.(type) {
	case bool:
		*b = flexBool(t)
	case string:
		parsed, err := strconv.ParseBool(t)
		if err != nil {
			return fmt.Errorf("decoding a boolean from %q: %w", t, err)
		}
		*b = flexBool(parsed)
	case nil:
		*b = false
	default:
		return fmt.Errorf("decoding a boolean from %s", data)
	}
	return nil
}

// applyResponseLocked shows a response the way Slack does: replace or delete the clicked message, post
// in the channel for response_type "in_channel", or show an ephemeral message to the user otherwise.
func (s *Server) applyResponseLocked(t *responseTarget, r responseMessage) apiResult {
	var blocks json.RawMessage
	if len(r.Blocks) > 0 && string(r.Blocks) != "null" {
		parsed, violations, err := parseBlocks(string(r.Blocks))
		if err != nil {
			return errResult("invalid_blocks_format")
		}
		if len(violations) > 0 {
			return invalidBlocksResult(violations)
		}
		blocks = fillGeneratedIDs(parsed)
	}
	if r.DeleteOriginal || r.ReplaceOriginal {
		m, ok := s.store.get(t.channel, t.messageTS)
		if t.messageTS == "" || !ok {
			return errResult("message_not_found")
		}
		if r.DeleteOriginal {
			s.store.remove(m)
		} else {
			m.Text, m.Blocks = r.Text, blocks
			m.Updated++
		}
		s.notifyLocked()
		return okObject()
	}
	if r.Text == "" && blocks == nil {
		return errResult("no_text")
	}
	m := &Message{Channel: t.channel, TS: s.clock.next(), User: s.opts.BotUserID, Text: r.Text, Blocks: blocks}
	if r.ThreadTS != "" {
		m.ThreadTS = s.store.threadParent(t.channel, r.ThreadTS)
	}
	if r.ResponseType != "in_channel" {
		m.Ephemeral, m.ForUser = true, t.user
	}
	s.store.add(m)
	s.notifyLocked()
	return okObject()
}

// showSlashResponseLocked shows the payload of a slash command's ack. A payload Slack would refuse is
// recorded as an ack failure, since the user would see an error instead.
func (s *Server) showSlashResponseLocked(env *envelope, payload json.RawMessage) {
	var r responseMessage
	if err := json.Unmarshal(payload, &r); err != nil {
		s.recordFailureLocked(ackFailure{detail: fmt.Sprintf("envelope %s: unreadable ack payload: %v", env.id, err)})
		return
	}
	r.ReplaceOriginal, r.DeleteOriginal = false, false
	if res := s.applyResponseLocked(env.invoker, r); res.errCode != "" {
		detail := fmt.Sprintf("envelope %s: ack payload refused: %s", env.id, res.errCode)
		if len(res.body) > 2 {
			extra, _ := json.Marshal(res.body[2:])
			detail += " " + string(extra)
		}
		s.recordFailureLocked(ackFailure{detail: detail})
	}
}

// serveResponseURL answers POSTs to the response_urls of slash commands and clicks.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	secret := path.Base(r.URL.Path)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	var res apiResult
	var msg responseMessage
	switch {
	case r.Method != http.MethodPost:
		res = apiResult{status: http.StatusMethodNotAllowed, text: "POST only\n"}
	case err != nil:
		res = errResult("invalid_payload")
	case json.Unmarshal(body, &msg) != nil:
		res = errResult("invalid_payload")
	default:
		res = s.respond(secret, msg)
	}
	s.writeResult(w, res)

	form := url.Values{}
	for k, v := range map[string]string{
		"text": msg.Text, "response_type": msg.ResponseType, "thread_ts": msg.ThreadTS,
		"blocks":           string(msg.Blocks),
		"replace_original": strconv.FormatBool(bool(msg.ReplaceOriginal)),
		"delete_original":  strconv.FormatBool(bool(msg.DeleteOriginal)),
	} {
		if v != "" {
			form.Set(k, v)
		}
	}
	s.mu.Lock()
	s.api.calls["response_url"]++
	s.api.requests = append(s.api.requests, APIRequest{
		Method: "response_url", Form: form, Time: time.Now(), Status: res.status, Error: res.errCode,
	})
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *Server) respond(secret string, msg responseMessage) apiResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.responses[secret]
	if !ok {
		return apiResult{status: http.StatusNotFound, text: "no such response_url\n"}
	}
	if t.uses >= maxResponseURLUses {
		return errResult("used_url")
	}
	t.uses++
	return s.applyResponseLocked(t, msg)
}
