// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// kafkaGate is the repair gates' view of Kafka for one Kubernetes cluster
// (internal/kafkahealth), or nil when no Kafka access is configured there:
// the gates then say the quorum was not checked.
func kafkaGate(access []fleet.KafkaAccess, cs kubernetes.Interface) recovery.KafkaHealth {
	if len(access) == 0 {
		return nil
	}
	return kafkaAdapter{g: &kafkahealth.Gate{Access: access, ReadSecret: func(ctx context.Context, ns, name string) (map[string][]byte, error) {
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	}}}
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
