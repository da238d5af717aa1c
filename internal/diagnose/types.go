// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package diagnose turns what was read about a crashed Kafka pod (a Snapshot)
// into an ordered list of Findings, by matching it against a knowledge base of
// real Kafka failure classes. It is pure: it performs no I/O beyond reading
// the rules it is given, and imports nothing of this project but its own
// catalogue (internal/diagnose/catalog).
package diagnose

import "time"

// Role is the KRaft role of a Kafka node.
type Role string

// The KRaft roles a node can have. RoleUnknown means the bot could not tell;
// it is treated like a controller by every safety gate (no automated repair).
const (
	RoleUnknown    Role = ""
	RoleBroker     Role = "broker"
	RoleController Role = "controller"
	RoleCombined   Role = "combined"
	// RoleZooKeeper is a broker of a ZooKeeper-mode cluster (no KRaft roles).
	RoleZooKeeper Role = "zookeeper-mode"
)

// Termination describes how a container instance ended.
type Termination struct {
	Reason     string    `json:"reason,omitempty"`
	ExitCode   int32     `json:"exitCode"`
	Signal     int32     `json:"signal,omitempty"`
	Message    string    `json:"message,omitempty"`
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
}

// ContainerState is the part of a container's status the engine reads.
type ContainerState struct {
	Name         string `json:"name"`
	Ready        bool   `json:"ready"`
	RestartCount int32  `json:"restartCount"`
	// WaitingReason is set while the container waits, e.g. "CrashLoopBackOff".
	WaitingReason  string `json:"waitingReason,omitempty"`
	WaitingMessage string `json:"waitingMessage,omitempty"`
	// Running is true while the current instance runs.
	Running bool `json:"running,omitempty"`
	// RunningSince is when the current instance started, while it runs
	// (zero when unknown).
	RunningSince time.Time `json:"runningSince,omitzero"`
	// Terminated is the current instance's end, when it has ended.
	Terminated *Termination `json:"terminated,omitempty"`
	// LastTerminated is the previous instance's end (lastState.terminated).
	LastTerminated *Termination `json:"lastTerminated,omitempty"`
	Image          string       `json:"image,omitempty"`
	// ImageID is the resolved image reference, by digest where the runtime reports one.
	ImageID string `json:"imageID,omitempty"`
}

// VolumeClaim is a PersistentVolumeClaim mounted by the Kafka container.
type VolumeClaim struct {
	Volume      string   `json:"volume"`
	ClaimName   string   `json:"claimName"`
	MountPath   string   `json:"mountPath"`
	AccessModes []string `json:"accessModes,omitempty"`
	Phase       string   `json:"phase,omitempty"`
}

// Snapshot is everything the engine may look at for one pod: what a careful
// SRE would read with kubectl before deciding. It is filled in by
// internal/kube from a live cluster, or from a file by `bot explain`.
type Snapshot struct {
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	UID       string `json:"uid,omitempty"`
	Node      string `json:"node,omitempty"`
	Phase     string `json:"phase,omitempty"`
	// KafkaCluster is the Kafka cluster the pod belongs to (instance or Strimzi cluster label).
	KafkaCluster string `json:"cluster,omitempty"`
	// Role is the node's KRaft role, when known.
	Role Role `json:"role,omitempty"`
	// NodeID is the Kafka node.id / broker.id when known ("" otherwise).
	NodeID string `json:"nodeID,omitempty"`
	// KafkaContainer names the container that runs Kafka.
	KafkaContainer string           `json:"kafkaContainer,omitempty"`
	Containers     []ContainerState `json:"containers,omitempty"`
	Claims         []VolumeClaim    `json:"claims,omitempty"`
	// Events are recent Kubernetes event messages about the pod (e.g. liveness failures).
	Events []string `json:"events,omitempty"`
	// Log is the tail of the Kafka container's previous instance's log
	// (or the current one when there is no previous instance).
	Log string `json:"-"`
	// LogBytes is how many bytes of log were read; LogTruncated says whether
	// older output was cut off by the read limit.
	LogBytes     int  `json:"logBytes"`
	LogTruncated bool `json:"logTruncated,omitempty"`
	// RepairRefusal says, in one sentence, why the bot's own checks of the
	// pod's spec will refuse an automated repair of it ("" when none does):
	// a broker running as uid 0 without ALLOW_ROOT_BROKER. The reader that
	// builds the Snapshot runs the repair's check; no Approve is offered.
	RepairRefusal string `json:"repairRefusal,omitempty"`
}

