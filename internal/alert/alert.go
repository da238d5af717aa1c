// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package alert holds the alert model the bot's packages share: the health
// sweep (internal/sweep) raises, groups, silences and resolves alerts, the
// Alertmanager receiver (internal/amreceiver) feeds external alerts into
// it, and the Slack side (internal/handlers) posts them. Each of those
// packages speaks these types, so an alert is defined once and a new field
// is one edit here plus the code that fills and shows it.
//
// The package is pure (no client-go, no Slack): it imports only
// internal/diagnose, whose findings an alert carries.
package alert

import (
	"errors"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Alert is one unhealthy Kafka pod with its best finding: one alert per
// (pod, rule). Key is "namespace/pod/rule".
type Alert struct {
	Key       string
	Namespace string
	Pod       string
	PodUID    string
	// KafkaCluster is the Kafka cluster of the pod ("" when its labels do
	// not say).
	KafkaCluster string
	// Rule is the best finding's rule id, or the sweep's "unclassified"
	// for an unhealthy pod that no rule explains.
	Rule string
	// Title and Severity are the best finding's ("" for an unclassified pod).
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
	// Group is the key of the group message this alert was notified in
	// ("" alone).
	Group string
	// Channel is the Slack channel an external alert (Alertmanager) named
	// for this alert; "" means the notifier's own channel. An alert with a
	// channel is never grouped.
	Channel string
	// Source and SourceAlert name the system that raised the alert first
	// ("Alertmanager") and its alert ("KubePodCrashLooping"); "" for both
	// means the health sweep noticed the pod itself. The message says which.
	Source, SourceAlert string
	// Resolution and ResolvedAt are set when the alert is resolved.
	Resolution Resolution
	ResolvedAt time.Time
}

// PodKey returns "namespace/pod": the silence key of every alert of the
// pod, which the alert's Silence buttons silence, so every finding of a
// flapping pod stays quiet.
func (a Alert) PodKey() string { return a.Namespace + "/" + a.Pod }

// Reason is how the sweep noticed that a pod is unhealthy.
type Reason string

// Detection reasons, in the order the sweep checks them.
const (
	// ReasonCrashLoop: a container is in a crash loop: waiting in
	// CrashLoopBackOff, or terminated in a failure between two back-off
	// restarts, as a real kubelet shows it most of the time.
	ReasonCrashLoop Reason = "CrashLoopBackOff"
	// ReasonOOMKilled: a container was OOM-killed within the restart window.
	ReasonOOMKilled Reason = "OOMKilled"
	// ReasonRestarts: the pod restarted more than the threshold within the window.
	ReasonRestarts Reason = "FrequentRestarts"
)

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

// MessageRef locates a posted alert message so it can be updated and
// threaded later. The sweep stores it in its state and never interprets it.
type MessageRef struct {
	Channel string `json:"channel,omitempty"`
	TS      string `json:"ts,omitempty"`
}

// IsZero reports whether the reference points nowhere.
func (r MessageRef) IsZero() bool { return r == MessageRef{} }

// Group is one alert for several unhealthy pods of one Kafka cluster (an
// alert storm). Key is KafkaClusterKey(namespace, cluster), which is also
// its silence key.
type Group struct {
	Key          string
	Namespace    string
	KafkaCluster string
	// Alerts are the members notified now, in pod order.
	Alerts []Alert
	// Ref is the message of the group when it is already open (new members
	// joined, or a repeat); zero for a new group.
	Ref MessageRef
	// Firing is the number of members still firing, these included.
	Firing int
}

// KafkaClusterKey is the key of the alert group, and the silence key, of a
// Kafka cluster: "cluster:namespace/cluster".
func KafkaClusterKey(namespace, cluster string) string {
	return "cluster:" + namespace + "/" + cluster
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

// Silence suppresses notifications of the alerts its Key matches until
// Until: an alert key ("namespace/pod/rule"), a pod ("namespace/pod") or a
// Kafka cluster (KafkaClusterKey). The sweep persists it as JSON.
type Silence struct {
	ID        string    `json:"id"`
	Key       string    `json:"key"`
	Until     time.Time `json:"until"`
	By        string    `json:"by"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Active reports whether the silence is in force at now.
func (s Silence) Active(now time.Time) bool { return now.Before(s.Until) }

// External is an alert about one pod raised outside the bot, e.g. by
// Prometheus Alertmanager (KubePodCrashLooping), which the sweep takes
// into its own alert pipeline.
type External struct {
	Namespace string
	Pod       string
	// Firing is false when the external alert resolved.
	Firing bool
	// Channel is the Slack channel to post to ("" = the notifier's own);
	// the caller checks that the bot may post approvals there.
	Channel string
	// Source names the system that raised the alert ("Alertmanager") and
	// SourceAlert the alert's name there ("KubePodCrashLooping"), so the
	// message says where it came from; "" for both means the health sweep.
	Source, SourceAlert string
}

// ExternalOutcome says what the sweep did with an external alert.
type ExternalOutcome string

// Outcomes of an external alert.
const (
	// ExternalUnknownPod: the pod is not a Kafka pod the sweep watches
	// (another namespace, not matched by the Kafka selector, or gone).
	ExternalUnknownPod ExternalOutcome = "unknown-pod"
	// ExternalFiring: the pod's alert fires (posted now, or already posted).
	ExternalFiring ExternalOutcome = "firing"
	// ExternalSilenced: the pod's alert fires but a silence hides it.
	ExternalSilenced ExternalOutcome = "silenced"
	// ExternalHealthy: the sweep sees nothing wrong with the pod now, so
	// nothing is posted (or, for a resolved alert, the alert is resolved).
	ExternalHealthy ExternalOutcome = "healthy"
	// ExternalStillFiring: the external alert resolved but the pod is still
	// unhealthy; the sweep's alert stays open.
	ExternalStillFiring ExternalOutcome = "still-firing"
)

// Errors of the sweep's controls, which the Slack side tells apart.
var (
	// ErrNoSuchSilence says that no silence in force has the ID given.
	ErrNoSuchSilence = errors.New("no silence in force has this id")
	// ErrNotLeader says that this replica does not run the sweep: only the
	// leader sweeps and takes external alerts.
	ErrNotLeader = errors.New("this replica is not the sweep leader")
)
