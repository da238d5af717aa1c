// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
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
	return check(a.g.BeforeMove(ctx, s.Namespace, s.Cluster, s.NodeID))
}

func (a kafkaAdapter) AfterRestart(ctx context.Context, s diagnose.Snapshot) recovery.KafkaCheck {
	return check(a.g.AfterRestart(ctx, s.Namespace, s.Cluster, s.NodeID))
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
