// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShippedBuildLeavesOutDemoAndTestCode: the shipped build (-tags
// nodemo, hack/build-bot.sh) links none of the packages only `bot demo`
// and the tests use (nothing of internal/testkit), so `bot serve` never runs
// their initialisers; the default build (go run ./cmd/bot demo) still has
// them.
func TestShippedBuildLeavesOutDemoAndTestCode(t *testing.T) {
	demoOnly := []string{
		"github.com/kafka-chatops/kafkabot/internal/testkit/demo",
		"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu",
		"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim",
		"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi",
		"k8s.io/client-go/kubernetes/fake",
	}
	deps := func(tags ...string) map[string]bool {
		t.Helper()
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", tags, err)
		}
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	shipped, full := deps("-tags", "nodemo"), deps()
	for _, p := range demoOnly {
		if shipped[p] {
			t.Errorf("the shipped build links %s", p)
		}
		if !full[p] {
			t.Errorf("the default build lacks %s: is this list still right?", p)
		}
	}
	// Nor any other package of the test and demo kit (internal/testkit).
	for p := range shipped {
		if strings.HasPrefix(p, "github.com/kafka-chatops/kafkabot/internal/testkit/") {
			t.Errorf("the shipped build links %s, a package of the test kit", p)
		}
	}
	for _, p := range []string{"github.com/kafka-chatops/kafkabot/internal/handlers", "github.com/kafka-chatops/kafkabot/internal/recovery"} {
		if !shipped[p] {
			t.Errorf("the shipped build lacks %s", p)
		}
	}
}
