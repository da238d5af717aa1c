// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// RunAsUser returns the uid a container of the pod runs as according to
// its spec: the container's runAsUser, else the pod's; nil when neither
// names one (the image's USER applies). A container name that is not in
// the spec gets the pod's.
func RunAsUser(pod *corev1.Pod, container string) *int64 {
	if pod == nil {
		return nil
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if c.Name == container && c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
			uid := *c.SecurityContext.RunAsUser
			return &uid
		}
	}
	if sc := pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
		uid := *sc.RunAsUser
		return &uid
	}
	return nil
}

// RootBrokerError says the broker runs as uid 0 and running the repair's
// debug pod as root was not allowed. The debug pod must run as the
// broker's uid to rename its files, and the deployed admission policy
// admits only non-root debug pods unless the bot's namespace opts in, so
// the automated repair is refused and the manual runbook applies.
type RootBrokerError struct {
	Namespace, Pod string
}

func (e *RootBrokerError) Error() string {
	return fmt.Sprintf("broker %s/%s runs as uid 0: the automated repair would need a root debug pod, which this bot does not run "+
		"(the admission policy admits only non-root debug pods); follow the manual runbook of the finding, or, to allow it, "+
		"set ALLOW_ROOT_BROKER=true and annotate the bot's namespace kafkabot.io/allow-root-broker=true", e.Namespace, e.Pod)
}

// Reason is the refusal in one short sentence, for the line of a
// diagnosis that says why no Approve button is offered.
func (e *RootBrokerError) Reason() string {
	return "the broker runs as uid 0 and root debug pods are off (ALLOW_ROOT_BROKER=true allows them, " +
		"with the bot namespace's annotation kafkabot.io/allow-root-broker)"
}

// CheckRootBroker is the one check of a broker that runs as root: nil when
// the broker's Kafka container does not run as uid 0 by its spec
// (RunAsUser), or when allowRoot (ALLOW_ROOT_BROKER) is set; otherwise a
// *RootBrokerError. The repair runs it when it builds the debug pod
// (recovery.DebugPod) and the diagnosis when it reads the pod
// (diagnose.Snapshot.RepairRefusal), so a diagnosis never offers Approve
// for a repair this check would refuse.
func CheckRootBroker(pod *corev1.Pod, container string, allowRoot bool) error {
	if allowRoot || pod == nil {
		return nil
	}
	if uid := RunAsUser(pod, container); uid == nil || *uid != 0 {
		return nil
	}
	return &RootBrokerError{Namespace: pod.Namespace, Pod: pod.Name}
}

// repairRefusal runs, on the pod a diagnosis read, the checks of its spec
// that the repair runs again when it builds its debug pod, and says in one
// sentence why they refuse ("" when they pass).
func (c *Client) repairRefusal(pod *corev1.Pod, container string) string {
	var rb *RootBrokerError
	if err := CheckRootBroker(pod, container, c.opts.AllowRootBroker); errors.As(err, &rb) {
		return rb.Reason()
	}
	return c.imageRefusal(pod, container)
}
