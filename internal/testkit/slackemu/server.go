// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults used when the matching Options field is empty.
const (
	DefaultAppToken     = "xapp-placeholder-emulator-app-token"
	DefaultBotToken     = "xoxb-emu-placeholder"
	DefaultTeamID       = "T0EMU0001"
	DefaultAppID        = "A0EMU0001"
	DefaultBotUserID    = "U0EMUBOT1"
	DefaultAckDeadline  = 3 * time.Second
	DefaultPingInterval = 5 * time.Second
)

// DefaultScopes are the bot token's scopes by default: those of
// deploy/slack-app-manifest.yaml.
var DefaultScopes = []string{"chat:write", "commands", "channels:read", "groups:read"}

// MaxConnections is how many Socket Mode connections Slack allows one app at the same time.
const MaxConnections = 10

// botID is the bot_id Slack shows on messages posted by the app.
const botID = "B0EMUBOT1"

// Options configures a Server. The zero value is usable: every empty field takes its default.
type Options struct {
	// AppToken and BotToken are the tokens the emulator accepts: the app-level token on
	// apps.connections.open, the bot token on every other method. Wrong ones get invalid_auth, missing ones
	// not_authed. Defaults: DefaultAppToken, DefaultBotToken.
	AppToken, BotToken string
	// TeamID, AppID and BotUserID identify the workspace, the app and the bot user in payloads and
	// messages. Defaults: DefaultTeamID, DefaultAppID, DefaultBotUserID.
	TeamID, AppID, BotUserID string
	// AckDeadline is how long an envelope may stay unacknowledged before a failure is recorded
	// (default 3s, Slack's deadline).
	AckDeadline time.Duration
	// PingInterval is the period of the server's WebSocket pings (default 5s). slack-go reconnects when it
	// sees no ping for its own OptionPingInterval (30s by default), so keep this well below it.
	PingInterval time.Duration
	// RedeliverUnacked makes the emulator send an envelope again, with retry_attempt+1 and retry_reason
	// "timeout", when its ack deadline passes (at most 3 retries, like Slack's Events API). Off by default
	// so that tests stay deterministic.
	RedeliverUnacked bool
	// Addr is the listen address, default "127.0.0.1:0" (loopback, a free
	// port). The real-node tests listen on the node's address so the bot's
	// pod reaches the emulator over the pod network.
	Addr string
	// Scopes are the bot token's scopes: every Web API answer carries them
	// in the X-OAuth-Scopes header, as Slack's do, and conversations.info
	// answers missing_scope without channels:read (C...) or groups:read
	// (G...). Nil means DefaultScopes; empty (non-nil) means none.
	Scopes []string
	// Logf, when set, receives one line per notable event. Tokens never appear in it. It is called with
	// the emulator's lock held, so it must not call the Server.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	setDefault := func(field *string, value string) {
		if *field == "" {
			*field = value
		}
	}
	if o.Scopes == nil {
		o.Scopes = DefaultScopes
	}
	setDefault(&o.AppToken, DefaultAppToken)
	setDefault(&o.BotToken, DefaultBotToken)
	setDefault(&o.TeamID, DefaultTeamID)
	setDefault(&o.AppID, DefaultAppID)
	setDefault(&o.BotUserID, DefaultBotUserID)
	if o.AckDeadline <= 0 {
		o.AckDeadline = DefaultAckDeadline
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// Server is a running emulator. All its methods are safe for concurrent use.
type Server struct {
	opts     Options
	listener net.Listener
	http     *http.Server
	baseURL  string // "http://127.0.0.1:PORT"

	// goroutines counts every goroutine the server started; Close waits for them.
	goroutines sync.WaitGroup
	closeOnce  sync.Once

	mu      sync.Mutex // guards everything below
	closed  bool
	changed chan struct{}

	sockets   socketRegistry
	envelopes envelopeTracker
	store     messageStore
	clock     tsClock
	channels  channelDirectory
	faults    faultQueue
	api       apiLog
	responses responseURLs
}

// New starts an emulator listening on Options.Addr (by default 127.0.0.1 on a free port). It serves until
// Close.
func New(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the Slack emulator: %w", err)
	}
	s := &Server{
		opts:      opts.withDefaults(),
		listener:  listener,
		baseURL:   "http://" + listener.Addr().String(),
		changed:   make(chan struct{}),
		sockets:   newSocketRegistry(),
		envelopes: newEnvelopeTracker(),
		store:     newMessageStore(),
		channels:  newChannelDirectory(),
		faults:    faultQueue{},
		api:       newAPILog(),
		responses: responseURLs{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/link/", s.serveLink)
	mux.HandleFunc("/commands/", s.serveResponseURL)
	mux.HandleFunc("/actions/", s.serveResponseURL)
	s.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
	}
	s.goroutines.Add(1)
	go func() {
		defer s.goroutines.Done()
		if err := s.http.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.opts.Logf("slackemu: serving HTTP: %v", err)
		}
	}()
	return s, nil
}

// APIURL is the Web API base URL to give slack.OptionAPIURL: "http://127.0.0.1:PORT/api/".
func (s *Server) APIURL() string { return s.baseURL + "/api/" }

// Close stops the emulator: it closes every WebSocket, stops the HTTP server and the ack timers, and waits
// for every goroutine it started. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		conns := s.sockets.all()
		s.envelopes.stopTimers()
		s.notifyLocked()
		s.mu.Unlock()

		if err := s.http.Close(); err != nil {
			s.opts.Logf("slackemu: closing HTTP server: %v", err)
		}
		for _, c := range conns {
			c.closeAbruptly()
		}
		s.goroutines.Wait()
	})
}

// Changed returns a channel that is closed at the next change of the emulator's state (a message stored
// or updated, an ack, a connection opened or closed, a Web API call). Call it again for the next change.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// WaitFor returns nil as soon as cond returns true, checking it now and after every state change, or the
// context's error. cond must not block; it may call any Server method.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		changed := s.Changed()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for an emulator condition: %w", ctx.Err())
		}
	}
}

// notifyLocked wakes every Changed waiter. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// errClosed is returned by the Send methods after Close.
var errClosed = errors.New("slack emulator is closed")
