// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// KafkaSecretsDir is where the bot's pod mounts the Secrets that Kafka
// access entries name (CLUSTERS_FILE's kafka list, KAFKA_SECRET): each a
// Secret of the bot's own namespace mounted as a directory, one file per
// key. The bot never reads Secrets through the API: its RBAC grants none,
// so a stolen token reads no Kafka credentials.
const KafkaSecretsDir = "/etc/kafkabot/kafka"

// kafkaGate is the repair gates' view of Kafka for one Kubernetes cluster
// (internal/kafkahealth), or nil when no Kafka access is configured there:
// the gates then say the quorum was not checked. Credentials are read from
// secretsDir (KafkaSecretsDir in the pod).
func kafkaGate(access []fleet.KafkaAccess, secretsDir string) recovery.KafkaHealth {
	if len(access) == 0 {
		return nil
	}
	return kafkaAdapter{g: &kafkahealth.Gate{Access: access, ReadSecret: mountedSecret(secretsDir)}}
}

// mountedSecret reads the Secret called name from its mount under dir: a
// file per key (Kubernetes' "..data" links and dot files are skipped).
func mountedSecret(dir string) kafkahealth.SecretReader {
	return func(_ context.Context, _, name string) (map[string][]byte, error) {
		if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("secret name %q: want a Kubernetes object name", name)
		}
		root := filepath.Join(dir, name)
		entries, err := os.ReadDir(root)
		if err != nil {
			return nil, fmt.Errorf("the Secret %s is not mounted at %s (mount it in the bot's pod): %w", name, root, err)
		}
		data := map[string][]byte{}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(root, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("reading key %s of the Secret %s: %w", e.Name(), name, err)
			}
			data[e.Name()] = b
		}
		return data, nil
	}
}

// kafkaAdapter turns kafkahealth decisions into the gates' KafkaCheck.
type kafkaAdapter struct{ g *kafkahealth.Gate }

func (a kafkaAdapter) BeforeMove(ctx context.Context, s diagnose.Snapshot) recovery.KafkaCheck {
	return check(a.g.BeforeMove(ctx, s.Namespace, s.KafkaCluster, s.NodeID))
}

func (a kafkaAdapter) AfterRestart(ctx context.Context, s diagnose.Snapshot) recovery.KafkaCheck {
	return check(a.g.AfterRestart(ctx, s.Namespace, s.KafkaCluster, s.NodeID))
}

func check(d kafkahealth.Decision, configured bool) recovery.KafkaCheck {
	if !configured {
		return recovery.KafkaCheck{Verdict: recovery.KafkaNotChecked}
	}
	v := recovery.KafkaDefer
	switch d.Verdict {
	case kafkahealth.Pass:
		v = recovery.KafkaPass
	case kafkahealth.Fail:
		v = recovery.KafkaFail
	}
	return recovery.KafkaCheck{Verdict: v, Line: d.Line}
}

// cardKafkaTimeout bounds the read of Kafka's own view for a card with
// Approve: a slow or unreachable cluster delays the card by at most this.
const cardKafkaTimeout = 5 * time.Second

// cardKafkaView reads Kafka's own view of a broker's cluster for a card
// with Approve: the repair gate's BeforeMove (the check Approve runs
// again), once, within timeout. A read that fails, panics or does not
// answer in time is an unclear view on the card, never a crash or a long
// wait; a read still running then ends with its cancelled context.
func cardKafkaView(kh recovery.KafkaHealth, timeout time.Duration, log *slog.Logger) func(context.Context, diagnose.Snapshot) slackview.KafkaView {
	return func(ctx context.Context, s diagnose.Snapshot) slackview.KafkaView {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		got := make(chan recovery.KafkaCheck, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					log.Error("reading Kafka's view for a card panicked", "namespace", s.Namespace, "pod", s.Pod, "panic", fmt.Sprint(r))
					got <- recovery.KafkaCheck{Verdict: recovery.KafkaDefer, Line: "reading Kafka's view failed unexpectedly (see the bot's log)"}
				}
			}()
			got <- kh.BeforeMove(ctx, s)
		}()
		select {
		case c := <-got:
			return cardView(c)
		case <-ctx.Done():
			return slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: fmt.Sprintf("Kafka did not answer within %s", timeout)}
		}
	}
}

// cardView is a gate check in the card's words (slackview).
func cardView(c recovery.KafkaCheck) slackview.KafkaView {
	switch c.Verdict {
	case recovery.KafkaPass:
		return slackview.KafkaView{Outcome: slackview.KafkaPass, Line: c.Line}
	case recovery.KafkaFail:
		return slackview.KafkaView{Outcome: slackview.KafkaFail, Line: c.Line}
	case recovery.KafkaDefer:
		return slackview.KafkaView{Outcome: slackview.KafkaDefer, Line: c.Line}
	}
	return slackview.KafkaView{Outcome: slackview.KafkaNotChecked}
}
