// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

func TestHelloReachesSlackGo(t *testing.T) {
	emu := newTestServer(t)
	bc := startClient(t, emu, testAppToken)

	hello := bc.waitEvent(t, socketmode.EventTypeHello)
	if hello.Request == nil {
		t.Fatal("hello event without its request")
	}
	if got := hello.Request.NumConnections; got != 1 {
		t.Errorf("num_connections = %d, want 1", got)
	}
	if got := hello.Request.ConnectionInfo.AppID; got != DefaultAppID {
		t.Errorf("connection_info.app_id = %q, want %q", got, DefaultAppID)
	}
	if hello.Request.DebugInfo.Host == "" || hello.Request.DebugInfo.ApproximateConnectionTime == 0 {
		t.Errorf("debug_info incomplete: %+v", hello.Request.DebugInfo)
	}
	if got := emu.ConnectionsOpened(); got != 1 {
		t.Errorf("ConnectionsOpened = %d, want 1", got)
	}
	if got := emu.OpenConnections(); got != 1 {
		t.Errorf("OpenConnections = %d, want 1", got)
	}
}

func TestSlashCommandAckPayloadIsShown(t *testing.T) {
	tests := []struct {
		name          string
		payload       any // nil: Ack without payload
		wantEphemeral int
		wantInChannel int
	}{
		{name: "no payload", payload: nil},
		{name: "empty object", payload: map[string]any{}},
		{name: "ephemeral by default", payload: map[string]any{"text": "working on it"}, wantEphemeral: 1},
		{name: "explicit ephemeral", payload: map[string]any{"response_type": "ephemeral", "text": "x"}, wantEphemeral: 1},
		{name: "in_channel", payload: map[string]any{"response_type": "in_channel", "text": "everyone sees this"}, wantInChannel: 1},
		{name: "blocks", payload: map[string]any{"blocks": []any{map[string]any{
			"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "Book of Hours"}}}}, wantEphemeral: 1},
	}
	emu := newTestServer(t)
	bc := connectedClient(t, emu)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			channel := testChannel + string(rune('A'+i))
			id, err := emu.SendSlashCommand(testContext(t), SlashCommand{
				ChannelID: channel, ChannelName: "kafka-ops", UserID: testUser, UserName: "alice",
				Text: "diagnose broker-0",
			})
			if err != nil {
				t.Fatalf("SendSlashCommand: %v", err)
			}
			evt := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
			cmd, ok := evt.Data.(slack.SlashCommand)
			if !ok {
				t.Fatalf("event data is %T, want slack.SlashCommand", evt.Data)
			}
			want := slack.SlashCommand{Command: "/kafka", Text: "diagnose broker-0", ChannelID: channel,
				ChannelName: "kafka-ops", UserID: testUser, UserName: "alice", TeamID: DefaultTeamID, APIAppID: DefaultAppID}
			if cmd.Command != want.Command || cmd.Text != want.Text || cmd.ChannelID != want.ChannelID ||
				cmd.ChannelName != want.ChannelName || cmd.UserID != want.UserID || cmd.UserName != want.UserName ||
				cmd.TeamID != want.TeamID || cmd.APIAppID != want.APIAppID {
				t.Errorf("slash command = %+v, want fields of %+v", cmd, want)
			}
			if evt.Request.EnvelopeID != id || !evt.Request.AcceptsResponsePayload {
				t.Errorf("envelope id %q accepts_response_payload %v, want %q true",
					evt.Request.EnvelopeID, evt.Request.AcceptsResponsePayload, id)
			}
			if tt.payload == nil {
				err = bc.Ack(*evt.Request)
			} else {
				err = bc.Ack(*evt.Request, tt.payload)
			}
			if err != nil {
				t.Fatalf("Ack: %v", err)
			}
			ack, err := emu.WaitAck(testContext(t), id)
			if err != nil {
				t.Fatalf("WaitAck: %v", err)
			}
			if ack.Late || ack.Latency <= 0 || ack.EnvelopeID != id {
				t.Errorf("ack = %+v, want on time with a latency", ack)
			}
			if tt.payload != nil {
				wantPayload, _ := json.Marshal(tt.payload)
				if string(ack.Payload) != string(wantPayload) {
					t.Errorf("ack payload = %s, want %s", ack.Payload, wantPayload)
				}
			}
			if got := len(emu.Ephemerals(channel, testUser)); got != tt.wantEphemeral {
				t.Errorf("ephemerals = %d, want %d", got, tt.wantEphemeral)
			}
			if got := len(emu.Messages(channel)); got != tt.wantInChannel {
				t.Errorf("channel messages = %d, want %d", got, tt.wantInChannel)
			}
		})
	}
	if failures := emu.AckFailures(); len(failures) != 0 {
		t.Errorf("AckFailures = %q, want none", failures)
	}
}

func TestDisconnectMakesSlackGoReconnect(t *testing.T) {
	for _, reason := range []string{"warning", "refresh_requested", "link_disabled", "too_many_websockets"} {
		t.Run(reason, func(t *testing.T) {
			emu := newTestServer(t)
			bc := connectedClient(t, emu)

			emu.Disconnect(reason)
			waitFor(t, emu, "a second connection, the first closed", func() bool {
				return emu.ConnectionsOpened() == 2 && emu.OpenConnections() == 1
			})
			bc.waitEvent(t, socketmode.EventTypeHello)

			id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser, Text: "after"})
			if err != nil {
				t.Fatal(err)
			}
			evt := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
			if cmd := evt.Data.(slack.SlashCommand); cmd.Text != "after" {
				t.Errorf("command text = %q, want %q", cmd.Text, "after")
			}
			if err := bc.Ack(*evt.Request); err != nil {
				t.Fatal(err)
			}
			if _, err := emu.WaitAck(testContext(t), id); err != nil {
				t.Fatal(err)
			}
			if got := emu.Calls("apps.connections.open"); got != 2 {
				t.Errorf("apps.connections.open calls = %d, want 2", got)
			}
		})
	}
}

