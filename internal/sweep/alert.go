// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// MessageRef locates a posted alert message so it can be updated and
// threaded later. The sweep stores it in its state and never interprets it.
type MessageRef struct {
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
}

// IsZero reports whether the reference points nowhere.
func (r MessageRef) IsZero() bool { return r == MessageRef{} }

// Resolution says why an alert stopped firing.
type Resolution string

// Resolutions of an alert.
const (
	// ResolutionRecovered: the pod has been Ready for the grace period.
	ResolutionRecovered Resolution = "recovered"
	// ResolutionPodGone: the pod has been absent for the grace period.
	ResolutionPodGone Resolution = "pod-gone"
	// ResolutionSuperseded: the pod still crashes, with another finding,
	// which fires an alert of its own.
	ResolutionSuperseded Resolution = "superseded"
)

// Alert is one crash-looping pod with its best finding: one alert per
// (pod, rule). Key is "namespace/pod/rule".
type Alert struct {
	Key       string
	Namespace string
	Pod       string
	PodUID    string
	// Cluster is the Kafka cluster of the pod ("" when its labels do not say).
	Cluster string
	// Rule is the best finding's rule id, or RuleUnclassified.
	Rule string
	// Title and Severity are the best finding's ("" for RuleUnclassified).
	Title    string
	Severity diagnose.Severity
	// Reason is how the sweep noticed the pod; Detail says it for people
	// ("restarted 5 times in 10m0s").
	Reason Reason
	Detail string
	// Findings are all findings, best first, and Snapshot what was read;
	// both are empty when an alert is resolved (they are not persisted).
	Findings []diagnose.Finding
	Snapshot diagnose.Snapshot
	// ReadError is set when the full read (log tail) failed and the
	// diagnosis only saw the pod's status.
	ReadError string
	// StartsAt is when this alert began firing.
	StartsAt time.Time
	// Repeat is true when the same finding was notified before and the
	// repeat interval has passed; Changed when the same rule's finding changed.
	Repeat  bool
	Changed bool
	// Group is the key of the cluster group this alert was notified in ("" alone).
	Group string
	// Channel is the Slack channel an external alert (Alertmanager) named
	// for this alert; "" means the notifier's own channel. An alert with a
	// channel is never grouped.
	Channel string
	// Source and SourceAlert name the system that raised the alert first
	// ("Alertmanager") and its alert ("KubePodCrashLooping"); "" for both
	// means the health sweep noticed the pod itself.
	Source, SourceAlert string
	// Resolution and ResolvedAt are set when the alert is resolved.
	Resolution Resolution
	ResolvedAt time.Time
}

// PodKey returns "namespace/pod", the silence key of every alert of the pod.
func (a Alert) PodKey() string { return a.Namespace + "/" + a.Pod }

// Group is one alert for several crashing pods of one Kafka cluster (an
// alert storm). Key is ClusterKey(namespace, cluster).
type Group struct {
	Key       string
	Namespace string
	Cluster   string
	// Alerts are the members notified now, in pod order.
	Alerts []Alert
	// Ref is the message of the group when it is already open (new members
	// joined, or a repeat); zero for a new group.
	Ref MessageRef
	// Firing is the number of members still firing, these included.
	Firing int
}

// Summary is the periodic report of a scheduled sweep.
type Summary struct {
	At time.Time
	// KafkaPods is how many Kafka pods the sweep looked at.
	KafkaPods int
	// Firing are the alerts firing now, silenced ones included.
	Firing []Alert
	// Silenced is how many of Firing are silenced.
	Silenced int
}

// Notifier delivers alerts. The Slack implementation renders the same
// Block Kit diagnosis as /kafka diagnose; tests record what they get.
// Every method may be called from one goroutine at a time only.
type Notifier interface {
	// Notify posts one alert and returns where it was posted.
	Notify(ctx context.Context, a Alert) (MessageRef, error)
	// NotifyGroup posts (or, when g.Ref is set, adds to) one alert for
	// several pods of one cluster, and returns where it was posted.
	NotifyGroup(ctx context.Context, g Group) (MessageRef, error)
	// Resolve marks the alert posted at ref as resolved (a.Resolution says
	// why). For a member of a group (a.Group set), ref is the group's
	// message: post a line in its thread; ResolveGroup follows once the last
	// member resolved.
	Resolve(ctx context.Context, ref MessageRef, a Alert) error
	// ResolveGroup marks the group message at ref as resolved.
	ResolveGroup(ctx context.Context, ref MessageRef, g Group) error
	// Summary posts the periodic summary of a scheduled sweep.
	Summary(ctx context.Context, s Summary) error
}

// ClusterKey is the key of the alert group, and the silence key, of a Kafka
// cluster: "cluster:namespace/cluster".
func ClusterKey(namespace, cluster string) string { return "cluster:" + namespace + "/" + cluster }
