// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package integration runs the bot's Kubernetes side against a real
// kube-apiserver and etcd (internal/testkit/testenv), with RBAC enforced and the
// bot acting as deploy/'s ServiceAccount.
package integration

import (
	"os"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
