// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// writeTimeout bounds every WebSocket write, so that a client that stopped reading cannot stall the emulator.
const writeTimeout = 10 * time.Second

// approximateConnectionTime is the hello's debug_info.approximate_connection_time, in seconds; every SDK
// test suite uses Slack's 18060 (about 5 hours).
const approximateConnectionTime = 18060

// upgrader accepts any Origin: slack-go dials with "Origin: https://api.slack.com", whose host differs
// from the emulator's.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socketConn is one Socket Mode WebSocket connection. Its outbox and draining flag are guarded by Server.mu;
// only its writer goroutine writes data frames, pings go through WriteControl which gorilla allows
// concurrently.
type socketConn struct {
	id       int
	ws       *websocket.Conn
	openedAt time.Time

	draining bool            // a disconnect was sent: no new envelopes go here
	outbox   []outboundFrame // frames waiting for the writer goroutine

	wake      chan struct{} // buffered(1): the outbox has frames
	done      chan struct{} // closed once the connection is over
	endOnce   sync.Once
	pingsSent atomic.Int64
}

// outboundFrame is either a control message (hello, disconnect) or an envelope, whose JSON is built when it
// is written so that it carries the envelope's current retry_attempt.
type outboundFrame struct {
	control    []byte
	envelope   *envelope
	closeAfter bool // close the connection once this frame is written
}

func (c *socketConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *socketConn) end() {
	c.endOnce.Do(func() { close(c.done) })
}

// closeAbruptly closes the TCP connection without a WebSocket close frame.
func (c *socketConn) closeAbruptly() {
	_ = c.ws.NetConn().Close()
	c.end()
}

// socketRegistry holds the open connections and the unused tickets. Guarded by Server.mu.
type socketRegistry struct {
	tickets map[string]bool
	open    []*socketConn // in the order they were opened
	opened  int           // successful WebSocket connects so far
	nextID  int
}

func newSocketRegistry() socketRegistry {
	return socketRegistry{tickets: map[string]bool{}}
}

func (r *socketRegistry) all() []*socketConn { return append([]*socketConn(nil), r.open...) }

func (r *socketRegistry) remove(c *socketConn) bool {
	for i, o := range r.open {
		if o == c {
			r.open = append(r.open[:i], r.open[i+1:]...)
			return true
		}
	}
	return false
}

// target is the connection new envelopes go to: the most recently opened one that was not told to
// disconnect, or nil.
func (r *socketRegistry) target() *socketConn {
	for i := len(r.open) - 1; i >= 0; i-- {
		if !r.open[i].draining {
			return r.open[i]
		}
	}
	return nil
}

// redeemTicket reports whether ticket was issued and not used yet, and uses it up.
func (r *socketRegistry) redeemTicket(ticket string) bool {
	if !r.tickets[ticket] {
		return false
	}
	delete(r.tickets, ticket)
	return true
}

// openConnection answers apps.connections.open: a single-use WebSocket URL.
func (s *Server) openConnection(*apiCall) apiResult {
	ticket := newUUID()
	s.mu.Lock()
	s.sockets.tickets[ticket] = true
	s.mu.Unlock()
	wsURL := "ws" + strings.TrimPrefix(s.baseURL, "http") + "/link/?ticket=" + url.QueryEscape(ticket) +
		"&app_id=" + url.QueryEscape(s.opts.AppID)
	return okObject(field{"url", wsURL})
}

type debugInfo struct {
	Host                      string `json:"host"`
	BuildNumber               int    `json:"build_number,omitempty"`
	ApproximateConnectionTime int    `json:"approximate_connection_time,omitempty"`
}

type helloMessage struct {
	Type           string    `json:"type"`
	NumConnections int       `json:"num_connections"`
	DebugInfo      debugInfo `json:"debug_info"`
	ConnectionInfo struct {
		AppID string `json:"app_id"`
	} `json:"connection_info"`
}

type disconnectMessage struct {
	Type      string    `json:"type"`
	Reason    string    `json:"reason"`
	DebugInfo debugInfo `json:"debug_info"`
}

func hostName(connID int) string { return "applink-emu-" + strconv.Itoa(connID) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("slackemu: marshalling a fixed message type: " + err.Error())
	}
	return b
}

