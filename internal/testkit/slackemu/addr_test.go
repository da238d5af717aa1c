// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestAddrChoosesTheListenAddress: with Options.Addr the emulator listens,
// and advertises its URLs, on that address (the real-node tests use the
// node's address so a pod can reach it); the default stays loopback.
func TestAddrChoosesTheListenAddress(t *testing.T) {
	for _, tc := range []struct{ addr, wantPrefix string }{
		{"", "http://127.0.0.1:"},
		{"127.0.0.2:0", "http://127.0.0.2:"},
	} {
		emu, err := New(Options{Addr: tc.addr})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(emu.APIURL(), tc.wantPrefix) {
			t.Errorf("Addr %q: APIURL %s, want it to start with %s", tc.addr, emu.APIURL(), tc.wantPrefix)
		}
		api := slack.New(DefaultBotToken, slack.OptionAPIURL(emu.APIURL()))
		if _, err := api.AuthTest(); err != nil {
			t.Errorf("Addr %q: auth.test: %v", tc.addr, err)
		}
		emu.Close()
	}
	if _, err := New(Options{Addr: "256.0.0.1:0"}); err == nil {
		t.Error("an invalid Addr did not fail New")
	}
}
