// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
)

// LogRequest is one container-log request the kubelet API received, as the
// API server forwarded it from a client's pods/log read.
type LogRequest struct {
	Namespace, Pod, Container string
	Previous                  bool
	Follow                    bool
	Timestamps                bool
	// TailLines and LimitBytes are nil when the request did not set them.
	TailLines  *int64
	LimitBytes *int64
	// Query is the raw query string, for parameters not broken out above.
	Query url.Values
}

// KubeletAPI is the part of the kubelet's HTTPS API that the API server
// calls for pods/log: GET /containerLogs/{namespace}/{pod}/{container}. It
// serves from a LogStore and records every request.
type KubeletAPI struct {
	logs   *LogStore
	server *httptest.Server

	mu       sync.Mutex
	requests []LogRequest
}

// StartKubeletAPI starts a TLS server on 127.0.0.1 serving logs. The API
// server does not verify kubelet certificates unless it is given
// --kubelet-certificate-authority, so httptest's self-signed one does.
func StartKubeletAPI(logs *LogStore) *KubeletAPI {
	k := &KubeletAPI{logs: logs}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", k.serveContainerLogs)
	k.server = httptest.NewTLSServer(mux)
	return k
}

// Port is the TCP port to register as the Node's kubelet endpoint.
func (k *KubeletAPI) Port() int {
	u, _ := url.Parse(k.server.URL)
	port, _ := strconv.Atoi(u.Port())
	return port
}

// URL is the server's base URL (https://127.0.0.1:PORT).
func (k *KubeletAPI) URL() string { return k.server.URL }

// Client returns an HTTP client that trusts the server's certificate.
func (k *KubeletAPI) Client() *http.Client { return k.server.Client() }

// Close stops the server.
func (k *KubeletAPI) Close() { k.server.Close() }

// Requests returns the log requests received so far, oldest first.
func (k *KubeletAPI) Requests() []LogRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.requests)
}

func (k *KubeletAPI) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := LogRequest{
		Namespace:  r.PathValue("namespace"),
		Pod:        r.PathValue("pod"),
		Container:  r.PathValue("container"),
		Previous:   q.Get("previous") == "true",
		Follow:     q.Get("follow") == "true",
		Timestamps: q.Get("timestamps") == "true",
		Query:      q,
	}
	var err error
	if req.TailLines, err = optionalInt(q, "tailLines"); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.LimitBytes, err = optionalInt(q, "limitBytes"); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	k.mu.Lock()
	k.requests = append(k.requests, req)
	k.mu.Unlock()

	text, ok := k.logs.Get(req.Namespace, req.Pod, req.Container, req.Previous)
	if !ok {
		// The kubelet's wording, which the API server passes back as a 400.
		msg := fmt.Sprintf("container %q in pod %q is waiting to start: no log yet", req.Container, req.Pod)
		if req.Previous {
			msg = fmt.Sprintf("previous terminated container %q in pod %q not found", req.Container, req.Pod)
		}
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	tail, limit := int64(-1), int64(-1)
	if req.TailLines != nil {
		tail = *req.TailLines
	}
	if req.LimitBytes != nil {
		limit = *req.LimitBytes
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, Window(text, tail, limit))
}

func optionalInt(q url.Values, name string) (*int64, error) {
	s := q.Get(name)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%s=%q: want a non-negative integer", name, s)
	}
	return &n, nil
}
