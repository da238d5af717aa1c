// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"fmt"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// GateKafkaHealth is the gate that asks Kafka itself (over the Kafka
// protocol) whether a broker may be repaired now.
const GateKafkaHealth = "kafka-health"

// KafkaVerdict is what Kafka's own view says.
type KafkaVerdict int

// Kafka verdicts. KafkaNotChecked means no bootstrap address is configured
// for the broker's cluster: the gates then run as they always did.
const (
	KafkaNotChecked KafkaVerdict = iota
	KafkaPass
	KafkaFail
	KafkaDefer
)

// KafkaCheck is one verdict and its one human line, e.g. "quorum: leader
// 1, 3/3 voters caught up; brokers: no other fenced; no partition relies on
// broker 4 alone".
type KafkaCheck struct {
	Verdict KafkaVerdict
	Line    string
}

// KafkaHealth reads Kafka's own view of a broker's cluster and decides
// (internal/kafkahealth over franz-go; the serve wiring adapts it). Both
// calls read the cluster once.
type KafkaHealth interface {
	// BeforeMove: the metadata quorum has a leader and a majority of
	// caught-up voters, no other broker is fenced, and the broker is not
	// the only in-sync replica of a replicated partition.
	BeforeMove(ctx context.Context, snap diagnose.Snapshot) KafkaCheck
	// AfterRestart: the broker is registered, unfenced, caught up as an
	// observer, and no partition is under min.insync.replicas because of
	// it. Fail means "not yet".
	AfterRestart(ctx context.Context, snap diagnose.Snapshot) KafkaCheck
}

// kafkaNotChecked is the thread's note when Kafka was not asked.
const kafkaNotChecked = GateKafkaHealth + ": no Kafka bootstrap address is configured for this cluster (KAFKA_BOOTSTRAP or the CLUSTERS_FILE kafka list), " +
	"so the metadata quorum, fenced brokers and ISR were not checked over the Kafka protocol"

// checkKafkaHealth refuses a repair Kafka's own view does not allow, and
// defers (refuses, to be approved again later) when that view is unclear.
// A passing view is shown in the thread.
func checkKafkaHealth(ctx context.Context, in *gateInput) error {
	if in.opts.Kafka == nil {
		in.warnings = append(in.warnings, kafkaNotChecked)
		return nil
	}
	c := in.opts.Kafka.BeforeMove(ctx, in.snap)
	switch c.Verdict {
	case KafkaPass:
		in.warnings = append(in.warnings, GateKafkaHealth+": "+c.Line)
		return nil
	case KafkaFail:
		return refuse(GateKafkaHealth, "%s", c.Line)
	case KafkaDefer:
		return refuse(GateKafkaHealth, "Kafka's own view is unclear, so the repair waits (approve again later): %s", c.Line)
	}
	in.warnings = append(in.warnings, kafkaNotChecked)
	return nil
}

// kafkaPollInterval is how often the post-repair check reads Kafka.
const kafkaPollInterval = 2 * time.Second

// waitKafkaRecovered waits, up to the gates' KafkaCatchUpTimeout, for
// Kafka to see the repaired broker registered, unfenced and caught up,
// and says what it saw in one line of the thread (nothing, and no API
// request, when Kafka is not configured: the gates' note said so). It never fails the
// repair: the pod is already Ready and settled, and a broker still in log
// recovery must be left alone, not re-diagnosed or restarted.
func (run *repairRun) waitKafkaRecovered(ctx context.Context) {
	kh := run.r.opts.Gates.Kafka
	if kh == nil {
		return // the gates' note already says Kafka is not asked
	}
	bound := run.r.opts.Gates.KafkaCatchUpTimeout
	if bound <= 0 {
		bound = 5 * time.Minute
	}
	start := run.r.opts.Clock.Now()
	deadline := start.Add(bound)
	var c KafkaCheck
	for {
		c = kh.AfterRestart(ctx, run.snap)
		if c.Verdict == KafkaPass || c.Verdict == KafkaNotChecked || !run.r.opts.Clock.Now().Before(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-run.r.opts.Clock.After(kafkaPollInterval):
		}
	}
	took := run.r.opts.Clock.Since(start).Round(time.Second)
	var detail string
	switch c.Verdict {
	case KafkaPass:
		detail = fmt.Sprintf("Kafka sees the broker back after %s: %s", took, c.Line)
	case KafkaNotChecked:
		detail = "Kafka was not asked whether the broker caught up: no bootstrap address configured"
	default:
		detail = fmt.Sprintf("Kafka does not see the broker caught up after %s (it may still be recovering its logs: leave it running): %s", took, c.Line)
	}
	run.rep.Report(ctx, Progress{Step: "Kafka", Status: StepDone, Detail: detail})
}
