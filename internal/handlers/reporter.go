// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"log/slog"

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
		return logReporter{log: log}
	}
	cluster := ""
	if b.multi() && m != nil {
		cluster = m.Name
	}
	return repairthread.NewResumed(b.poster, channel, threadTS, slackview.ResumedHead(cluster), log, b.clock)
}

// logReporter reports a resumed terminal repair as log lines.
type logReporter struct{ log *slog.Logger }

func (l logReporter) Report(_ context.Context, p recovery.Progress) {
	l.log.Info("resumed repair step", "step", p.Step, "status", string(p.Status), "detail", p.Detail)
}

func (l logReporter) Finish(_ context.Context, s recovery.Summary) {
	l.log.Info("resumed repair finished", "outcome", string(s.Outcome), "summary", s.Text)
}
