// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// handoffTTL is how long a pod read by FindPod may stand in for Inspect's
// own read of the same pod: long enough for the usual FindPod-then-Inspect
// pair of one command, far too short to matter for freshness.
const handoffTTL = 2 * time.Second

// handoffMax bounds the pods held at once (one per in-flight command).
const handoffMax = 64

// podHandoff passes a pod FindPod just read to the Inspect that follows,
// saving one API request per diagnosis. Each pod is taken at most once.
type podHandoff struct {
	mu   sync.Mutex
	pods map[string]handedPod
	now  func() time.Time
}

type handedPod struct {
	pod *corev1.Pod
	at  time.Time
}

func newPodHandoff() *podHandoff {
	return &podHandoff{pods: map[string]handedPod{}, now: time.Now}
}

// put keeps p for a following take; old entries are dropped first.
func (h *podHandoff) put(p *corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for k, v := range h.pods {
		if now.Sub(v.at) > handoffTTL {
			delete(h.pods, k)
		}
	}
	if len(h.pods) >= handoffMax {
		return
	}
	h.pods[p.Namespace+"/"+p.Name] = handedPod{pod: p.DeepCopy(), at: now}
}

// take returns the pod put for namespace/name within handoffTTL, once.
func (h *podHandoff) take(namespace, name string) (*corev1.Pod, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := namespace + "/" + name
	v, ok := h.pods[key]
	delete(h.pods, key)
	if !ok || h.now().Sub(v.at) > handoffTTL {
		return nil, false
	}
	return v.pod, true
}
