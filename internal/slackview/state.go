// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Level is how bad something looks, for its emoji. Higher is worse.
type Level int

// Levels, best first.
const (
	LevelOK       Level = iota // Ready, nothing found: the only green
	LevelInfo                  // Ready, something informational found
	LevelLow                   // starting, or a low-severity finding
	LevelMedium                // running but not Ready, or a medium finding
	LevelCritical              // crash-looping, failed, or a high/critical finding
)

// Icon is the level's emoji. Only LevelOK is green.
func (l Level) Icon() string {
	switch l {
	case LevelOK:
		return "🟢"
	case LevelInfo:
		return "🔵"
	case LevelLow:
		return "🟡"
	case LevelMedium:
		return "🟠"
	}
	return "🔴"
}

// SeverityLevel is a finding's severity as a Level.
func SeverityLevel(s diagnose.Severity) Level {
	switch s {
	case diagnose.SeverityCritical, diagnose.SeverityHigh:
		return LevelCritical
	case diagnose.SeverityMedium:
		return LevelMedium
	case diagnose.SeverityLow:
		return LevelLow
	}
	return LevelInfo
}

// PodLevel is what the pod's own state says, whatever the diagnosis found:
// Ready is OK; crash-looping, errored or OOM-killed is critical; running
// but not Ready, or no status at all, is medium; starting is low.
func PodLevel(s diagnose.Snapshot) Level {
	k := s.Kafka()
	switch {
	case k == nil:
		if s.Phase == "Failed" {
			return LevelCritical
		}
		return LevelMedium
	case k.Ready:
		return LevelOK
	case k.WaitingReason == "CrashLoopBackOff", k.WaitingReason == "ImagePullBackOff", k.WaitingReason == "ErrImagePull",
		k.WaitingReason == "CreateContainerConfigError", k.WaitingReason == "CreateContainerError":
		return LevelCritical
	case k.Terminated != nil && k.Terminated.ExitCode != 0:
		return LevelCritical
	case k.Running:
		return LevelMedium
	case k.WaitingReason == "ContainerCreating" || k.WaitingReason == "PodInitializing":
		return LevelLow
	}
	return LevelMedium
}

// StateLevel is the worse of the pod's state and its best finding's severity:
// a crash-looping pod is red even when the finding is minor or missing,
// and only a Ready pod with nothing found is green.
func StateLevel(s diagnose.Snapshot, findings []diagnose.Finding) Level {
	l := PodLevel(s)
	if len(findings) > 0 {
		l = max(l, SeverityLevel(findings[0].Severity), LevelInfo)
	}
	return l
}

// PodReady reports whether the pod's Kafka container is Ready.
func PodReady(s diagnose.Snapshot) bool {
	k := s.Kafka()
	return k != nil && k.Ready
}

// ContainerState says a container's state in a word or two.
func ContainerState(c diagnose.ContainerState) string {
	switch {
	case c.Ready:
		return "Ready"
	case c.WaitingReason != "":
		return c.WaitingReason
	case c.Running:
		return "Running, not ready"
	case c.Terminated != nil:
		return "Terminated: " + c.Terminated.Reason
	}
	return "unknown"
}

// StateSummary says the pod's state in a few words: "CrashLoopBackOff, 37
// restarts", "Ready", "no Kafka container status (phase Pending)".
func StateSummary(s diagnose.Snapshot) string {
	k := s.Kafka()
	if k == nil {
		return fmt.Sprintf("no Kafka container status (phase %s)", orDash(s.Phase))
	}
	st := ContainerState(*k)
	if k.RestartCount > 0 {
		st += fmt.Sprintf(", %d restarts", k.RestartCount)
	}
	return st
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