func TestEnvelopeSentRightAfterDisconnectWaitsForTheNewConnection(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)

	emu.Disconnect("refresh_requested")
	id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser, Text: "racing"})
	if err != nil {
		t.Fatal(err)
	}
	evt := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
	if evt.Request.EnvelopeID != id {
		t.Fatalf("envelope %q, want %q", evt.Request.EnvelopeID, id)
	}
	if got := emu.ConnectionsOpened(); got != 2 {
		t.Errorf("delivered with ConnectionsOpened = %d, want 2 (not on the draining connection)", got)
	}
}

func TestDropConnectionsMakesSlackGoReconnect(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)

	emu.DropConnections()
	waitFor(t, emu, "a reconnect", func() bool { return emu.ConnectionsOpened() == 2 && emu.OpenConnections() == 1 })

	if _, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser}); err != nil {
		t.Fatal(err)
	}
	bc.waitEvent(t, socketmode.EventTypeSlashCommand)
}

func TestEnvelopesQueuedUntilAConnectionOpens(t *testing.T) {
	emu := newTestServer(t)
	var ids []string
	for _, text := range []string{"first", "second"} {
		id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	bc := startClient(t, emu, testAppToken)
	for i, want := range []string{"first", "second"} {
		evt := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
		if cmd := evt.Data.(slack.SlashCommand); cmd.Text != want || evt.Request.EnvelopeID != ids[i] {
			t.Errorf("envelope %d: text %q id %q, want %q %q", i, cmd.Text, evt.Request.EnvelopeID, want, ids[i])
		}
	}
}

func TestMissingAndLateAcksAreRecorded(t *testing.T) {
	const deadline = 100 * time.Millisecond
	emu := newTestServer(t, func(o *Options) { o.AckDeadline = deadline })
	bc := connectedClient(t, emu)

	id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser})
	if err != nil {
		t.Fatal(err)
	}
	evt := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
	waitFor(t, emu, "a missing-ack failure", func() bool { return len(emu.AckFailures()) == 1 })
	if got := emu.AckFailures()[0]; !strings.Contains(got, id) || !strings.Contains(got, "not acknowledged within 100ms") {
		t.Errorf("failure = %q, want the envelope id and the deadline", got)
	}

	if err := bc.Ack(*evt.Request); err != nil {
		t.Fatal(err)
	}
	ack, err := emu.WaitAck(testContext(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if !ack.Late || ack.Latency <= deadline {
		t.Errorf("ack = %+v, want Late with latency over %s", ack, deadline)
	}
	failures := emu.AckFailures()
	if len(failures) != 1 || !strings.Contains(failures[0], "acknowledged") || !strings.Contains(failures[0], "after the 100ms deadline") {
		t.Errorf("AckFailures = %q, want one line turned into a late ack", failures)
	}
}

func TestRedeliverCarriesRetryFields(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)

	id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser})
	if err != nil {
		t.Fatal(err)
	}
	first := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
	if first.Request.RetryAttempt != 0 || first.Request.RetryReason != "" {
		t.Errorf("first delivery retry fields = %d %q, want 0 \"\"", first.Request.RetryAttempt, first.Request.RetryReason)
	}
	if err := emu.Redeliver(testContext(t), id); err != nil {
		t.Fatal(err)
	}
	second := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
	if second.Request.EnvelopeID != id || second.Request.RetryAttempt != 1 || second.Request.RetryReason != "timeout" {
		t.Errorf("redelivery = id %q attempt %d reason %q, want %q 1 timeout",
			second.Request.EnvelopeID, second.Request.RetryAttempt, second.Request.RetryReason, id)
	}
	if err := bc.Ack(*second.Request); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.WaitAck(testContext(t), id); err != nil {
		t.Fatal(err)
	}
	if err := emu.Redeliver(testContext(t), "no-such-envelope"); err == nil {
		t.Error("Redeliver of an unknown envelope succeeded")
	}
}

