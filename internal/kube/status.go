// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// KafkaPods returns a status-only Snapshot of every Kafka pod in scope
// (KAFKA_NAMESPACES, KAFKA_POD_SELECTOR), for `/kafka status`: phase, node,
// containers, role, node id and the claims named in the pod spec. It reads
// no logs, events or PVC objects, so it costs only the pod lists (one per
// selector and namespace). Snapshots are sorted by namespace, cluster and
// pod name (broker-2 before broker-10). The bot's own pods (labelled
// app.kubernetes.io/managed-by=kafkabot: its debug pods) are never Kafka
// pods, whatever other labels they carry: the gates count these snapshots
// as peers and controllers.
func (c *Client) KafkaPods(ctx context.Context) ([]diagnose.Snapshot, error) {
	pods, err := c.listKafkaPods(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]diagnose.Snapshot, 0, len(pods))
	for i := range pods {
		if IsBotPod(&pods[i]) {
			continue
		}
		s, _ := statusSnapshot(&pods[i])
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b diagnose.Snapshot) int {
		if n := strings.Compare(a.Namespace, b.Namespace); n != 0 {
			return n
		}
		if n := strings.Compare(a.KafkaCluster, b.KafkaCluster); n != 0 {
			return n
		}
		return comparePodNames(a.Pod, b.Pod)
	})
	return out, nil
}

// statusSnapshot fills what the pod object alone tells: identity, phase,
// cluster, role, node id, container states and the claims the Kafka
// container mounts (without their PVC status). It also returns where the
// role and node id came from (RoleOf's source).
func statusSnapshot(pod *corev1.Pod) (diagnose.Snapshot, string) {
	role, nodeID, source := RoleOf(pod)
	s := diagnose.Snapshot{
		Namespace:      pod.Namespace,
		Pod:            pod.Name,
		UID:            string(pod.UID),
		Node:           pod.Spec.NodeName,
		Phase:          string(pod.Status.Phase),
		KafkaCluster:   ClusterOf(pod),
		Role:           role,
		NodeID:         nodeID,
		KafkaContainer: KafkaContainerName(pod),
		Containers:     statusContainers(pod),
		Claims:         statusClaims(pod),
	}
	return s, source
}

// ClusterOf returns the Kafka cluster a pod belongs to, from its labels:
// app.kubernetes.io/instance (Helm release, e.g. Bitnami), strimzi.io/cluster,
// or, for Confluent for Kubernetes, the app label (the Kafka resource's
// name). "" when none is set.
func ClusterOf(pod *corev1.Pod) string {
	l := pod.Labels
	switch {
	case l["strimzi.io/cluster"] != "":
		return l["strimzi.io/cluster"]
	case l["app.kubernetes.io/instance"] != "":
		return l["app.kubernetes.io/instance"]
	case l["platform.confluent.io/type"] == "kafka" && l["app"] != "":
		return l["app"]
	}
	return ""
}

// statusContainers maps the pod's container statuses, in spec order. A
// container without a status yet (pod just scheduled) still appears, with
// its image and nothing else.
func statusContainers(pod *corev1.Pod) []diagnose.ContainerState {
	byName := make(map[string]*corev1.ContainerStatus, len(pod.Status.ContainerStatuses))
	for i := range pod.Status.ContainerStatuses {
		byName[pod.Status.ContainerStatuses[i].Name] = &pod.Status.ContainerStatuses[i]
	}
	out := make([]diagnose.ContainerState, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		cs := diagnose.ContainerState{Name: c.Name}
		if st, ok := byName[c.Name]; ok {
			cs = ContainerStateOf(st)
		}
		cs.Image = c.Image
		out = append(out, cs)
	}
	return out
}

