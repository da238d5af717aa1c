// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"strings"
	"testing"
)

func TestLayoutOf(t *testing.T) {
	long := strings.Repeat("x", 241) // 120 characters a body line at 1280 px: three lines
	tests := []struct {
		name         string
		blocks       string
		lines        []int
		above, total int
	}{
		{"header and one short line", `[{"type":"header","text":{"type":"plain_text","text":"hi"}},
			{"type":"section","text":{"type":"mrkdwn","text":"*bold* and _it_"}}]`, []int{1, 1}, 2, 2},
		{"a long paragraph wraps", `[{"type":"section","text":{"type":"mrkdwn","text":"` + long + `"}}]`, []int{3}, 3, 3},
		{"explicit lines each count", `[{"type":"section","text":{"type":"mrkdwn","text":"a\nb\n\nc"}}]`, []int{4}, 4, 4},
		{"a code block's fences draw no line", "[{\"type\":\"section\",\"text\":{\"type\":\"mrkdwn\",\"text\":\"*Evidence*\\n```\\none\\ntwo\\n```\"}}]", []int{3}, 3, 3},
		{"fields are two a row", `[{"type":"section","fields":[{"type":"mrkdwn","text":"*A:* 1"},{"type":"mrkdwn","text":"*B:* 2"},
			{"type":"mrkdwn","text":"*C*\n3"},{"type":"mrkdwn","text":"*D:* 4"}]}]`, []int{3}, 3, 3},
		{"mentions and dates count as displayed", `[{"type":"context","elements":[{"type":"mrkdwn",
			"text":"by <@U0ALICE> at <!date^1745828521^{time}|08:22 UTC>"}]}]`, []int{1}, 1, 1},
		{"lines after the buttons are not above them", `[{"type":"section","text":{"type":"mrkdwn","text":"a"}},
			{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Go"},"action_id":"a"}]},
			{"type":"context","elements":[{"type":"mrkdwn","text":"after"}]}]`, []int{1, 1, 1}, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := LayoutOf([]byte(tt.blocks), 1280)
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(l.Lines, tt.lines) || l.AboveActions != tt.above || l.Total != tt.total {
				t.Errorf("LayoutOf = %+v, want lines %v, above %d, total %d", l, tt.lines, tt.above, tt.total)
			}
		})
	}
	if _, err := LayoutOf([]byte(`{`), 1280); err == nil {
		t.Error("LayoutOf accepted broken JSON")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
