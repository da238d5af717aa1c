// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// imageVerdicts are the admission policy's verdicts on the debug image a
// repair would run, by namespace and image repository: the refusal, or ""
// for admitted. They are learnt by dry runs outside the diagnosis
// (doctor.ProbeImages, which `bot serve` runs at start and every few
// minutes), so a diagnosis costs no extra request.
type imageVerdicts struct {
	mu       sync.Mutex
	refusals map[string]string // namespace + "/" + repository -> refusal
}

// RecordImageVerdict records what the admission policy answered to the
// debug pod of a repair that would run an image of repository in
// namespace: refusal says why it was refused, "" that it was admitted.
// A diagnosis of a broker whose debug image is of a refused repository
// then offers no Approve and says why (Snapshot.RepairRefusal).
func (c *Client) RecordImageVerdict(namespace, repository, refusal string) {
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	if c.images.refusals == nil {
		c.images.refusals = map[string]string{}
	}
	key := namespace + "/" + repository
	if refusal == "" {
		delete(c.images.refusals, key)
		return
	}
	c.images.refusals[key] = refusal
}

// imageRefusal is the recorded refusal of the debug image a repair of pod
// would run ("" when none is recorded).
func (c *Client) imageRefusal(pod *corev1.Pod, container string) string {
	repo := DebugImageRepository(pod, container, c.opts.DebugImage)
	if repo == "" {
		return ""
	}
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	return c.images.refusals[pod.Namespace+"/"+repo]
}

// DebugImageRepository is the repository of the image a repair of pod's
// container would run: DEBUG_IMAGE's when set (override), else the
// repository of the image the kubelet reports for the container (by
// digest), else the spec's image. "" when none is known.
func DebugImageRepository(pod *corev1.Pod, container, override string) string {
	ref := override
	if ref == "" {
		for _, st := range pod.Status.ContainerStatuses {
			if st.Name == container && strings.Contains(st.ImageID, "@sha256:") {
				ref = strings.TrimPrefix(st.ImageID, "docker-pullable://")
			}
		}
	}
	if ref == "" {
		for _, c := range pod.Spec.Containers {
			if c.Name == container {
				ref = c.Image
			}
		}
	}
	repo, _, _ := strings.Cut(ref, "@")
	return repo
}
