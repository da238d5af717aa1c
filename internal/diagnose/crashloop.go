// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import "time"

// WaitingCrashLoopBackOff is the waiting reason the kubelet gives a
// container whose restart it is backing off.
const WaitingCrashLoopBackOff = "CrashLoopBackOff"

// StableRun is how long a container run must have lasted for the kubelet
// to count it stable and forget its restart back-off: the next exit is then
// restarted at once, as a first failure, without CrashLoopBackOff. It is
// the kubelet's reset threshold (client-go's flowcontrol.Backoff expires an
// entry after twice the 5-minute maximum back-off).
const StableRun = 10 * time.Minute

// CrashLoop reports whether the container is in a crash loop as a real
// kubelet shows one, and returns the termination that shows it (nil when
// the status names none).
//
// The kubelet only writes Waiting{CrashLoopBackOff} into the status in the
// sync that ends a back-off (and restarts the container) or at its periodic
// resync: for most of each back-off the API server shows the exited
// container as Terminated. So besides that waiting reason, a container is
// crash-looping when it is not running, its current instance has ended
// (Terminated) in a way the kubelet restarts, it has already been restarted
// (RestartCount >= 1: the kubelet restarts the first exit at once and backs
// off from the second), and the run that ended was shorter than StableRun.
//
// What does not count:
//   - a first exit (RestartCount 0): the kubelet restarts it without a
//     back-off, and Kafka may exit once, e.g. during a rolling restart;
//   - an exit after a run of StableRun or more: the kubelet has reset its
//     back-off and treats the exit as a first failure;
//   - an exit 0 (Completed) unless exit0Restarts: the kubelet restarts a
//     container after exit 0, with the same back-off and the same
//     CrashLoopBackOff reason, only when its restart policy is Always (a
//     regular container of a restartPolicy Always pod, such as every Kafka
//     StatefulSet's, or a sidecar init container); an ordinary init
//     container's Completed is its success;
//   - a container waiting for another reason (CreateContainerConfigError,
//     ImagePullBackOff, ...): the kubelet could not start it, which is not
//     a crash and leaves no log of one.
func (c *ContainerState) CrashLoop(exit0Restarts bool) (*Termination, bool) {
	if c.WaitingReason == WaitingCrashLoopBackOff {
		return c.LastTerminated, true
	}
	t := c.Terminated
	if c.Running || c.WaitingReason != "" || t == nil || c.RestartCount < 1 {
		return nil, false
	}
	if !t.Failed() && !exit0Restarts {
		return nil, false
	}
	if !t.StartedAt.IsZero() && !t.FinishedAt.IsZero() && t.FinishedAt.Sub(t.StartedAt) >= StableRun {
		return nil, false
	}
	return t, true
}

// Failed reports whether the instance ended in a failure: a non-zero exit
// code, or a reason other than Completed (OOMKilled, Error, StartError...).
func (t *Termination) Failed() bool {
	return t.ExitCode != 0 || (t.Reason != "" && t.Reason != "Completed")
}
