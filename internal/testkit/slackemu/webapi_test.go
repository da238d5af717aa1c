// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func TestFaultsReachSlackGoAsItsErrorTypes(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		check func(t *testing.T, err error)
	}{
		{"429 with Retry-After", Fault{Status: 429, RetryAfter: 7}, func(t *testing.T, err error) {
			var rl *slack.RateLimitedError
			if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
				t.Errorf("error = %#v, want *slack.RateLimitedError{7s}", err)
			}
		}},
		{"slack error", Fault{Error: "channel_not_found"}, func(t *testing.T, err error) {
			var se slack.SlackErrorResponse
			if !errors.As(err, &se) || se.Err != "channel_not_found" {
				t.Errorf("error = %#v, want SlackErrorResponse channel_not_found", err)
			}
		}},
		{"500", Fault{Status: 500}, func(t *testing.T, err error) {
			var sc slack.StatusCodeError
			if !errors.As(err, &sc) || sc.Code != 500 {
				t.Errorf("error = %#v, want StatusCodeError 500", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := newTestServer(t)
			api := apiClient(emu)
			emu.InjectFault("chat.postMessage", tt.fault)
			_, _, err := api.PostMessage(testChannel, slack.MsgOptionText("hi", false))
			tt.check(t, err)
			if _, _, err := api.PostMessage(testChannel, slack.MsgOptionText("hi", false)); err != nil {
				t.Errorf("call after the fault: %v", err)
			}
			if got := emu.Calls("chat.postMessage"); got != 2 {
				t.Errorf("Calls = %d, want 2", got)
			}
			if got := len(emu.Messages(testChannel)); got != 1 {
				t.Errorf("messages stored = %d, want 1 (the failed call stores nothing)", got)
			}
		})
	}
}

func TestFaultTimesAndRawRetryAfterHeader(t *testing.T) {
	emu := newTestServer(t)
	emu.InjectFault("chat.update", Fault{Status: 429, RetryAfter: 3, Times: 2})
	for i := range 3 {
		resp, err := http.PostForm(emu.APIURL()+"chat.update", url.Values{"token": {testBotToken}})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		want, wantHeader := http.StatusTooManyRequests, "3"
		if i == 2 {
			want, wantHeader = http.StatusOK, ""
		}
		if resp.StatusCode != want || resp.Header.Get("Retry-After") != wantHeader {
			t.Errorf("call %d: status %d Retry-After %q, want %d %q", i, resp.StatusCode, resp.Header.Get("Retry-After"), want, wantHeader)
		}
	}
}

func TestConnectionsOpenFaultIsRetriedBySlackGo(t *testing.T) {
	emu := newTestServer(t)
	emu.InjectFault("apps.connections.open", Fault{Error: "internal_error"})
	connectedClient(t, emu)
	if got := emu.Calls("apps.connections.open"); got != 2 {
		t.Errorf("apps.connections.open calls = %d, want 2 (one failed, one retried)", got)
	}
}

