// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// ClusterName is the Kubernetes cluster's name in the demo's message
// headers (the bot's CLUSTER_NAME).
const ClusterName = "kind-demo"

// pictureTime is the README picture's clock: the seed incident's morning.
var pictureTime = time.Date(2025, 4, 28, 8, 31, 0, 0, time.UTC)

// PictureView is the diagnosis the README picture shows: the seed
// incident's log read by the real diagnosis engine, on the demo's
// crash-looping broker, at a fixed time, with a stand-in approval token
// (the button's value is not shown).
func PictureView() (slackview.Diagnosis, error) {
	log := CrashLog()
	snap := diagnose.Snapshot{
		Namespace: Namespace, Pod: BrokerPod, UID: "00000000-0000-4000-8000-000000000012",
		Node: "kind-worker", Phase: "Running", KafkaCluster: Release, Role: diagnose.RoleBroker,
		NodeID: fmt.Sprint(BrokerNodeID), KafkaContainer: "kafka",
		Containers: []diagnose.ContainerState{{
			Name: "kafka", RestartCount: 5, WaitingReason: "CrashLoopBackOff", Image: KafkaImage,
			LastTerminated: &diagnose.Termination{Reason: "Error", ExitCode: 1, FinishedAt: pictureTime.Add(-2 * time.Minute)},
		}},
		Claims:   []diagnose.VolumeClaim{{Volume: "data", ClaimName: "data-" + BrokerPod, MountPath: MountPath}},
		Log:      log,
		LogBytes: len(log),
	}
	findings := diagnose.Default().Diagnose(snap)
	if len(findings) == 0 {
		return slackview.Diagnosis{}, fmt.Errorf("%w: the seed incident's log matched no rule", ErrStoryFailed)
	}
	return slackview.Diagnosis{
		ClusterName: ClusterName, Snapshot: snap, Findings: findings, Requester: Requester,
		Token: "stand-in-approval-token", ExpiresAt: pictureTime.Add(30 * time.Minute), Now: pictureTime,
	}, nil
}

// PictureSource is the README picture's source: the diagnosis message's
// Block Kit blocks as the bot posts them, indented JSON.
func PictureSource() ([]byte, error) {
	v, err := PictureView()
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v.Message().Blocks, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the picture's blocks: %w", err)
	}
	return append(out, '\n'), nil
}
