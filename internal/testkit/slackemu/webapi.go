// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxRequestBody bounds a Web API request body.
const maxRequestBody = 4 << 20

// redacted replaces token values in recorded requests.
const redacted = "REDACTED"

// APIRequest is one Web API request as the emulator saw it.
type APIRequest struct {
	Method string
	// Form holds the request's fields; the token field, if any, reads REDACTED.
	Form url.Values
	Time time.Time
	// Status is the HTTP status answered.
	Status int
	// Error is the Slack error code answered ("" for ok:true answers).
	Error string
}

// apiLog counts and records Web API calls. Guarded by Server.mu.
type apiLog struct {
	calls    map[string]int
	requests []APIRequest
}

func newAPILog() apiLog { return apiLog{calls: map[string]int{}} }

// Calls is the number of Web API calls of method seen so far, failed ones included ("response_url" counts
// posts to response URLs).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.api.calls[method]
}

// Requests returns every Web API request so far, oldest first, with tokens redacted.
func (s *Server) Requests() []APIRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]APIRequest, len(s.api.requests))
	for i, r := range s.api.requests {
		r.Form = cloneValues(r.Form)
		out[i] = r
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vals := range v {
		out[k] = append([]string(nil), vals...)
	}
	return out
}

// Fault makes the next call(s) of a method fail.
type Fault struct {
	// Status is the HTTP status: 429 answers with a Retry-After header; 0 or 200 answers
	// {"ok":false,"error":Error}; anything else (5xx) answers that status with a non-JSON body.
	Status int
	// RetryAfter is the Retry-After header of a 429, in seconds (at least 1).
	RetryAfter int
	// Error is the Slack error code of a 200 answer (default "internal_error"; "ratelimited" for 429).
	Error string
	// Times is how many consecutive calls fail; 0 means 1.
	Times int
}

// faultQueue holds the injected faults per method, in order. Guarded by Server.mu.
type faultQueue map[string][]Fault

func (q faultQueue) take(method string) (Fault, bool) {
	list := q[method]
	if len(list) == 0 {
		return Fault{}, false
	}
	f := list[0]
	if f.Times <= 1 {
		q[method] = list[1:]
	} else {
		list[0].Times--
	}
	return f, true
}

func (f Fault) result() apiResult {
	switch {
	case f.Status == http.StatusTooManyRequests:
		code := f.Error
		if code == "" {
			code = "ratelimited"
		}
		res := errResult(code)
		res.status = http.StatusTooManyRequests
		res.retryAfter = max(f.RetryAfter, 1)
		return res
	case f.Status == 0 || f.Status == http.StatusOK:
		code := f.Error
		if code == "" {
			code = "internal_error"
		}
		return errResult(code)
	default:
		return apiResult{status: f.Status, text: http.StatusText(f.Status) + " (injected by the Slack emulator)\n"}
	}
}

// InjectFault makes the next f.Times calls of method (e.g. "chat.postMessage", "chat.update",
// "apps.connections.open") fail as f describes. Faults on the same method queue up in order.
func (s *Server) InjectFault(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f)
}

// field is one key of a JSON object written in order (Slack answers start with "ok").
type field struct {
	key   string
	value any
}