// serveLink is the WebSocket endpoint behind the URLs apps.connections.open hands out.
func (s *Server) serveLink(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closed := s.closed
	valid := !closed && s.sockets.redeemTicket(r.URL.Query().Get("ticket"))
	s.mu.Unlock()
	if closed {
		http.Error(w, "emulator closed", http.StatusServiceUnavailable)
		return
	}
	if !valid {
		s.opts.Logf("slackemu: WebSocket dial with an unknown or used ticket refused")
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.opts.Logf("slackemu: WebSocket upgrade: %v", err)
		return
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.sockets.nextID++
	c := &socketConn{
		id:       s.sockets.nextID,
		ws:       ws,
		openedAt: time.Now(),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	overCap := len(s.sockets.open) >= MaxConnections
	s.sockets.open = append(s.sockets.open, c)
	s.sockets.opened++
	if overCap {
		c.draining = true
		c.outbox = append(c.outbox, outboundFrame{control: mustJSON(disconnectMessage{
			Type: "disconnect", Reason: "too_many_websockets", DebugInfo: debugInfo{Host: hostName(c.id)},
		}), closeAfter: true})
		s.opts.Logf("slackemu: connection %d is over the cap of %d: too_many_websockets", c.id, MaxConnections)
	} else {
		hello := helloMessage{
			Type:           "hello",
			NumConnections: len(s.sockets.open),
			DebugInfo: debugInfo{
				Host:                      hostName(c.id),
				BuildNumber:               1,
				ApproximateConnectionTime: approximateConnectionTime,
			},
		}
		hello.ConnectionInfo.AppID = s.opts.AppID
		c.outbox = append(c.outbox, outboundFrame{control: mustJSON(hello)})
		for _, env := range s.envelopes.takePending() {
			c.outbox = append(c.outbox, outboundFrame{envelope: env})
		}
		s.opts.Logf("slackemu: connection %d opened (%d open)", c.id, len(s.sockets.open))
	}
	s.goroutines.Add(3) // this handler's read loop, the writer, the pinger
	s.notifyLocked()
	s.mu.Unlock()

	go s.writeLoop(c)
	go s.pingLoop(c)
	c.signal()
	defer s.goroutines.Done()
	s.readLoop(c)
}

// readLoop reads the app's frames (acks) until the connection fails, then forgets the connection.
func (s *Server) readLoop(c *socketConn) {
	for {
		msgType, data, err := c.ws.ReadMessage()
		if err != nil {
			break
		}
		if msgType != websocket.TextMessage {
			s.recordFailure(ackFailure{detail: "binary frame from the app on connection " + strconv.Itoa(c.id)})
			continue
		}
		s.handleAck(data)
	}
	_ = c.ws.Close()
	c.end()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sockets.remove(c) {
		return
	}
	// Envelopes that were waiting for this connection go to the next one.
	for i := len(c.outbox) - 1; i >= 0; i-- {
		if env := c.outbox[i].envelope; env != nil {
			env.queued = false
			s.envelopes.pushFrontPending(env)
		}
	}
	c.outbox = nil
	s.flushPendingLocked()
	s.opts.Logf("slackemu: connection %d closed (%d open)", c.id, len(s.sockets.open))
	s.notifyLocked()
}

// writeLoop writes the connection's outbox in order.
func (s *Server) writeLoop(c *socketConn) {
	defer s.goroutines.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		for {
			s.mu.Lock()
			if len(c.outbox) == 0 {
				s.mu.Unlock()
				break
			}
			frame := c.outbox[0]
			c.outbox = c.outbox[1:]
			data := frame.control
			if frame.envelope != nil {
				data = s.beginDeliveryLocked(frame.envelope)
			}
			s.mu.Unlock()

			_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
			if err := c.ws.WriteMessage(websocket.TextMessage, data); err != nil {
				s.opts.Logf("slackemu: writing to connection %d: %v", c.id, err)
				if frame.envelope != nil {
					s.undeliver(c, frame.envelope)
				}
				c.closeAbruptly()
				return
			}
			if frame.closeAfter {
				deadline := time.Now().Add(writeTimeout)
				_ = c.ws.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadline)
				c.closeAbruptly()
				return
			}
		}
	}
}

// pingLoop sends a WebSocket ping every PingInterval, as Slack does; slack-go reconnects when pings stop.
func (s *Server) pingLoop(c *socketConn) {
	defer s.goroutines.Done()
	ticker := time.NewTicker(s.opts.PingInterval)
	defer ticker.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-ticker.C:
		}
		if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)); err != nil {
			return
		}
		c.pingsSent.Add(1)
	}
}

// Disconnect sends {"type":"disconnect","reason":reason,"debug_info":{…}} to every open connection, as
// Slack does before recycling a connection ("warning", "refresh_requested", "link_disabled",
// "too_many_websockets"). Those connections get no further envelopes; the client is expected to close them
// and connect again, as slack-go does at once.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.sockets.open {
		if c.draining {
			continue
		}
		c.draining = true
		c.outbox = append(c.outbox, outboundFrame{control: mustJSON(disconnectMessage{
			Type: "disconnect", Reason: reason, DebugInfo: debugInfo{Host: hostName(c.id)},
		})})
		c.signal()
		s.opts.Logf("slackemu: disconnect %q sent to connection %d", reason, c.id)
	}
	s.notifyLocked()
}

// DropConnections closes every open socket abruptly, without a close frame, like a network failure.
// Envelopes not yet written are delivered on the next connection; written but unacknowledged ones run into
// their ack deadline.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := s.sockets.all()
	for _, c := range conns {
		c.draining = true
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.closeAbruptly()
	}
}

// OpenConnections is the number of WebSocket connections open right now.
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sockets.open)
}

// ConnectionsOpened is the number of successful WebSocket connects so far.
func (s *Server) ConnectionsOpened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sockets.opened
}
