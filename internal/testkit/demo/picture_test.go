// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README picture (docs/slack-message.png) is drawn from
// docs/slack-message.json. This test fails when the code no longer renders
// those blocks: regenerate both with `go run ./internal/testkit/demo/screenshot`.
func TestREADMEPictureSourceIsCurrent(t *testing.T) {
	want, err := PictureSource()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "slack-message.json"))
	if err != nil {
		t.Fatalf("the picture's source is missing (go run ./internal/testkit/demo/screenshot writes it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/slack-message.json is not what the code renders now; run `go run ./internal/testkit/demo/screenshot` "+
			"and commit docs/slack-message.json and docs/slack-message.png.\nnow renders:\n%s", want)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/slack-message.png)") || !strings.Contains(string(readme), "rendering of the Block Kit payload") {
		t.Error("README does not show docs/slack-message.png captioned as a rendering of the Block Kit payload")
	}
}
