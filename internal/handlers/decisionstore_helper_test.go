// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// signedDecisions is the bot's decision store on cs, signing records with
// the tests' APPROVAL_SECRET, as bot serve does.
func signedDecisions(cs kubernetes.Interface) *kube.DecisionStore {
	return kube.New(cs, kube.Options{}).Decisions(testSecret)
}
