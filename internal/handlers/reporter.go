// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/repairthread"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// resumeReporter is the Reporter for a repair that a restarted bot resumes
// (recovery.Repairer.Resume): it posts in the repair's original thread but
// does not rewrite the parent message, whose blocks this process never saw.
// A repair started from the terminal (no channel) is reported in the log.
// On a multi-cluster bot the checklist's head names m's cluster, as the
// first run's plan line does (its outcome names namespace/pod).
func (b *Bot) resumeReporter(m *member, channel, threadTS string) recovery.Reporter {
	log := b.log
	if b.multi() && m != nil {
		log = log.With("cluster", m.Name)
	}
	if channel == "" || threadTS == "" {
		return recovery.LogReporter{Log: log}
	}
	cluster := ""
	if b.multi() && m != nil {
		cluster = m.Name
	}
	return repairthread.NewResumed(b.poster, channel, threadTS, slackview.ResumedHead(cluster), log, b.clock)
}
