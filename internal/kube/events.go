// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EventComponent is the reporting component of the bot's Kubernetes Events.
const EventComponent = "kafkabot"

// eventSeq tells apart Events recorded in the same nanosecond (or under a
// test clock that stands still).
var eventSeq atomic.Uint64

// maxEventMessage bounds an Event's message (the API server caps it at 1 KiB).
const maxEventMessage = 1024

// PodRef identifies one pod instance.
type PodRef struct {
	Namespace string
	Name      string
	UID       types.UID
}

// PodEvent is one Kubernetes Event about a pod.
type PodEvent struct {
	Pod PodRef
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type    string
	Reason  string
	Message string
	// Instance names the bot replica that acted.
	Instance string
	Time     time.Time
}

// RecordPodEvent records a core/v1 Event whose involvedObject is the pod, so
// `kubectl describe pod` shows it. It is one create, not retried: an Event
// is an audit aid, and a duplicate would be worse than a missing one.
func (c *Client) RecordPodEvent(ctx context.Context, e PodEvent) error {
	msg := e.Message
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	ts := metav1.NewTime(e.Time)
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      e.Pod.Name + "." + strconv.FormatInt(e.Time.UnixNano(), 16) + "." + strconv.FormatUint(eventSeq.Add(1), 16),
			Namespace: e.Pod.Namespace,
			Labels:    map[string]string{LabelManagedBy: ManagedByBot},
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", APIVersion: "v1", Namespace: e.Pod.Namespace, Name: e.Pod.Name, UID: e.Pod.UID,
		},
		Type:                e.Type,
		Reason:              e.Reason,
		Message:             msg,
		Source:              corev1.EventSource{Component: EventComponent},
		ReportingController: EventComponent,
		ReportingInstance:   e.Instance,
		Action:              e.Reason,
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
	}
	if _, err := c.cs.CoreV1().Events(e.Pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("recording event %s on pod %s/%s: %w", e.Reason, e.Pod.Namespace, e.Pod.Name, err)
	}
	return nil
}
