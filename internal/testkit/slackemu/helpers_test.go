// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testAppToken = "xapp-placeholder-secret-app-token"
	testBotToken = "xoxb-secret-bot-token"
	testChannel  = "C0TESTCHAN"
	testUser     = "U0TESTUSER"
	// testTimeout bounds every wait; tests finish far sooner unless something is broken.
	testTimeout = 10 * time.Second
)

// newTestServer starts an emulator with short intervals and closes it at the end of the test.
func newTestServer(t *testing.T, mutate ...func(*Options)) *Server {
	t.Helper()
	opts := Options{
		AppToken:     testAppToken,
		BotToken:     testBotToken,
		PingInterval: 50 * time.Millisecond,
		AckDeadline:  2 * time.Second,
		Logf:         t.Logf,
	}
	for _, m := range mutate {
		m(&opts)
	}
	emu, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(emu.Close)
	return emu
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// botClient is the real slack-go socketmode client running against the emulator.
type botClient struct {
	*socketmode.Client
	events chan socketmode.Event
	runErr chan error
}

// startClient runs a socketmode client until the end of the test, forwarding its events.
func startClient(t *testing.T, emu *Server, appToken string, opts ...socketmode.Option) *botClient {
	t.Helper()
	api := slack.New(testBotToken, slack.OptionAPIURL(emu.APIURL()), slack.OptionAppLevelToken(appToken))
	sm := socketmode.New(api, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	bc := &botClient{Client: sm, events: make(chan socketmode.Event, 100), runErr: make(chan error, 1)}
	var wg sync.WaitGroup
	wg.Go(func() { bc.runErr <- sm.RunContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case evt := <-sm.Events:
				select {
				case bc.events <- evt:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return bc
}

// waitEvent returns the next event of type typ, skipping others.
func (bc *botClient) waitEvent(t *testing.T, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		select {
		case evt := <-bc.events:
			if evt.Type == typ {
				return evt
			}
		case <-timeout:
			t.Fatalf("no %s event within %s", typ, testTimeout)
			return socketmode.Event{}
		}
	}
}

// connectedClient starts a client and waits for its hello.
func connectedClient(t *testing.T, emu *Server, opts ...socketmode.Option) *botClient {
	t.Helper()
	bc := startClient(t, emu, testAppToken, opts...)
	bc.waitEvent(t, socketmode.EventTypeHello)
	return bc
}

// openURL calls apps.connections.open like slack-go does and returns the WebSocket URL.
func openURL(t *testing.T, emu *Server) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, emu.APIURL()+"apps.connections.open", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAppToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("apps.connections.open: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		OK    bool   `json:"ok"`
		URL   string `json:"url"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || !body.OK {
		t.Fatalf("apps.connections.open: ok=%v error=%q decode=%v", body.OK, body.Error, err)
	}
	return body.URL
}

// dialRaw opens a bare WebSocket connection (no slack-go), the way slack-go dials.
func dialRaw(t *testing.T, emu *Server) *websocket.Conn {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial(openURL(t, emu), http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatalf("dialing the emulator: %v", err)
	}
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// readFrame reads one JSON frame from a raw connection.
func readFrame(t *testing.T, conn *websocket.Conn) map[string]any {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(testTimeout))
	_, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	var frame map[string]any
	if err := json.Unmarshal(data, &frame); err != nil {
		t.Fatalf("frame %s is not JSON: %v", data, err)
	}
	return frame
}

// postForm calls a Web API method with a form body, as slack-go does, and decodes the JSON answer.
func postForm(t *testing.T, emu *Server, method string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(emu.APIURL()+method, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body map[string]any
	if resp.Header.Get("Content-Type") == "application/json; charset=utf-8" {
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("%s: decoding the answer: %v", method, err)
		}
	}
	return resp.StatusCode, body
}

// waitFor fails the test when cond does not become true.
func waitFor(t *testing.T, emu *Server, what string, cond func() bool) {
	t.Helper()
	if err := emu.WaitFor(testContext(t), cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// apiClient is a slack-go Web API client (no socket) for the emulator.
func apiClient(emu *Server) *slack.Client {
	return slack.New(testBotToken, slack.OptionAPIURL(emu.APIURL()))
}
