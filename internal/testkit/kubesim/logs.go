// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"strings"
	"sync"
)

// containerKey names one container of one pod.
type containerKey struct {
	namespace, pod, container string
	previous                  bool
}

// LogStore holds container logs in memory: for each container, the log of
// the current instance and of the previous (terminated) one, as the kubelet
// keeps them on disk. It is safe for concurrent use.
type LogStore struct {
	mu   sync.Mutex
	logs map[containerKey]string
}

// NewLogStore returns an empty store.
func NewLogStore() *LogStore {
	return &LogStore{logs: map[containerKey]string{}}
}

// Set stores text as the log of a container's current instance, or of its
// previous one when previous is true, replacing what was there.
func (s *LogStore) Set(namespace, pod, container string, previous bool, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs[containerKey{namespace, pod, container, previous}] = text
}

// Get returns a stored log and whether there is one.
func (s *LogStore) Get(namespace, pod, container string, previous bool) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text, ok := s.logs[containerKey{namespace, pod, container, previous}]
	return text, ok
}

// Restart moves a container's current log to its previous slot and clears
// the current one, as a container restart does.
func (s *LogStore) Restart(namespace, pod, container string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := containerKey{namespace, pod, container, false}
	prev := cur
	prev.previous = true
	if text, ok := s.logs[cur]; ok {
		s.logs[prev] = text
	}
	delete(s.logs, cur)
}

// ForgetPod drops every log of a pod, as the kubelet does when the pod is
// deleted (a recreated pod of the same name starts with no previous log).
func (s *LogStore) ForgetPod(namespace, pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.logs {
		if k.namespace == namespace && k.pod == pod {
			delete(s.logs, k)
		}
	}
}

// Window applies the kubelet's log bounds to text: first the last
// tailLines lines (all when tailLines < 0), then at most limitBytes bytes
// from the start of those (no limit when limitBytes < 0). This is the
// kubelet's order: with both set, a tail longer than limitBytes loses its
// END, not its beginning.
func Window(text string, tailLines, limitBytes int64) string {
	if tailLines >= 0 {
		text = lastLines(text, tailLines)
	}
	if limitBytes >= 0 && int64(len(text)) > limitBytes {
		text = text[:limitBytes]
	}
	return text
}

// lastLines returns the last n lines of text, a final line without a
// newline counting as a line.
func lastLines(text string, n int64) string {
	if n == 0 {
		return ""
	}
	end := len(text)
	if strings.HasSuffix(text, "\n") {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if text[i] == '\n' {
			n--
			if n == 0 {
				return text[i+1:]
			}
		}
	}
	return text
}