func TestRedeliverUnackedOption(t *testing.T) {
	emu := newTestServer(t, func(o *Options) {
		o.AckDeadline = 50 * time.Millisecond
		o.RedeliverUnacked = true
	})
	bc := connectedClient(t, emu)
	id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser})
	if err != nil {
		t.Fatal(err)
	}
	bc.waitEvent(t, socketmode.EventTypeSlashCommand) // not acked
	retry := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
	if retry.Request.EnvelopeID != id || retry.Request.RetryAttempt != 1 || retry.Request.RetryReason != "timeout" {
		t.Errorf("automatic retry = %+v, want attempt 1 of %s", retry.Request, id)
	}
	if err := bc.Ack(*retry.Request); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.WaitAck(testContext(t), id); err != nil {
		t.Fatal(err)
	}
}

func TestWrongAppTokenStopsSlackGo(t *testing.T) {
	tests := []struct {
		name, token, want string
	}{
		{"wrong token", "xapp-1-wrong", "invalid_auth"},
		{"missing token", "", "not_authed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := newTestServer(t)
			bc := startClient(t, emu, tt.token)
			select {
			case err := <-bc.runErr:
				if err == nil || err.Error() != tt.want {
					t.Errorf("RunContext error = %v, want %s", err, tt.want)
				}
			case <-time.After(testTimeout):
				t.Fatal("RunContext did not return")
			}
			if got := emu.ConnectionsOpened(); got != 0 {
				t.Errorf("ConnectionsOpened = %d, want 0", got)
			}
		})
	}
}

func TestTicketsAreSingleUse(t *testing.T) {
	emu := newTestServer(t)
	wsURL := openURL(t, emu)
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	_ = resp.Body.Close()
	defer func() { _ = conn.Close() }()
	_, resp, err = websocket.DefaultDialer.Dial(wsURL, nil)
	if err == nil {
		t.Fatal("second dial with the same ticket succeeded")
	}
	if resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second dial answer = %v, want 401", resp)
	}
}

func TestConnectionCap(t *testing.T) {
	emu := newTestServer(t)
	for i := range MaxConnections {
		conn := dialRaw(t, emu)
		hello := readFrame(t, conn)
		if hello["type"] != "hello" || hello["num_connections"] != float64(i+1) {
			t.Fatalf("connection %d: first frame %v, want hello with num_connections %d", i+1, hello, i+1)
		}
	}
	extra := dialRaw(t, emu)
	frame := readFrame(t, extra)
	if frame["type"] != "disconnect" || frame["reason"] != "too_many_websockets" {
		t.Errorf("11th connection got %v, want a too_many_websockets disconnect", frame)
	}
	_ = extra.SetReadDeadline(time.Now().Add(testTimeout))
	if _, _, err := extra.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("11th connection after the disconnect: %v, want a normal close", err)
	}
	waitFor(t, emu, "the 11th connection to close", func() bool { return emu.OpenConnections() == MaxConnections })
	if got := emu.ConnectionsOpened(); got != MaxConnections+1 {
		t.Errorf("ConnectionsOpened = %d, want %d", got, MaxConnections+1)
	}
}

