// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"strings"
	"testing"
)

func TestWindow(t *testing.T) {
	const log = "one\ntwo\nthree\n"
	tests := []struct {
		name        string
		text        string
		tail, limit int64
		want        string
	}{
		{"no bounds", log, -1, -1, log},
		{"last line", log, 1, -1, "three\n"},
		{"last two lines", log, 2, -1, "two\nthree\n"},
		{"more lines than there are", log, 10, -1, log},
		{"zero lines", log, 0, -1, ""},
		{"final line without newline counts", "one\ntwo", 1, -1, "two"},
		{"limit keeps the beginning", log, -1, 5, "one\nt"},
		{"tail first, then limit cuts its end", log, 2, 6, "two\nth"},
		{"limit larger than the text", log, -1, 100, log},
		{"empty log", "", 5, 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Window(tt.text, tt.tail, tt.limit); got != tt.want {
				t.Errorf("Window(%q, %d, %d) = %q, want %q", tt.text, tt.tail, tt.limit, got, tt.want)
			}
		})
	}
}

func TestLogStoreRestartAndForget(t *testing.T) {
	s := NewLogStore()
	s.Set("ns", "p", "c", false, "first run")
	s.Restart("ns", "p", "c")
	if got, ok := s.Get("ns", "p", "c", true); !ok || got != "first run" {
		t.Errorf("previous after restart = %q, %v; want the first run's log", got, ok)
	}
	if _, ok := s.Get("ns", "p", "c", false); ok {
		t.Error("a restarted container still has a current log")
	}
	s.Set("ns", "other", "c", false, "kept")
	s.ForgetPod("ns", "p")
	if _, ok := s.Get("ns", "p", "c", true); ok {
		t.Error("ForgetPod kept the pod's previous log")
	}
	if got, _ := s.Get("ns", "other", "c", false); got != "kept" {
		t.Error("ForgetPod dropped another pod's log")
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"KB_TARGET": "__cluster_metadata-0", "EMPTY": ""}
	tests := []struct{ in, want string }{
		{"mv $(KB_TARGET) /backup", "mv __cluster_metadata-0 /backup"},
		{"$(UNDEFINED) stays", "$(UNDEFINED) stays"},
		{"$(id -u) is a shell substitution", "$(id -u) is a shell substitution"},
		{"$$(KB_TARGET) escapes", "$(KB_TARGET) escapes"},
		{"$$ is one dollar: $$", "$ is one dollar: $"},
		{"$HOME and ${X} are the shell's", "$HOME and ${X} are the shell's"},
		{"$(EMPTY)x", "x"},
		{"unterminated $(KB_TARGET", "unterminated $(KB_TARGET"},
		{"unterminated $( then $$", "unterminated $( then $"},
		{"trailing $", "trailing $"},
	}
	for _, tt := range tests {
		if got := expand(tt.in, vars); got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestImageID(t *testing.T) {
	pinned := "apache/kafka@sha256:" + fakeDigest("x")
	tests := []struct{ image, wantRepo string }{
		{"bitnami/kafka:3.7.0", "bitnami/kafka"},
		{"registry.local:5000/kafka:3.7", "registry.local:5000/kafka"},
		{"registry.local:5000/kafka", "registry.local:5000/kafka"},
	}
	for _, tt := range tests {
		got := imageID(tt.image)
		repo, digest, ok := strings.Cut(got, "@sha256:")
		if !ok || repo != tt.wantRepo || len(digest) != 64 {
			t.Errorf("imageID(%q) = %q, want %s@sha256:<64 hex digits>", tt.image, got, tt.wantRepo)
		}
	}
	if got := imageID(pinned); got != pinned {
		t.Errorf("imageID(%q) = %q, want it unchanged", pinned, got)
	}
}
