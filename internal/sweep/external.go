// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"fmt"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// maxExternalHints bounds the external alerts remembered; beyond it the
// hints of pods the informer no longer has are dropped.
const maxExternalHints = 4096

// externalHint is what an external alert said about a pod.
type externalHint struct {
	// channel is the Slack channel the alert's route named ("" = default).
	channel string
	// source and sourceAlert name who raised the alert and its name.
	source, sourceAlert string
}

// External feeds an external alert into the sweep's own alert pipeline, so
// that it shares the sweep's alert state: one alert per (pod, rule)
// whichever side saw the crash first, never two posts for one crash.
//
// A firing alert evaluates the pod now: the pod is diagnosed and posted
// (to a.Channel when set and the alert was not posted yet) when the sweep
// finds it unhealthy; a pod that looks healthy is not posted. A resolved
// alert evaluates it again: its alert resolves at once when the pod is
// Ready (or gone), without the resolve grace, and stays open while the pod
// is still unhealthy. Only the leader acts; elsewhere External returns
// alert.ErrNotLeader (the caller should make the sender retry).
func (s *Sweeper) External(ctx context.Context, a alert.External) (alert.ExternalOutcome, error) {
	k := kube.PodKey{Namespace: a.Namespace, Name: a.Pod}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil || s.leaderCtx == nil || s.leaderCtx.Err() != nil {
		return "", alert.ErrNotLeader
	}
	_, known := s.pods.Get(k)
	open := false
	for _, r := range s.st.Alerts {
		if r.firing() && r.Namespace == a.Namespace && r.Pod == a.Pod {
			open = true
			break
		}
	}
	if !known && !open {
		delete(s.external, k)
		return alert.ExternalUnknownPod, nil
	}
	var resolved map[kube.PodKey]bool
	if a.Firing {
		s.pruneExternalLocked()
		s.external[k] = externalHint{channel: a.Channel, source: a.Source, sourceAlert: a.SourceAlert}
	} else {
		delete(s.external, k)
		resolved = map[kube.PodKey]bool{k: true}
	}
	if _, err := s.evaluateWith(ctx, []kube.PodKey{k}, false, resolved); err != nil {
		return "", fmt.Errorf("external alert for %s: %w", k, err)
	}
	now := s.clock.Now()
	outcome := alert.ExternalHealthy
	for _, r := range s.st.Alerts {
		if !r.firing() || r.Namespace != a.Namespace || r.Pod != a.Pod {
			continue
		}
		switch {
		case !a.Firing:
			outcome = alert.ExternalStillFiring
		case s.st.silencedBy(r, now) != nil:
			outcome = alert.ExternalSilenced
		default:
			return alert.ExternalFiring, nil
		}
	}
	return outcome, nil
}

// pruneExternalLocked drops the hints of pods the informer no longer has
// once there are too many.
func (s *Sweeper) pruneExternalLocked() {
	if len(s.external) < maxExternalHints {
		return
	}
	for k := range s.external {
		if _, ok := s.pods.Get(k); !ok {
			delete(s.external, k)
		}
	}
}