func TestWebAPIErrors(t *testing.T) {
	emu := newTestServer(t)
	emu.SetChannelMissing("C0GONE")
	emu.SetNotInChannel("C0OUTSIDE")
	api := apiClient(emu)
	_, parent, err := api.PostMessage(testChannel, slack.MsgOptionText("parent", false))
	if err != nil {
		t.Fatal(err)
	}
	humanTS := emu.PostUserMessage(testChannel, "", testUser, "a human wrote this")

	tests := []struct {
		name   string
		method string
		form   url.Values
		want   string
	}{
		{"missing token", "chat.postMessage", url.Values{"channel": {testChannel}, "text": {"x"}}, "not_authed"},
		{"wrong token", "chat.postMessage", url.Values{"token": {"xoxb-wrong"}, "channel": {testChannel}, "text": {"x"}}, "invalid_auth"},
		{"app token on a bot method", "chat.postMessage", url.Values{"token": {testAppToken}, "channel": {testChannel}, "text": {"x"}}, "not_allowed_token_type"},
		{"missing channel", "chat.postMessage", url.Values{"channel": {"C0GONE"}, "text": {"x"}}, "channel_not_found"},
		{"user id is not a channel", "chat.postMessage", url.Values{"channel": {"U123"}, "text": {"x"}}, "channel_not_found"},
		{"not in channel", "chat.postMessage", url.Values{"channel": {"C0OUTSIDE"}, "text": {"x"}}, "not_in_channel"},
		{"no text", "chat.postMessage", url.Values{"channel": {testChannel}}, "no_text"},
		{"blocks not JSON", "chat.postMessage", url.Values{"channel": {testChannel}, "blocks": {"{nope"}}, "invalid_blocks_format"},
		{"update unknown ts", "chat.update", url.Values{"channel": {testChannel}, "ts": {"1.000001"}, "text": {"x"}}, "message_not_found"},
		{"update human message", "chat.update", url.Values{"channel": {testChannel}, "ts": {humanTS}, "text": {"x"}}, "cant_update_message"},
		{"update too long", "chat.update", url.Values{"channel": {testChannel}, "ts": {parent}, "text": {strings.Repeat("é", 4001)}}, "msg_too_long"},
		{"update nothing", "chat.update", url.Values{"channel": {testChannel}, "ts": {parent}}, "no_text"},
		{"ephemeral without user", "chat.postEphemeral", url.Values{"channel": {testChannel}, "text": {"x"}}, "user_not_in_channel"},
		{"conversations.info missing", "conversations.info", url.Values{"channel": {"C0GONE"}}, "channel_not_found"},
		{"unknown method", "chat.delete", url.Values{"channel": {testChannel}, "ts": {parent}}, "unknown_method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.form.Has("token") && tt.name != "missing token" {
				tt.form.Set("token", testBotToken)
			}
			status, body := postForm(t, emu, tt.method, tt.form)
			if status != http.StatusOK || body["ok"] != false || body["error"] != tt.want {
				t.Errorf("HTTP %d %v, want 200 ok:false error %s", status, body, tt.want)
			}
		})
	}
	if m, _ := emu.Message(testChannel, parent); m.Text != "parent" || m.Updated != 0 {
		t.Errorf("failed updates changed the message: %+v", m)
	}
}

func TestConnectionsOpenAuth(t *testing.T) {
	emu := newTestServer(t)
	tests := []struct {
		name, method, auth, want string
	}{
		{"no header", http.MethodPost, "", "not_authed"},
		{"bot token", http.MethodPost, "Bearer " + testBotToken, "not_allowed_token_type"},
		{"wrong token", http.MethodPost, "Bearer xapp-1-wrong", "invalid_auth"},
		{"GET", http.MethodGet, "Bearer " + testAppToken, "insecure_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, emu.APIURL()+"apps.connections.open", nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != http.StatusOK || body["error"] != tt.want {
				t.Errorf("HTTP %d %v, want error %s", resp.StatusCode, body, tt.want)
			}
		})
	}
}

var tsPattern = regexp.MustCompile(`^\d{10}\.\d{6}$`)

func TestPostThreadsBroadcastAndEphemeral(t *testing.T) {
	emu := newTestServer(t)
	api := apiClient(emu)
	_, parent, err := api.PostMessage(testChannel, slack.MsgOptionText("parent", false))
	if err != nil {
		t.Fatal(err)
	}
	_, reply, msg, err := api.PostMessageWithResponse(testChannel, slack.MsgOptionText("step 1", false), slack.MsgOptionTS(parent))
	if err != nil {
		t.Fatal(err)
	}
	if msg.ThreadTimestamp != parent || msg.Timestamp != reply || msg.BotID == "" {
		t.Errorf("reply message = ts %q thread_ts %q bot_id %q", msg.Timestamp, msg.ThreadTimestamp, msg.BotID)
	}
	// Replying to a reply joins the parent's thread.
	_, nested, err := api.PostMessage(testChannel, slack.MsgOptionText("step 2", false), slack.MsgOptionTS(reply), slack.MsgOptionBroadcast())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.PostEphemeral(testChannel, testUser, slack.MsgOptionText("only you", false)); err != nil {
		t.Fatal(err)
	}

	for _, ts := range []string{parent, reply, nested} {
		if !tsPattern.MatchString(ts) {
			t.Errorf("ts %q is not shaped like Slack's", ts)
		}
	}
	if !(parent < reply && reply < nested) {
		t.Errorf("ts values not increasing: %s %s %s", parent, reply, nested)
	}
	var threadTexts []string
	for _, m := range emu.Thread(testChannel, parent) {
		threadTexts = append(threadTexts, m.Text)
	}
	if got := strings.Join(threadTexts, ","); got != "step 1,step 2" {
		t.Errorf("thread = %s, want step 1,step 2", got)
	}
	var channelTexts []string
	for _, m := range emu.Messages(testChannel) {
		channelTexts = append(channelTexts, m.Text)
	}
	if got := strings.Join(channelTexts, ","); got != "parent,step 2" {
		t.Errorf("channel = %s, want parent and the broadcast reply", got)
	}
	eph := emu.Ephemerals(testChannel, testUser)
	if len(eph) != 1 || eph[0].Text != "only you" || !eph[0].Ephemeral || eph[0].ForUser != testUser {
		t.Errorf("ephemerals = %+v", eph)
	}
	if len(emu.Ephemerals(testChannel, "U0SOMEONE")) != 0 {
		t.Error("another user sees the ephemeral message")
	}
}

