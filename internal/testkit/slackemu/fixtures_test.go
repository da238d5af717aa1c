// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// loadFixture decodes a JSON file from testdata.
func loadFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return v
}

// sameKeys compares the key sets of two JSON objects at the given paths ("" is the root, "payload.user"
// a nested object, "payload.actions.0" an array element).
func sameKeys(t *testing.T, what string, got, want map[string]any, paths ...string) {
	t.Helper()
	for _, p := range paths {
		g, w := keysAt(t, got, p), keysAt(t, want, p)
		if !slices.Equal(g, w) {
			t.Errorf("%s: keys at %q = %v, want %v (as in the real payload)", what, p, g, w)
		}
	}
}

func keysAt(t *testing.T, v map[string]any, path string) []string {
	t.Helper()
	var cur any = v
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[part]
			case []any:
				if part != "0" || len(c) == 0 {
					t.Fatalf("path %q: only element 0 of a non-empty array is supported", path)
				}
				cur = c[0]
			default:
				t.Fatalf("path %q: %T is not an object", path, cur)
			}
		}
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("path %q: %T is not an object", path, cur)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestGeneratedFramesHaveTheKeysOfRealOnes(t *testing.T) {
	emu := newTestServer(t)
	conn := dialRaw(t, emu)
	sameKeys(t, "hello", readFrame(t, conn), loadFixture(t, "socket.hello.slack-go-test.json"),
		"", "debug_info", "connection_info")

	ctx := testContext(t)
	if _, err := emu.SendSlashCommand(ctx, SlashCommand{ChannelID: testChannel, UserID: testUser, Text: "status"}); err != nil {
		t.Fatal(err)
	}
	slash := readFrame(t, conn)
	sameKeys(t, "slash_commands envelope", slash, loadFixture(t, "socket.envelope.slash_commands.slack-go-issue-1265.json"),
		"", "payload")
	if slash["payload"].(map[string]any)["is_enterprise_install"] != "false" {
		t.Error(`is_enterprise_install is not the string "false" of the real payload`)
	}

	button := slack.NewButtonBlockElement("a", "underlying", slack.NewTextBlockObject(slack.PlainTextType, "Click Me!", true, false))
	blocks, err := json.Marshal([]slack.Block{slack.NewActionBlock("b", button)})
	if err != nil {
		t.Fatal(err)
	}
	_, answer := postForm(t, emu, "chat.postMessage", url.Values{
		"token": {testBotToken}, "channel": {testChannel}, "blocks": {string(blocks)},
	})
	ts, _ := answer["ts"].(string)
	if _, err := emu.SendClick(ctx, Click{ChannelID: testChannel, UserID: testUser, MessageTS: ts, ActionID: "a"}); err != nil {
		t.Fatal(err)
	}
	click := readFrame(t, conn)
	sameKeys(t, "block_actions envelope", click, loadFixture(t, "socket.envelope.interactive.block_actions.java-sdk-test.json"),
		"", "payload", "payload.user", "payload.container", "payload.team", "payload.channel", "payload.message",
		"payload.message.blocks.0", "payload.message.blocks.0.elements.0", "payload.actions.0")
	if text := click["payload"].(map[string]any)["message"].(map[string]any)["text"]; text != "This content can't be displayed." {
		t.Errorf("blocks-only message text = %q, want Slack's fallback", text)
	}

	emu.Disconnect("refresh_requested")
	sameKeys(t, "disconnect", readFrame(t, conn), loadFixture(t, "socket.disconnect.refresh_requested.docs.json"),
		"", "debug_info")
}

func TestTooManyWebsocketsHasTheKeysOfTheRealOne(t *testing.T) {
	emu := newTestServer(t)
	for range MaxConnections {
		readFrame(t, dialRaw(t, emu))
	}
	sameKeys(t, "too_many_websockets", readFrame(t, dialRaw(t, emu)),
		loadFixture(t, "socket.disconnect.too_many_websockets.bolt-js-issue-2238.json"), "", "debug_info")
}

func TestAckFormatWrittenBySlackGoIsUnderstood(t *testing.T) {
	emu := newTestServer(t)
	conn := dialRaw(t, emu)
	readFrame(t, conn)
	id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser})
	if err != nil {
		t.Fatal(err)
	}
	readFrame(t, conn)
	// The captured frame, with its envelope_id swapped for the one just sent.
	captured := loadFixture(t, "socket.ack.slash_commands.slack-go-capture.json")
	captured["envelope_id"] = id
	frame, _ := json.Marshal(captured)
	if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.WaitAck(testContext(t), id); err != nil {
		t.Fatal(err)
	}
	eph := emu.Ephemerals(testChannel, testUser)
	if len(eph) != 1 || eph[0].Text != "working on /randorilke" {
		t.Errorf("ephemerals = %+v, want the ack's text", eph)
	}
}

func TestWebAnswersHaveTheKeysOfRealOnes(t *testing.T) {
	emu := newTestServer(t)
	_, posted := postForm(t, emu, "chat.postMessage", url.Values{"token": {testBotToken}, "channel": {testChannel}, "text": {"hi"}})
	sameKeys(t, "chat.postMessage", posted, loadFixture(t, "web.chat.postMessage.response.docs.json"), "")

	_, updated := postForm(t, emu, "chat.update", url.Values{
		"token": {testBotToken}, "channel": {testChannel}, "ts": {posted["ts"].(string)}, "text": {"hi again"},
	})
	sameKeys(t, "chat.update", updated, loadFixture(t, "web.chat.update.response.docs.json"), "")

	long := `[{"type":"section","text":{"type":"mrkdwn","text":"` + strings.Repeat("x", 3001) + `"}}]`
	_, invalid := postForm(t, emu, "chat.postMessage", url.Values{"token": {testBotToken}, "channel": {testChannel}, "blocks": {long}})
	real := loadFixture(t, "web.error.invalid_blocks.real-log.transliterated.json")
	sameKeys(t, "invalid_blocks", invalid, real, "", "response_metadata")
	gotJSON, _ := json.Marshal(invalid["errors"])
	wantJSON, _ := json.Marshal(real["errors"])
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("errors = %s, want the real answer %s", gotJSON, wantJSON)
	}
}
