// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"sync"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
)

// Decisions records each click on an approval's buttons before the bot
// acts on it, in a record every replica shares (*kube.DecisionStore keeps
// it in the cluster). Decide applies the click to the approval's record
// (creating it when absent) and says what it did; on an error the bot
// acts on nothing.
type Decisions interface {
	Decide(ctx context.Context, click approval.Click) (approval.Outcome, error)
}

// memoryDecisions keeps the records in this process: correct for one
// replica only. It is the default when Options.Decisions is nil.
type memoryDecisions struct {
	mu      sync.Mutex
	records *slacktransport.LRU[string, *approval.Record]
}

// memoryDecisionRecords bounds the in-memory records.
const memoryDecisionRecords = 4096

func newMemoryDecisions() *memoryDecisions {
	return &memoryDecisions{records: slacktransport.NewLRU[string, *approval.Record](memoryDecisionRecords)}
}

func (m *memoryDecisions) Decide(_ context.Context, click approval.Click) (approval.Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fresh := approval.NewRecord(click.Approval, click.Required)
	rec, _ := m.records.AddIfAbsent(click.Approval.ID, &fresh)
	return approval.Apply(rec, click)
}