func TestUpdateKeepsOrClearsBlocks(t *testing.T) {
	emu := newTestServer(t)
	api := apiClient(emu)
	_, ts, err := api.PostMessage(testChannel, slack.MsgOptionText("v1", false), slack.MsgOptionBlocks(approvalBlocks("x")...))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessage(testChannel, ts, slack.MsgOptionText("v2", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ := emu.Message(testChannel, ts); m.Text != "v2" || m.Blocks == nil || m.Updated != 1 {
		t.Errorf("after a text-only update: %+v, want text v2 and the blocks kept", m)
	}
	if _, _, text, err := api.UpdateMessage(testChannel, ts, slack.MsgOptionText("v3", false), slack.MsgOptionBlocks()); err != nil || text != "v3" {
		t.Fatalf("update: %q %v", text, err)
	}
	if m, _ := emu.Message(testChannel, ts); m.Text != "v3" || m.Blocks != nil || m.Updated != 2 {
		t.Errorf("after blocks=[]: %+v, want the blocks cleared", m)
	}
}

func TestInvalidBlocksThroughSlackGo(t *testing.T) {
	emu := newTestServer(t)
	api := apiClient(emu)
	blocks := make([]slack.Block, 51)
	for i := range blocks {
		blocks[i] = slack.NewDividerBlock()
	}
	_, _, err := api.PostMessage(testChannel, slack.MsgOptionText("too many", false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" {
		t.Fatalf("error = %#v, want invalid_blocks", err)
	}
	want := "[ERROR] no more than 50 items allowed [json-pointer:/blocks]"
	if len(se.ResponseMetadata.Messages) != 1 || se.ResponseMetadata.Messages[0] != want {
		t.Errorf("response_metadata.messages = %q, want [%q]", se.ResponseMetadata.Messages, want)
	}
	if len(emu.Messages(testChannel)) != 0 {
		t.Error("an invalid message was stored")
	}
	if _, _, err := api.PostMessage(testChannel, slack.MsgOptionBlocks(blocks[:50]...)); err != nil {
		t.Errorf("50 blocks refused: %v", err)
	}
}

func TestConversationsInfoAndAuthTest(t *testing.T) {
	emu := newTestServer(t)
	emu.SetChannelName(testChannel, "kafka-ops")
	emu.SetNotInChannel("G0PRIVATE")
	api := apiClient(emu)
	ch, err := api.GetConversationInfo(&slack.GetConversationInfoInput{ChannelID: testChannel})
	if err != nil {
		t.Fatal(err)
	}
	if ch.ID != testChannel || ch.Name != "kafka-ops" || !ch.IsChannel || !ch.IsMember {
		t.Errorf("channel = %+v", ch.GroupConversation)
	}
	private, err := api.GetConversationInfo(&slack.GetConversationInfoInput{ChannelID: "G0PRIVATE"})
	if err != nil {
		t.Fatal(err)
	}
	if !private.IsPrivate || private.IsMember {
		t.Errorf("private channel: is_private %v is_member %v, want true false", private.IsPrivate, private.IsMember)
	}
	auth, err := api.AuthTest()
	if err != nil {
		t.Fatal(err)
	}
	if auth.UserID != DefaultBotUserID || auth.TeamID != DefaultTeamID || auth.BotID == "" {
		t.Errorf("auth.test = %+v", auth)
	}
}

func TestRequestsRedactTokens(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)
	if _, _, err := bc.PostMessage(testChannel, slack.MsgOptionText("hello", false)); err != nil {
		t.Fatal(err)
	}
	reqs := emu.Requests()
	var methods []string
	for _, r := range reqs {
		methods = append(methods, r.Method)
		dump := fmt.Sprintf("%+v", r)
		if strings.Contains(dump, testBotToken) || strings.Contains(dump, testAppToken) {
			t.Errorf("request record leaks a token: %s", dump)
		}
	}
	if got := strings.Join(methods, ","); got != "apps.connections.open,chat.postMessage" {
		t.Errorf("methods = %s", got)
	}
	last := reqs[len(reqs)-1]
	if last.Form.Get("token") != redacted || last.Form.Get("text") != "hello" || last.Status != 200 || last.Error != "" {
		t.Errorf("recorded request = %+v", last)
	}
}

func TestJSONBodyWithBearerToken(t *testing.T) {
	emu := newTestServer(t)
	body := `{"channel":"` + testChannel + `","text":"json","blocks":[{"type":"divider"}]}`
	req, _ := http.NewRequest(http.MethodPost, emu.APIURL()+"chat.postMessage", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+testBotToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	msgs := emu.Messages(testChannel)
	if len(msgs) != 1 || msgs[0].Text != "json" || string(msgs[0].Blocks) == "" {
		t.Errorf("messages = %+v, want the JSON-posted message with its blocks", msgs)
	}
}

func TestResponseURL(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)
	_, ts, err := bc.PostMessage(testChannel, slack.MsgOptionText("old", false), slack.MsgOptionBlocks(approvalBlocks("x")...))
	if err != nil {
		t.Fatal(err)
	}
	cb := clickAndReceive(t, emu, bc, Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "approve"})

	if _, _, err := bc.PostMessage("", slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("replaced", false)); err != nil {
		t.Fatalf("replace_original: %v", err)
	}
	if m, _ := emu.Message(testChannel, ts); m.Text != "replaced" || m.Blocks != nil || m.Updated != 1 {
		t.Errorf("after replace_original: %+v", m)
	}
	if _, _, err := bc.PostMessage("", slack.MsgOptionResponseURL(cb.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("just you", false)); err != nil {
		t.Fatalf("ephemeral response: %v", err)
	}
	if eph := emu.Ephemerals(testChannel, testUser); len(eph) != 1 || eph[0].Text != "just you" {
		t.Errorf("ephemerals = %+v", eph)
	}
	for range 2 {
		if _, _, err := bc.PostMessage("", slack.MsgOptionResponseURL(cb.ResponseURL, slack.ResponseTypeInChannel), slack.MsgOptionText("all", false)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(emu.Messages(testChannel)); got != 3 {
		t.Errorf("channel messages = %d, want the original and two in_channel responses", got)
	}
	if _, _, err := bc.PostMessage("", slack.MsgOptionDeleteOriginal(cb.ResponseURL)); err != nil {
		t.Fatalf("delete_original: %v", err)
	}
	if _, ok := emu.Message(testChannel, ts); ok || len(emu.Messages(testChannel)) != 2 {
		t.Errorf("the original message is still stored after delete_original")
	}
	if _, _, err := bc.PostMessage("", slack.MsgOptionResponseURL(cb.ResponseURL, slack.ResponseTypeInChannel), slack.MsgOptionText("sixth", false)); err == nil {
		t.Error("a sixth use of the response_url succeeded")
	}
	if got := emu.Calls("response_url"); got != 6 {
		t.Errorf("response_url calls = %d, want 6", got)
	}
}

func TestLongTextIsTruncatedOnPost(t *testing.T) {
	emu := newTestServer(t)
	_, ts, err := apiClient(emu).PostMessage(testChannel, slack.MsgOptionText(strings.Repeat("ü", maxPostTextLen+5), false))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := emu.Message(testChannel, ts); len([]rune(m.Text)) != maxPostTextLen {
		t.Errorf("stored %d characters, want %d (Slack truncates, it does not refuse)", len([]rune(m.Text)), maxPostTextLen)
	}
}
