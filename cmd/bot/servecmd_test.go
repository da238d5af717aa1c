// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/logging"
)

// TestStartupLoggingRoutesKlog: after bot serve's startupLogging, what
// client-go logs through klog is a JSON line of the bot's logger.
func TestStartupLoggingRoutesKlog(t *testing.T) {
	var buf logging.Buffer
	log := logging.New(&buf, "json", slog.LevelInfo, logging.NewRedactor())
	t.Cleanup(klog.ClearLogger)
	startupLogging(log, &config.Config{Approvers: []string{"U0A"}, AlertChannel: "C0A", KafkaNamespaces: []string{"kafka"}, LeaderElection: true, RepairSettle: 1, ForbidSelfApproval: true, SlackAPIURL: "https://slack.com/api/"}, nil)
	klog.Infof("Starting reflector *v1.Pod (%s)", "10m0s")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line (the klog one, no warning for a complete configuration), got:\n%s", buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec["msg"] != "Starting reflector *v1.Pod (10m0s)" || rec["logger"] != "klog" {
		t.Errorf("klog line %s (%v); want a JSON record with logger=klog", lines[0], err)
	}
}