func TestPingsKeepSlackGoConnected(t *testing.T) {
	// slack-go reconnects when no server ping arrives within its ping interval; with pings every 20ms and a
	// client interval of 400ms (wide enough for a loaded CI machine), sixty pings (well over one client
	// interval) later it must still be on its first connection. Without pings it would have reconnected.
	emu := newTestServer(t, func(o *Options) { o.PingInterval = 20 * time.Millisecond })
	connectedClient(t, emu, socketmode.OptionPingInterval(400*time.Millisecond))
	pings := func() int64 {
		emu.mu.Lock()
		defer emu.mu.Unlock()
		var n int64
		for _, c := range emu.sockets.open {
			n += c.pingsSent.Load()
		}
		return n
	}
	deadline := time.Now().Add(testTimeout)
	for pings() < 60 && time.Now().Before(deadline) {
		<-time.After(10 * time.Millisecond)
	}
	if got := emu.ConnectionsOpened(); got != 1 {
		t.Errorf("ConnectionsOpened = %d after %d pings, want 1", got, pings())
	}
}

func TestRawClientPingsAndAckFormats(t *testing.T) {
	emu := newTestServer(t, func(o *Options) { o.PingInterval = 10 * time.Millisecond })
	conn := dialRaw(t, emu)
	pinged := make(chan struct{}, 1)
	conn.SetPingHandler(func(string) error {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return nil
	})
	if hello := readFrame(t, conn); hello["type"] != "hello" {
		t.Fatalf("first frame %v, want hello", hello)
	}
	// The envelope is sent only once a ping was handled (pings are handled inside ReadMessage), so the
	// next frame proves that pings arrive.
	type sent struct {
		id  string
		err error
	}
	sentc := make(chan sent, 1)
	ctx := testContext(t)
	go func() {
		select {
		case <-pinged:
		case <-ctx.Done():
		}
		id, err := emu.SendSlashCommand(ctx, SlashCommand{ChannelID: testChannel, UserID: testUser})
		sentc <- sent{id, err}
	}()
	env := readFrame(t, conn)
	r := <-sentc
	if r.err != nil {
		t.Fatal(r.err)
	}
	id := r.id
	if env["envelope_id"] != id {
		t.Fatalf("frame %v, want envelope %s", env, id)
	}
	// The Node SDK acks with an empty payload object; that must count as an ack without a response.
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"envelope_id":"`+id+`","payload":{}}`)); err != nil {
		t.Fatal(err)
	}
	ack, err := emu.WaitAck(testContext(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if string(ack.Payload) != "{}" || len(emu.Ephemerals(testChannel, testUser)) != 0 {
		t.Errorf("ack payload %s, ephemerals %v: want {} and nothing shown", ack.Payload, emu.Ephemerals(testChannel, testUser))
	}
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"envelope_id":"bogus"}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, emu, "the unknown ack to be recorded", func() bool { return len(emu.AckFailures()) == 1 })
	if got := emu.AckFailures()[0]; !strings.Contains(got, "unknown envelope_id") {
		t.Errorf("failure = %q, want an unknown envelope_id line", got)
	}
}

func TestSendValidatesItsInput(t *testing.T) {
	emu := newTestServer(t)
	ctx := testContext(t)
	if _, err := emu.SendSlashCommand(ctx, SlashCommand{UserID: testUser}); err == nil {
		t.Error("slash command without a channel accepted")
	}
	if _, err := emu.SendSlashCommand(ctx, SlashCommand{ChannelID: testChannel, UserID: testUser, Command: "kafka"}); err == nil {
		t.Error("command without a slash accepted")
	}
	emu.Close()
	if _, err := emu.SendSlashCommand(ctx, SlashCommand{ChannelID: testChannel, UserID: testUser}); !errors.Is(err, errClosed) {
		t.Errorf("send after Close: %v, want errClosed", err)
	}
}

func TestRefusedAckPayloadIsAFailure(t *testing.T) {
	emu := newTestServer(t)
	bc := connectedClient(t, emu)
	id, err := emu.SendSlashCommand(testContext(t), SlashCommand{ChannelID: testChannel, UserID: testUser})
	if err != nil {
		t.Fatal(err)
	}
	evt := bc.waitEvent(t, socketmode.EventTypeSlashCommand)
	header := map[string]any{"type": "header", "text": map[string]any{"type": "mrkdwn", "text": "not plain"}}
	if err := bc.Ack(*evt.Request, map[string]any{"blocks": []any{header}}); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.WaitAck(testContext(t), id); err != nil {
		t.Fatal(err)
	}
	failures := emu.AckFailures()
	if len(failures) != 1 || !strings.Contains(failures[0], "invalid_blocks") || !strings.Contains(failures[0], "/blocks/0/text/type") {
		t.Errorf("AckFailures = %q, want the refused payload with its json-pointer", failures)
	}
	if len(emu.Ephemerals(testChannel, testUser)) != 0 {
		t.Error("a refused response was shown")
	}
}
