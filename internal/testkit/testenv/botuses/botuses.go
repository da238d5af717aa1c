// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package botuses is internal/botuses under its former path, for the tests
// that import it from here: one list, not a copy.
package botuses

import "github.com/kafka-chatops/kafkabot/internal/botuses"

// Scope is botuses.Scope.
type Scope = botuses.Scope

// Use is botuses.Use.
type Use = botuses.Use

// The scopes of botuses.
const (
	InKafka = botuses.InKafka
	InBot   = botuses.InBot
)

// StateConfigMap is botuses.StateConfigMap.
const StateConfigMap = botuses.StateConfigMap

// All is botuses.All (the same slice).
var All = botuses.All
