// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// The state of one repair, one type per step (or pair of steps) that
// writes it. The steps after read it; none writes another's.

// gateResult is what checkGatesStep read: the broker's snapshot, the
// approved finding as diagnosed now, and the gates' warnings. The gates'
// reads are set even when a gate refuses, so the summary shows them.
type gateResult struct {
	snap     diagnose.Snapshot
	finding  *diagnose.Finding
	warnings []string
}

// debugSpec is what buildSpecStep built: the broker pod it read, the
// script's input (on resume, the one recorded in the Lease) and the debug
// pod's spec (nil until built).
type debugSpec struct {
	broker *corev1.Pod
	script ScriptInput
	pod    *corev1.Pod
}

// heldLeases are the Leases takeLeaseStep took (Resume takes them over):
// the broker's, and its cluster's. nil until held.
type heldLeases struct {
	broker  *heldLock
	cluster *heldLock
}

// resumePoint is where discoverStep found a resumed repair; zero for a
// fresh repair, or before discoverStep ran.
type resumePoint int

const (
	// resumeAfterResult: the script's result is recorded in the Lease.
	resumeAfterResult resumePoint = iota + 1
	// resumeDebugPod: the debug pod exists; its result is read when it ends.
	resumeDebugPod
	// resumeRerun: the debug pod is gone, its result unknown, and the broker
	// is still the approved pod: the idempotent script runs again.
	resumeRerun
)

// debugPodState is the debug pod createDebugPodStep created (or
// discoverStep found), as the interlock last saw it.
type debugPodState struct {
	// name is the debug pod's expected name (recorded in a resumed Lease)
	// until the spec or the pod names it.
	name string
	// pod is nil until created or found; gone is true once it is known to
	// be deleted.
	pod  *corev1.Pod
	gone bool
}

// goState is the interlock's record of the go signals given.
type goState struct {
	// current is the go of the current debug pod, nil until it has one (a
	// re-run script's new debug pod needs its own).
	current *goSignal
	// restarts is the broker's restart count when the last go was given
	// (-1 when unknown); checkStayedStoppedStep compares it after the move.
	restarts int32
	// given is true once any debug pod of this repair had a go (in this
	// run, or before a restart): from then on the move may have happened,
	// and no summary says "nothing was changed".
	given bool
	// refreshFailed is true once asking the kubelet for the broker's
	// back-off failed (said once in the thread).
	refreshFailed bool
}

// goSignal is one go given to the debug pod.
type goSignal struct {
	// deadline is the go's deadline (zero when unknown: a go found on a
	// resumed repair's debug pod is read again from the pod).
	deadline time.Time
}

// gave records a go given with the broker's restart count seen then.
func (g *goState) gave(restarts int32, deadline time.Time) {
	g.current, g.restarts, g.given = &goSignal{deadline: deadline}, restarts, true
}

// deadline is the current go's deadline, zero when unknown or none.
func (g goState) deadline() time.Time {
	if g.current == nil {
		return time.Time{}
	}
	return g.current.deadline
}

// brokerState is the approved broker after the move: restartBrokerStep
// deleted it (or discoverStep found it recreated), and waitBrokerStep
// watched its replacement.
type brokerState struct {
	// replaced is true once the approved broker pod was deleted.
	replaced bool
	// newPod is the recreated pod as last seen, nil until one appears.
	newPod *corev1.Pod
	// recoveryLines are its log lines showing the metadata log rebuilt.
	recoveryLines []string
	// crash is set when it crashed again after the repair.
	crash *CrashAgainError
}

// runEnd is how the run's main steps ended, for the cleanup steps and the
// Lease's final state.
type runEnd struct {
	// failed is the first step error.
	failed error
	// interrupted is true when the bot itself is stopping: the Lease then
	// stays "running" for Resume.
	interrupted bool
}
