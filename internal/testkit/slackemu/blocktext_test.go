// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackemu

import (
	"encoding/json"
	"testing"
)

func TestBlocksText(t *testing.T) {
	tests := []struct {
		name, blocks, want string
		wantErr            bool
	}{
		{"section and context", `[{"type":"section","text":{"type":"mrkdwn","text":"one"}},{"type":"context","elements":[{"type":"mrkdwn","text":"two"}]}]`, "one\ntwo\n", false},
		{"button label, not its value", `[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Approve"},"value":"secret-token"}]}]`, "Approve\n", false},
		{"empty", `[]`, "", false},
		{"not JSON", `[{`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BlocksText(json.RawMessage(tt.blocks))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("BlocksText = %q, want %q", got, tt.want)
			}
		})
	}
}
