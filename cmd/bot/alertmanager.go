// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

// alertmanagerPath is where `bot serve` takes Alertmanager's webhook, on
// HTTP_ADDR beside /healthz and /metrics (internal/serve builds the
// receiver when ALERTMANAGER_TOKEN is set).
const alertmanagerPath = "/alertmanager"
