// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// TestServeWithoutKubeconfigPointsAtKUBECONFIG: `bot serve` takes no
// flags, so when it finds no Kubernetes configuration it says to set
// KUBECONFIG (or run in a pod), never to "pass --kubeconfig FILE", a flag
// it would refuse (issue 25 item 6).
func TestServeWithoutKubeconfigPointsAtKUBECONFIG(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(t.TempDir(), "absent-kubeconfig")
	t.Setenv("HOME", home)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, tc := range []struct{ name, kubeconfig, want string }{
		{"KUBECONFIG names no file", missing, "KUBECONFIG=" + missing + ": no such file"},
		{"no KUBECONFIG, no ~/.kube/config, not a pod", "", filepath.Join(home, ".kube", "config") + " does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SLACK_APP_TOKEN", "xapp-placeholder-app-token")
			t.Setenv("SLACK_BOT_TOKEN", slackemu.DefaultBotToken)
			t.Setenv("APPROVAL_SECRET", serveSecret)
			t.Setenv("KUBECONFIG", tc.kubeconfig)
			code, _, stderr := runCLI(t, "serve")
			if code != 1 {
				t.Errorf("exit %d, want 1: %s", code, stderr)
			}
			for _, want := range []string{tc.want, "set KUBECONFIG", "takes no --kubeconfig flag"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "pass --kubeconfig") {
				t.Errorf("bot serve tells the user to pass --kubeconfig, a flag it does not take:\n%s", stderr)
			}
		})
	}
}
