// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"strings"
	"testing"
)

// TestStatusShowsTheRepairNotice: when the admission self-check disabled
// repairs, /kafka status says so under its header, and says nothing when
// the notice is empty.
func TestStatusShowsTheRepairNotice(t *testing.T) {
	const notice = "⛔ Repairs are disabled: namespace kafka: admission policy kafka-bot-guard NOT enforced"
	for _, tc := range []struct {
		notice string
		want   bool
	}{{notice, true}, {"", false}} {
		h := startBot(t, func(o *Options) { o.Clusters[0].RepairNotice = func() string { return tc.notice } })
		h.slash(requester, channel, "status")
		h.waitFor("the status", func() bool { return len(h.emu.Messages(channel)) == 1 })
		msg := h.emu.Messages(channel)[0]
		text := blockTexts(t, msg.Blocks)
		if got := strings.Contains(text, "Repairs are disabled"); got != tc.want {
			t.Errorf("notice %q: status shows it = %v:\n%s", tc.notice, got, text)
		}
		if tc.want && (!strings.Contains(text, "kafka / foobar") || strings.Index(text, "Repairs are disabled") > strings.Index(text, "kafka / foobar")) {
			t.Errorf("the notice must come before the pods:\n%s", text)
		}
	}
}