// Kafka returns the status of the Kafka container, or nil when it is absent.
func (s *Snapshot) Kafka() *ContainerState {
	for i := range s.Containers {
		if s.Containers[i].Name == s.KafkaContainer {
			return &s.Containers[i]
		}
	}
	if len(s.Containers) > 0 && s.KafkaContainer == "" {
		return &s.Containers[0]
	}
	return nil
}

// Severity says how bad a finding is for the pod.
type Severity string

// Severities, from least to most severe.
const (
	SeverityInfo     Severity = "info"
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// Risk is the risk of applying a finding's remedy.
type Risk string

// Risks of a remedy, from none to high.
const (
	RiskNone   Risk = "none"
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// Repair actions the bot can run on a broker's volume. Each names one
// file-system operation of the debug-pod script in internal/recovery.
const (
	// ActionMoveMetadataLog moves __cluster_metadata-0 out of the log dir.
	ActionMoveMetadataLog = "move-metadata-log"
	// ActionMoveForeignDir moves a non-Kafka directory (lost+found, ...) out of the log dir.
	ActionMoveForeignDir = "move-foreign-dir"
	// ActionMoveCheckpointFile moves a corrupt checkpoint file out of the log dir.
	ActionMoveCheckpointFile = "move-checkpoint-file"
	// ActionMoveIndexFiles moves a partition's corrupt index files out of the log dir.
	ActionMoveIndexFiles = "move-index-files"
)

// Remedy is what to do about a finding: an automated repair the bot can
// run after approval, or manual steps for a person.
type Remedy struct {
	// Automated is true when the bot can run Action itself (after approval
	// and its safety gates).
	Automated bool `json:"automated"`
	// Action names the repair (one of the Action* constants) or, for manual
	// remedies, a short label.
	Action string `json:"action,omitempty"`
	// Target is what the action operates on, relative to the log dir
	// (e.g. "__cluster_metadata-0", "lost+found").
	Target string `json:"target,omitempty"`
	// Steps are the manual steps, or a description of the automated ones.
	Steps []string `json:"steps,omitempty"`
}

// OffsetTriage is the parsed UnexpectedAppendOffsetException on the metadata log.
type OffsetTriage struct {
	FirstOffset    int64 `json:"firstOffset"`
	NextOffset     int64 `json:"nextOffset"`
	LogStartOffset int64 `json:"logStartOffset"`
	// LocalDivergence is true when next offset > log start offset: the
	// broker's own copy diverged and can be discarded. False means the
	// controllers hold a misaligned snapshot: escalate, do not wipe brokers.
	LocalDivergence bool `json:"localDivergence"`
}

// Finding is one diagnosed problem.
type Finding struct {
	Rule string `json:"rule"`
	// Class is the failure class the rule recognises (the rule's id unless
	// the rule names another class); one finding per class is reported.
	Class      string   `json:"class,omitempty"`
	Title      string   `json:"title"`
	Severity   Severity `json:"severity"`
	Confidence float64  `json:"confidence"`
	Risk       Risk     `json:"risk"`
	// Evidence holds the lines that matched, verbatim (a few at most).
	Evidence    []string `json:"evidence"`
	Explanation string   `json:"explanation"`
	Remedy      Remedy   `json:"remedy"`
	// VersionHint says which Kafka releases a stack frame of the crash fits
	// (the frame's line against the catalogue's line of the thrown
	// message in each release); set on a finding read from the structure
	// of the crash, "" when no frame fits.
	VersionHint string `json:"versionHint,omitempty"`
	// Offsets is set for metadata-log-offset-mismatch.
	Offsets *OffsetTriage `json:"offsets,omitempty"`
	// Role is the node role the remedy was decided for: the Snapshot's
	// role, or the role the log states when the Snapshot's is unknown.
	Role Role `json:"role,omitempty"`
	// RoleSource says where Role came from: "pod", "log: <line>" or
	// "unknown". It is set for findings whose remedy depends on the role.
	RoleSource string `json:"roleSource,omitempty"`
}