// ContainerStateOf maps one container status to the part the diagnosis
// engine reads (its Image is the status's; a Snapshot shows the spec's).
func ContainerStateOf(st *corev1.ContainerStatus) diagnose.ContainerState {
	cs := diagnose.ContainerState{Name: st.Name, Ready: st.Ready, RestartCount: st.RestartCount, Image: st.Image, ImageID: st.ImageID}
	if w := st.State.Waiting; w != nil {
		cs.WaitingReason, cs.WaitingMessage = w.Reason, w.Message
	}
	if r := st.State.Running; r != nil {
		cs.Running, cs.RunningSince = true, r.StartedAt.Time
	}
	cs.Terminated = statusTermination(st.State.Terminated)
	cs.LastTerminated = statusTermination(st.LastTerminationState.Terminated)
	return cs
}

func statusTermination(t *corev1.ContainerStateTerminated) *diagnose.Termination {
	if t == nil {
		return nil
	}
	return &diagnose.Termination{
		Reason:     t.Reason,
		ExitCode:   t.ExitCode,
		Signal:     t.Signal,
		Message:    t.Message,
		StartedAt:  t.StartedAt.Time,
		FinishedAt: t.FinishedAt.Time,
	}
}

// statusClaims lists the PersistentVolumeClaims the Kafka container mounts
// (all of the pod's claims when the Kafka container is unknown), in volume
// order. Generic ephemeral volumes count: their claim is "<pod>-<volume>".
func statusClaims(pod *corev1.Pod) []diagnose.VolumeClaim {
	kafka := KafkaContainerName(pod)
	mounts := map[string]string{}
	for _, c := range pod.Spec.Containers {
		if c.Name != kafka {
			continue
		}
		for _, m := range c.VolumeMounts {
			if _, dup := mounts[m.Name]; !dup {
				mounts[m.Name] = m.MountPath
			}
		}
	}
	var out []diagnose.VolumeClaim
	for _, v := range pod.Spec.Volumes {
		var claim string
		switch {
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claim = pod.Name + "-" + v.Name
		default:
			continue
		}
		path, mounted := mounts[v.Name]
		if kafka != "" && !mounted {
			continue
		}
		out = append(out, diagnose.VolumeClaim{Volume: v.Name, ClaimName: claim, MountPath: path})
	}
	return out
}

// statusInitNotes describes init containers that keep the pod from
// starting Kafka (crash-looping or failed), which the Snapshot's
// containers do not show.
func statusInitNotes(pod *corev1.Pod) []string {
	var notes []string
	for _, st := range pod.Status.InitContainerStatuses {
		var what string
		switch {
		case st.State.Waiting != nil && st.State.Waiting.Reason != "" && st.State.Waiting.Reason != "PodInitializing":
			what = "waiting " + st.State.Waiting.Reason
		case st.State.Terminated != nil && st.State.Terminated.ExitCode != 0:
			what = fmt.Sprintf("exited %d (%s)", st.State.Terminated.ExitCode, st.State.Terminated.Reason)
		default:
			continue
		}
		if t := st.LastTerminationState.Terminated; t != nil {
			what += fmt.Sprintf(", last exit %d (%s)", t.ExitCode, t.Reason)
		}
		notes = append(notes, fmt.Sprintf("init container %s is %s after %d restarts: Kafka cannot start until it succeeds", st.Name, what, st.RestartCount))
	}
	return notes
}

// IsBotPod reports whether pod is one of the bot's own pods (its debug
// pods): labelled app.kubernetes.io/managed-by=kafkabot. deploy/'s
// admission policy makes every pod the bot's identity creates carry that
// label, so a look-alike made with a stolen token is one too.
func IsBotPod(pod *corev1.Pod) bool {
	return pod.Labels[LabelManagedBy] == ManagedByBot
}

// ListKafkaPods lists the Kafka pods of namespace ("" = every namespace in
// scope) as the lookups see them, in namespace/name order (`bot doctor`
// checks the images they run).
func (c *Client) ListKafkaPods(ctx context.Context, namespace string) ([]corev1.Pod, error) {
	return c.listKafkaPods(ctx, namespace)
}
