// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package e2e runs the bot end to end: a slash command typed in the Slack
// emulator (internal/testkit/slackemu, reached by the real slack-go Socket Mode
// client over a WebSocket) goes to the bot (internal/handlers with the real
// diagnosis engine and repair executor), which acts on a real
// kube-apiserver and etcd (internal/testkit/testenv) as deploy/'s ServiceAccount,
// RBAC and admission policy enforced. The kubelet stand-in
// (internal/testkit/kubesim) makes brokers crash-loop with real crash logs, runs the
// bot's debug pod script under busybox against a host directory laid out
// like a Bitnami broker volume, and plays the StatefulSet controller that
// recreates a deleted broker.
//
// Every scenario asserts both what a person sees in Slack and what changed
// on the volume and in the cluster. One control plane serves the package;
// each test has its own namespace, kubelet, Slack emulator and bot.
package e2e

import (
	"os"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
