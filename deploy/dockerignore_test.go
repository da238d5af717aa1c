// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"os"
	"path"
	"strings"
	"testing"
)

// ignored reports whether the .dockerignore patterns (the forms this repo
// uses: "dir/", "/file", "**/dir/", globs on a name) exclude the file at
// rel, a slash path from the repository root.
func ignored(patterns []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range patterns {
		switch {
		case strings.HasPrefix(p, "**/") && strings.HasSuffix(p, "/"):
			if strings.Contains("/"+rel, "/"+strings.TrimPrefix(p, "**/")) {
				return true
			}
		case strings.HasSuffix(p, "/"):
			if strings.HasPrefix(rel, p) {
				return true
			}
		case strings.HasPrefix(p, "/"):
			if rel == strings.TrimPrefix(p, "/") {
				return true
			}
		default:
			for _, part := range parts {
				if ok, _ := path.Match(p, part); ok {
					return true
				}
			}
		}
	}
	return false
}

// TestDockerignoreKeepsTheContextToSources: the image's build context
// leaves out the control-plane cache, built binaries and git history
// (issue 18: .cache/ and a built binary went into it), and keeps every
// file the image's build embeds.
func TestDockerignoreKeepsTheContextToSources(t *testing.T) {
	data, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	for _, out := range []string{".cache/control-plane/x/kube-apiserver", "bot", "bin/bot", ".git/HEAD", "internal/kube/kube.test", "cover.out"} {
		if !ignored(patterns, out) {
			t.Errorf("%s would go into the image's build context", out)
		}
	}
	for _, in := range []string{"go.mod", "go.sum", "Dockerfile", "hack/build-bot.sh", "cmd/bot/main.go",
		"internal/recovery/repair.sh", "internal/diagnose/rules.yaml", "internal/testkit/demo/logs/seed.log", "cmd/bot/bot.go"} {
		if ignored(patterns, in) {
			t.Errorf("%s is needed by the image's build but .dockerignore leaves it out", in)
		}
	}
}