// object is a JSON object whose keys keep their order.
type object []field

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("marshalling %q: %w", f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// apiResult is the answer to a Web API call.
type apiResult struct {
	status     int
	body       object // JSON body; nil when text is used
	text       string // non-JSON body (5xx faults)
	errCode    string // Slack error code of an ok:false body
	retryAfter int    // seconds, for 429
}

func okObject(fields ...field) apiResult {
	return apiResult{status: http.StatusOK, body: append(object{{"ok", true}}, fields...)}
}

func errResult(code string, extra ...field) apiResult {
	return apiResult{
		status:  http.StatusOK,
		body:    append(object{{"ok", false}, {"error", code}}, extra...),
		errCode: code,
	}
}

// invalidBlocksResult is Slack's invalid_blocks answer: the errors, and the same lines with "[ERROR] " in
// response_metadata.messages.
func invalidBlocksResult(errs []string) apiResult {
	messages := make([]string, len(errs))
	for i, e := range errs {
		messages[i] = "[ERROR] " + e
	}
	return errResult("invalid_blocks",
		field{"errors", errs},
		field{"response_metadata", object{{"messages", messages}}})
}

// apiCall is a decoded Web API request.
type apiCall struct {
	method string
	form   url.Values
	bearer string // token from "Authorization: Bearer"
	post   bool
}

// token is the bot token the call carries: the "token" field, else the Bearer token.
func (c *apiCall) token() string {
	if t := c.form.Get("token"); t != "" {
		return t
	}
	return c.bearer
}

func readCall(r *http.Request) (*apiCall, error) {
	call := &apiCall{
		method: strings.TrimPrefix(r.URL.Path, "/api/"),
		post:   r.Method == http.MethodPost,
	}
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
		call.bearer = strings.TrimPrefix(auth, "Bearer ")
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "application/json" {
		r.Body = http.MaxBytesReader(nil, r.Body, maxRequestBody)
		if err := r.ParseForm(); err != nil {
			return call, fmt.Errorf("parsing the form of %s: %w", call.method, err)
		}
		call.form = r.Form
		return call, nil
	}
	call.form = r.URL.Query()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return call, fmt.Errorf("reading the body of %s: %w", call.method, err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return call, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return call, fmt.Errorf("decoding the JSON body of %s: %w", call.method, err)
	}
	for k, raw := range fields {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			call.form.Set(k, s)
		} else {
			call.form.Set(k, string(raw))
		}
	}
	return call, nil
}

// tokenKind says which token a method takes.
type tokenKind int

const (
	botToken tokenKind = iota
	appToken
)

type apiMethod struct {
	token tokenKind
	serve func(s *Server, c *apiCall) apiResult
}

var apiMethods = map[string]apiMethod{
	"apps.connections.open": {appToken, (*Server).openConnection},
	"auth.test":             {botToken, (*Server).authTest},
	"chat.postMessage":      {botToken, (*Server).chatPostMessage},
	"chat.update":           {botToken, (*Server).chatUpdate},
	"chat.postEphemeral":    {botToken, (*Server).chatPostEphemeral},
	"conversations.info":    {botToken, (*Server).conversationsInfo},
}

// serveAPI answers POST /api/<method>.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	call, readErr := readCall(r)
	s.mu.Lock()
	s.api.calls[call.method]++
	fault, faulted := s.faults.take(call.method)
	s.mu.Unlock()

	var res apiResult
	switch {
	case faulted:
		res = fault.result()
	case readErr != nil:
		s.opts.Logf("slackemu: %v", readErr)
		res = errResult("invalid_form_data")
	default:
		res = s.callMethod(call)
	}
	w.Header().Set("X-OAuth-Scopes", strings.Join(s.opts.Scopes, ","))
	s.writeResult(w, res)

	form := cloneValues(call.form)
	if form.Has("token") {
		form.Set("token", redacted)
	}
	s.mu.Lock()
	s.api.requests = append(s.api.requests, APIRequest{
		Method: call.method, Form: form, Time: time.Now(), Status: res.status, Error: res.errCode,
	})
	s.notifyLocked()
	s.mu.Unlock()
	if res.errCode != "" || res.status != http.StatusOK {
		s.opts.Logf("slackemu: %s -> HTTP %d %s", call.method, res.status, res.errCode)
	}
}

func (s *Server) callMethod(call *apiCall) apiResult {
	m, ok := apiMethods[call.method]
	if !ok {
		return errResult("unknown_method", field{"req_method", call.method})
	}
	if m.token == appToken {
		if !call.post {
			return errResult("insecure_request")
		}
		// The app-level token is read from the Authorization header only.
		switch call.bearer {
		case "":
			return errResult("not_authed")
		case s.opts.AppToken:
		case s.opts.BotToken:
			return errResult("not_allowed_token_type")
		default:
			return errResult("invalid_auth")
		}
	} else {
		switch call.token() {
		case "":
			return errResult("not_authed")
		case s.opts.BotToken:
		case s.opts.AppToken:
			return errResult("not_allowed_token_type")
		default:
			return errResult("invalid_auth")
		}
	}
	return m.serve(s, call)
}

