// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// The API servers of a cluster that cannot be reached, for the
// multi-cluster tests: one that hangs (StartHanging) and an address that
// refuses connections (StartRefuser). Both live on loopback and cost no
// process; a bot is pointed at them through Config (or a kubeconfig made
// by Kubeconfig) as at any cluster.

// HangMode says where a HangingServer stops answering.
type HangMode int

const (
	// HangRequests completes the TLS handshake and reads each request but
	// never answers it: an API server whose storage hangs, or one behind a
	// load balancer that still accepts connections.
	HangRequests HangMode = iota
	// HangHandshake accepts TCP connections and never sends a byte, not
	// even the TLS handshake: a wedged process or a black-holing network.
	HangHandshake
)

// String names the mode as the tests and the benchmark report print it.
func (m HangMode) String() string {
	switch m {
	case HangRequests:
		return "answers no request"
	case HangHandshake:
		return "never completes the TLS handshake"
	}
	return fmt.Sprintf("HangMode(%d)", int(m))
}

// HangOptions shape a HangingServer.
type HangOptions struct {
	// Mode is where it hangs (default HangRequests).
	Mode HangMode
	// Delay, when positive in HangRequests mode, answers each request
	// after Delay with 503 Service Unavailable instead of never: a slow
	// API server rather than a dead one.
	Delay time.Duration
}

// HangingServer is a loopback HTTPS endpoint standing in for a cluster's
// API server that stopped answering. Requests that reach it wait until
// the client gives up or the server is closed.
type HangingServer struct {
	// URL is https://127.0.0.1:PORT.
	URL string
	// CAData is the PEM certificate the server presents, so clients
	// verify it as they verify a real API server.
	CAData []byte

	opts     HangOptions
	srv      *httptest.Server
	release  chan struct{}
	closing  sync.Once
	ln       *holdingListener
	requests atomic.Int64
}

// StartHanging starts a HangingServer that is closed when t's cleanup runs
// (also when t fails), which releases every request still hanging.
func StartHanging(t testing.TB, opts HangOptions) *HangingServer {
	t.Helper()
	h, err := NewHangingServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// NewHangingServer starts a HangingServer; the caller must Close it.
func NewHangingServer(opts HangOptions) (*HangingServer, error) {
	if opts.Mode != HangRequests && opts.Mode != HangHandshake {
		return nil, fmt.Errorf("testenv: unknown hang mode %d", int(opts.Mode))
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testenv: hanging server: %w", err)
	}
	h := &HangingServer{opts: opts, release: make(chan struct{})}
	h.ln = &holdingListener{Listener: inner, hold: opts.Mode == HangHandshake}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.Listener.Close() // the default one; ours counts and holds
	h.srv.Listener = h.ln
	h.srv.StartTLS()
	h.URL = h.srv.URL
	h.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	return h, nil
}

func (h *HangingServer) serve(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	var answer <-chan time.Time
	if h.opts.Delay > 0 {
		timer := time.NewTimer(h.opts.Delay)
		defer timer.Stop()
		answer = timer.C
	}
	select {
	case <-answer:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"testenv: the hanging server answered late","reason":"ServiceUnavailable","code":503}`)
	case <-r.Context().Done():
	case <-h.release:
	}
}

// Config is a client configuration for the server: its URL, its CA and a
// bearer token (which it never checks), and no client timeout, so what
// bounds a request is the code under test.
func (h *HangingServer) Config() *rest.Config {
	return &rest.Config{
		Host:            h.URL,
		BearerToken:     "testenv-hanging-server",
		TLSClientConfig: rest.TLSClientConfig{CAData: h.CAData},
	}
}

// Connections is the number of TCP connections the server accepted.
func (h *HangingServer) Connections() int64 { return h.ln.accepted.Load() }

// Requests is the number of HTTP requests that reached the server (always
// 0 in HangHandshake mode).
func (h *HangingServer) Requests() int64 { return h.requests.Load() }

// Close releases every hanging request and connection and stops the
// server. It is safe to call more than once.
func (h *HangingServer) Close() {
	h.closing.Do(func() {
		close(h.release)
		h.ln.closeHeld()
		h.srv.Close()
	})
}

// holdingListener counts accepted connections; with hold set it keeps
// every connection to itself, so the HTTP server never starts a TLS
// handshake on it, until closeHeld.
type holdingListener struct {
	net.Listener
	hold     bool
	accepted atomic.Int64

	mu     sync.Mutex
	held   []net.Conn
	closed bool
}

func (l *holdingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.accepted.Add(1)
		if !l.hold {
			return c, nil
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			return nil, net.ErrClosed
		}
		l.held = append(l.held, c)
		l.mu.Unlock()
	}
}

func (l *holdingListener) closeHeld() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, c := range l.held {
		c.Close()
	}
	l.held = nil
}

// Refuser is a loopback address where connections are refused at once: a
// cluster whose API server is down. The port stays reserved (bound, never
// listening) until Close, so nothing else can start answering there
// meanwhile.
type Refuser struct {
	// URL is https://127.0.0.1:PORT.
	URL string

	close func() error
}

// StartRefuser returns a Refuser that is closed when t's cleanup runs.
func StartRefuser(t testing.TB) *Refuser {
	t.Helper()
	r, err := NewRefuser()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// NewRefuser reserves a loopback port that refuses connections; the
// caller must Close it.
func NewRefuser() (*Refuser, error) {
	port, closeFn, err := reservePort()
	if err != nil {
		return nil, fmt.Errorf("testenv: reserving a refusing port: %w", err)
	}
	return &Refuser{URL: fmt.Sprintf("https://127.0.0.1:%d", port), close: closeFn}, nil
}

// Config is a client configuration for the refusing address.
func (r *Refuser) Config() *rest.Config {
	return &rest.Config{Host: r.URL, BearerToken: "testenv-refuser"}
}

// Close frees the port.
func (r *Refuser) Close() error {
	if r.close == nil {
		return errors.New("testenv: Refuser closed twice")
	}
	err := r.close()
	r.close = nil
	return err
}
