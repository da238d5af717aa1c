// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// kafkaAnswers is a KafkaHealth that answers from a script, one check per
// call (the last repeats), and counts the calls.
type kafkaAnswers struct {
	before []KafkaCheck
	after  []KafkaCheck
	calls  int
}

func (k *kafkaAnswers) next(list []KafkaCheck) KafkaCheck {
	k.calls++
	if k.calls-1 < len(list) {
		return list[k.calls-1]
	}
	return list[len(list)-1]
}

func (k *kafkaAnswers) BeforeMove(context.Context, diagnose.Snapshot) KafkaCheck {
	return k.next(k.before)
}
func (k *kafkaAnswers) AfterRestart(context.Context, diagnose.Snapshot) KafkaCheck {
	return k.next(k.after)
}

func TestKafkaGate(t *testing.T) {
	tests := []struct {
		name    string
		kafka   KafkaHealth
		refuse  string // "" = passes
		warning string
	}{
		{name: "not configured: passes and says so", kafka: nil, warning: "so the metadata quorum, fenced brokers and ISR were not checked"},
		{name: "pass shows the facts", kafka: &kafkaAnswers{before: []KafkaCheck{{KafkaPass, "quorum: leader 1, 3/3 voters caught up"}}},
			warning: "kafka-health: quorum: leader 1, 3/3 voters caught up"},
		{name: "fail refuses with the line", kafka: &kafkaAnswers{before: []KafkaCheck{{KafkaFail, "brokers: 5 fenced too: one broker at a time"}}},
			refuse: "safety gate kafka-health refused: brokers: 5 fenced too: one broker at a time"},
		{name: "unclear defers", kafka: &kafkaAnswers{before: []KafkaCheck{{KafkaDefer, "quorum: no leader reported (epoch 7)"}}},
			refuse: "safety gate kafka-health refused: Kafka's own view is unclear, so the repair waits (approve again later): quorum: no leader reported (epoch 7)"},
		{name: "no access for this cluster", kafka: &kafkaAnswers{before: []KafkaCheck{{KafkaNotChecked, ""}}}, warning: "were not checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &gateInput{opts: GateOptions{Kafka: tt.kafka}}
			err := checkKafkaHealth(context.Background(), in)
			if tt.refuse != "" {
				var ge *GateError
				if !errors.As(err, &ge) || ge.Gate != GateKafkaHealth || err.Error() != tt.refuse {
					t.Fatalf("err = %v, want the refusal %q", err, tt.refuse)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if len(in.warnings) != 1 || !strings.Contains(in.warnings[0], tt.warning) {
				t.Errorf("warnings %q, want one saying %q", in.warnings, tt.warning)
			}
		})
	}
	if gates[len(gates)-1].name != GateKafkaHealth {
		t.Errorf("the Kafka gate is not in the gate table (last is %s)", gates[len(gates)-1].name)
	}
}

// progressLog records reports.
type progressLog struct {
	mu sync.Mutex
	p  []Progress
}

func (l *progressLog) Report(_ context.Context, p Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p = append(l.p, p)
}
func (l *progressLog) Finish(context.Context, Summary) {}

func TestKafkaWaitAfterRestart(t *testing.T) {
	back := KafkaCheck{KafkaPass, "broker 4: registered, unfenced; observer lag 0"}
	notYet := KafkaCheck{KafkaFail, "broker 4: registered, fenced"}
	tests := []struct {
		name  string
		kafka *kafkaAnswers
		bound time.Duration
		calls int
		says  string
	}{
		{name: "back at once", kafka: &kafkaAnswers{after: []KafkaCheck{back}}, bound: time.Minute, calls: 1, says: "Kafka sees the broker back after 0s: broker 4: registered, unfenced; observer lag 0"},
		{name: "back on the third read", kafka: &kafkaAnswers{after: []KafkaCheck{notYet, {KafkaDefer, "unclear"}, back}}, bound: time.Minute, calls: 3, says: "Kafka sees the broker back"},
		{name: "not within the bound", kafka: &kafkaAnswers{after: []KafkaCheck{notYet}}, bound: 3 * time.Second, calls: 3,
			says: "does not see the broker caught up after 4s (it may still be recovering its logs: leave it running): broker 4: registered, fenced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &progressLog{}
			clk := &stepClock{Clock: clock.RealClock{}, now: time.Unix(1000, 0)}
			run := &repairRun{r: &Repairer{opts: RepairOptions{Clock: clk, Gates: GateOptions{Kafka: tt.kafka, KafkaCatchUpTimeout: tt.bound}}}, rep: log}
			run.waitKafkaRecovered(context.Background())
			if tt.kafka.calls != tt.calls {
				t.Errorf("%d reads of Kafka, want %d", tt.kafka.calls, tt.calls)
			}
			if len(log.p) != 1 || !strings.Contains(log.p[0].Detail, tt.says) {
				t.Errorf("reports %+v, want one saying %q", log.p, tt.says)
			}
		})
	}
	log := &progressLog{}
	run := &repairRun{r: &Repairer{opts: RepairOptions{Clock: clock.RealClock{}}}, rep: log}
	run.waitKafkaRecovered(context.Background())
	if len(log.p) != 0 {
		t.Errorf("without Kafka access: reports %+v, want none (the gate's note says it)", log.p)
	}
}

// stepClock is a clock whose After fires at once and moves time forward.
type stepClock struct {
	clock.Clock
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- now
	return ch
}