func (s *Server) writeResult(w http.ResponseWriter, res apiResult) {
	if res.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(res.retryAfter))
	}
	if res.body == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(res.status)
		_, _ = io.WriteString(w, res.text)
		return
	}
	body, err := json.Marshal(res.body)
	if err != nil {
		s.opts.Logf("slackemu: marshalling an answer: %v", err)
		http.Error(w, "emulator bug: unmarshallable answer", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(res.status)
	_, _ = w.Write(body)
}

func (s *Server) authTest(*apiCall) apiResult {
	return okObject(
		field{"url", "https://emulator.slack.com/"},
		field{"team", "Slack Emulator"},
		field{"user", "kafkabot"},
		field{"team_id", s.opts.TeamID},
		field{"user_id", s.opts.BotUserID},
		field{"bot_id", botID},
		field{"is_enterprise_install", false},
	)
}

// messageContent is the text and blocks of a post or update request.
type messageContent struct {
	text           string
	hasText        bool
	blocks         json.RawMessage // nil when absent or "[]"
	hasBlocks      bool
	hasAttachments bool
}

func (mc messageContent) empty() bool {
	return mc.text == "" && mc.blocks == nil && !mc.hasAttachments
}

// readContent reads text, blocks and attachments, answering Slack's errors for bad blocks.
// postContentError is what Slack answers a post whose content is
// malformed (bad, from readContent) or empty; nil when it may be posted.
func postContentError(mc messageContent, bad *apiResult) *apiResult {
	if bad != nil {
		return bad
	}
	if mc.empty() {
		res := errResult("no_text")
		return &res
	}
	return nil
}

func readContent(form url.Values) (messageContent, *apiResult) {
	var mc messageContent
	mc.text, mc.hasText = form.Get("text"), form.Has("text")
	if form.Has("blocks") {
		mc.hasBlocks = true
		blocks, violations, err := parseBlocks(form.Get("blocks"))
		if err != nil {
			res := errResult("invalid_blocks_format")
			return mc, &res
		}
		if len(violations) > 0 {
			res := invalidBlocksResult(violations)
			return mc, &res
		}
		mc.blocks = blocks
	}
	if form.Has("attachments") {
		var attachments []json.RawMessage
		if err := json.Unmarshal([]byte(form.Get("attachments")), &attachments); err != nil {
			res := errResult("invalid_attachments")
			return mc, &res
		}
		if len(attachments) > maxMessageAttachment {
			res := errResult("too_many_attachments")
			return mc, &res
		}
		mc.hasAttachments = len(attachments) > 0
	}
	return mc, nil
}

// checkPostTargetLocked answers channel_not_found / not_in_channel for a channel the bot cannot post in.
func (s *Server) checkPostTargetLocked(channel string) *apiResult {
	if !s.channels.exists(channel) {
		res := errResult("channel_not_found")
		return &res
	}
	if s.channels.notInside[channel] {
		res := errResult("not_in_channel")
		return &res
	}
	return nil
}

// truncateRunes cuts s to at most n characters, as Slack truncates long message text.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// messageObject renders a stored message the way Web API answers and interaction payloads show it.
func (s *Server) messageObject(m *Message, withTS bool) object {
	o := object{}
	if m.User == s.opts.BotUserID {
		o = append(o, field{"bot_id", botID})
	}
	o = append(o, field{"type", "message"})
	text := m.Text
	if text == "" && m.Blocks != nil {
		text = "This content can't be displayed."
	}
	o = append(o, field{"text", text}, field{"user", m.User})
	if withTS {
		o = append(o, field{"ts", m.TS})
	}
	o = append(o, field{"team", s.opts.TeamID})
	if m.Blocks != nil {
		o = append(o, field{"blocks", m.Blocks})
	}
	if m.ThreadTS != "" {
		o = append(o, field{"thread_ts", m.ThreadTS})
		if parent, ok := s.store.get(m.Channel, m.ThreadTS); ok {
			o = append(o, field{"parent_user_id", parent.User})
		}
		if m.Broadcast {
			o = append(o, field{"subtype", "thread_broadcast"})
		}
	}
	return o
}

func (s *Server) chatPostMessage(call *apiCall) apiResult {
	channel := call.form.Get("channel")
	mc, bad := readContent(call.form)
	s.mu.Lock()
	defer s.mu.Unlock()
	if res := s.checkPostTargetLocked(channel); res != nil {
		return *res
	}
	if res := postContentError(mc, bad); res != nil {
		return *res
	}
	m := &Message{
		Channel: channel,
		TS:      s.clock.next(),
		User:    s.opts.BotUserID,
		Text:    truncateRunes(mc.text, maxPostTextLen),
		Blocks:  fillGeneratedIDs(mc.blocks),
	}
	if thread := call.form.Get("thread_ts"); thread != "" {
		m.ThreadTS = s.store.threadParent(channel, thread)
		m.Broadcast = call.form.Get("reply_broadcast") == "true"
		if _, ok := s.store.get(channel, m.ThreadTS); !ok {
			s.opts.Logf("slackemu: reply to %s in %s, which does not exist (Slack accepts it)", m.ThreadTS, channel)
		}
	}
	s.store.add(m)
	s.notifyLocked()
	return okObject(field{"channel", channel}, field{"ts", m.TS}, field{"message", s.messageObject(m, true)})
}

func (s *Server) chatUpdate(call *apiCall) apiResult {
	channel, ts := call.form.Get("channel"), call.form.Get("ts")
	mc, bad := readContent(call.form)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.channels.exists(channel) {
		return errResult("channel_not_found")
	}
	m, ok := s.store.get(channel, ts)
	if !ok {
		return errResult("message_not_found")
	}
	if m.User != s.opts.BotUserID {
		return errResult("cant_update_message")
	}
	if bad != nil {
		return *bad
	}
	if len([]rune(mc.text)) > maxUpdateTextLen {
		return errResult("msg_too_long")
	}
	if !mc.hasText && !mc.hasBlocks && !mc.hasAttachments {
		return errResult("no_text")
	}
	if mc.hasText {
		m.Text = mc.text
	}
	if mc.hasBlocks { // "[]" clears; an absent field keeps the blocks
		m.Blocks = fillGeneratedIDs(mc.blocks)
	}
	m.Updated++
	s.notifyLocked()
	return okObject(
		field{"channel", channel},
		field{"ts", m.TS},
		field{"text", m.Text},
		field{"message", s.messageObject(m, false)},
	)
}

func (s *Server) chatPostEphemeral(call *apiCall) apiResult {
	channel, user := call.form.Get("channel"), call.form.Get("user")
	mc, bad := readContent(call.form)
	s.mu.Lock()
	defer s.mu.Unlock()
	if res := s.checkPostTargetLocked(channel); res != nil {
		return *res
	}
	if user == "" {
		return errResult("user_not_in_channel")
	}
	if res := postContentError(mc, bad); res != nil {
		return *res
	}
	m := &Message{
		Channel:   channel,
		TS:        s.clock.next(),
		ThreadTS:  call.form.Get("thread_ts"),
		User:      s.opts.BotUserID,
		Text:      mc.text,
		Blocks:    mc.blocks,
		Ephemeral: true,
		ForUser:   user,
	}
	s.store.add(m)
	s.notifyLocked()
	return okObject(field{"message_ts", m.TS})
}

func (s *Server) conversationsInfo(call *apiCall) apiResult {
	channel := call.form.Get("channel")
	s.mu.Lock()
	defer s.mu.Unlock()
	if channel == "" {
		return errResult("channel_not_found")
	}
	kind := channel[0]
	// Slack checks the token's scope before it looks the channel up.
	if need := map[byte]string{'C': "channels:read", 'G': "groups:read"}[kind]; need != "" && !slices.Contains(s.opts.Scopes, need) {
		return errResult("missing_scope")
	}
	if !s.channels.exists(channel) {
		return errResult("channel_not_found")
	}
	return okObject(field{"channel", object{
		{"id", channel},
		{"name", s.channels.name(channel)},
		{"is_channel", kind == 'C'},
		{"is_group", kind == 'G'},
		{"is_im", kind == 'D'},
		{"is_private", kind != 'C'},
		{"is_archived", false},
		{"is_member", !s.channels.notInside[channel]},
	}})
}

// ErrNotFound is wrapped by SendClick when the message or the action does not exist.
var ErrNotFound = errors.New("not found")
