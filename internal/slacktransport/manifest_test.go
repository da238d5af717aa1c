// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/doctor"
)

// scopeOfMethod maps each Web API method of the API interface to the bot
// scope Slack requires for it ("" = no scope: response_url posts).
var scopeOfMethod = map[string]string{
	"PostMessageContext":   "chat:write",
	"UpdateMessageContext": "chat:write",
	"PostEphemeralContext": "chat:write",
	"SendMessageContext":   "", // only used with a response_url, which needs no scope
}

// TestManifestScopesMatchTheCode keeps deploy/slack-app-manifest.yaml's bot
// scopes exactly what the code calls: every method of the API interface
// (the bot's whole Web API surface) needs a scope the manifest asks for, and
// the manifest asks for nothing else but `commands` for /kafka and the
// scopes `bot doctor` needs (doctor.SlackScopes).
func TestManifestScopesMatchTheCode(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "poster.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "API" {
			return true
		}
		for _, m := range ts.Type.(*ast.InterfaceType).Methods.List {
			methods = append(methods, m.Names[0].Name)
		}
		return false
	})
	if len(methods) == 0 {
		t.Fatal("API interface not found in poster.go")
	}
	// `bot doctor` (internal/doctor) reads conversations.info too.
	want := slices.Clone(doctor.SlackScopes)
	for _, m := range methods {
		scope, known := scopeOfMethod[m]
		if !known {
			t.Errorf("API method %s has no known scope: add it to scopeOfMethod and the manifest", m)
			continue
		}
		if scope != "" && !slices.Contains(want, scope) {
			want = append(want, scope)
		}
	}
	slices.Sort(want)

	raw, err := os.ReadFile("../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Features struct {
			SlashCommands []struct {
				Command string `json:"command"`
			} `json:"slash_commands"`
		} `json:"features"`
		OAuthConfig struct {
			Scopes struct {
				Bot []string `json:"bot"`
			} `json:"scopes"`
		} `json:"oauth_config"`
		Settings struct {
			Interactivity struct {
				IsEnabled bool `json:"is_enabled"`
			} `json:"interactivity"`
			SocketModeEnabled bool `json:"socket_mode_enabled"`
		} `json:"settings"`
	}
	if err := yaml.Unmarshal(raw, &manifest); err != nil {
		t.Fatalf("parsing the Slack app manifest: %v", err)
	}
	got := slices.Sorted(slices.Values(manifest.OAuthConfig.Scopes.Bot))
	if !slices.Equal(got, want) {
		t.Errorf("manifest bot scopes = %v, the code needs exactly %v", got, want)
	}
	if len(manifest.Features.SlashCommands) != 1 || manifest.Features.SlashCommands[0].Command != "/kafka" {
		t.Errorf("manifest slash commands = %+v, want just /kafka", manifest.Features.SlashCommands)
	}
	if !manifest.Settings.SocketModeEnabled || !manifest.Settings.Interactivity.IsEnabled {
		t.Error("manifest must enable Socket Mode and interactivity (the buttons)")
	}
}
