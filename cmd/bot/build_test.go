// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestShippedBinaryIsStatic builds the bot with hack/build-bot.sh, the same
// script the Dockerfile's build stage runs, and checks the result is a
// static ELF (no interpreter, no dynamic section): the distroless/static
// base has no libc to load.
func TestShippedBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole binary; skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "bot")
	cmd := exec.Command("bash", "../../hack/build-bot.sh", out)
	cmd.Env = append(os.Environ(), "VERSION=v0.0.0-test")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/build-bot.sh: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatalf("opening built binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("binary has program header %v: not static", p.Type)
		}
	}
	v, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatalf("bot version: %v", err)
	}
	if !strings.Contains(string(v), "v0.0.0-test") {
		t.Errorf("bot version = %q, want the stamped v0.0.0-test", v)
	}
}

// TestDockerfileUsesTheTestedBuild checks the Dockerfile builds with the
// script tested above, on a static non-root base with a numeric user.
// (Docker is not available on CI machines, so the image itself is not built.)
func TestDockerfileUsesTheTestedBuild(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM golang:1\.26\S* AS build$`),
		regexp.MustCompile(`(?m)^RUN .*bash hack/build-bot\.sh /out/bot$`),
		regexp.MustCompile(`(?m)^FROM gcr\.io/distroless/static\S*$`),
		regexp.MustCompile(`(?m)^COPY --from=build /out/bot /bot$`),
		regexp.MustCompile(`(?m)^USER [1-9][0-9]*:[1-9][0-9]*$`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/bot"\]$`),
	} {
		if !want.MatchString(df) {
			t.Errorf("Dockerfile lacks a line matching %s", want)
		}
	}
	if regexp.MustCompile(`(?m)^HEALTHCHECK`).MatchString(df) {
		t.Error("Dockerfile has a HEALTHCHECK; Kubernetes ignores it, use probes")
	}
}
