// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	corev1 "k8s.io/api/core/v1"
)

// The go signal's deadline. The bot gives the debug pod its go only while
// the broker's Kafka container is stopped, but the script reads the go
// from a downwardAPI file the kubelet refreshes when it gets to it (on a
// real node up to 73 s later). The go therefore carries the last second at
// which the bot knows Kafka is still stopped, and the script moves only
// until then.
//
// What the bot can observe: the kubelet restarts a crash-looping container
// no earlier than its last termination's finishedAt plus the current
// back-off, which it writes into the waiting state's message ("back-off 40s
// restarting failed container=kafka pod=..."). finishedAt and the script's
// `date +%s` are both read from the node's clock; the margin covers the
// rest: the bot's own clock against the node's (it judges how long the
// window still is), finishedAt's rounding to the second, and the moment
// between the script's clock check and its rename.
const (
	// GoSafetyMargin is taken off every go deadline.
	GoSafetyMargin = 5 * time.Second
	// MinGoWindow is the least time a go must leave before its deadline,
	// on the bot's clock: a go that would expire sooner is not given; the
	// bot waits for Kafka's next stop instead.
	MinGoWindow = 10 * time.Second
	// shortestBackOff is assumed when the kubelet's back-off cannot be
	// read. A kubelet with the ReduceDefaultCrashLoopBackOffDecay feature
	// gate starts at 1 s, and KubeletCrashLoopBackOffMax lets a node cap
	// every back-off at 1 s (the default kubelet starts at 10 s). With 1 s
	// the window is always shorter than MinGoWindow: without a readable
	// back-off the bot gives no go.
	shortestBackOff = time.Second
	// longestBackOff is the kubelet's ceiling (5m0s by default, and the
	// most KubeletCrashLoopBackOffMax allows); a message saying more is
	// not believed.
	longestBackOff = 5 * time.Minute
)

// backOffRE is the kubelet's CrashLoopBackOff message: "back-off <Go
// duration> restarting failed container=<name> pod=<name>_<ns>(<uid>)"
// (older kubelets wrote "Back-off").
var backOffRE = regexp.MustCompile(`^[Bb]ack-off ((?:[0-9]{1,2}h)?(?:[0-9]{1,2}m)?[0-9]{1,2}s) restarting failed container=([a-z0-9]([-a-z0-9]*[a-z0-9])?) pod=[^ ]+$`)

// kubeletBackOff returns the back-off the kubelet reports for the stopped
// container c, and whether it could be read: only a CrashLoopBackOff
// waiting state whose message names c, with a whole-second duration of at
// most longestBackOff.
func kubeletBackOff(c *corev1.ContainerStatus) (time.Duration, bool) {
	w := c.State.Waiting
	if w == nil || w.Reason != diagnose.WaitingCrashLoopBackOff {
		return 0, false
	}
	m := backOffRE.FindStringSubmatch(w.Message)
	if m == nil || m[2] != c.Name {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d < time.Second || d > longestBackOff {
		return 0, false
	}
	return d, true
}

// goWindow is when a stopped Kafka container may start again, as far as
// the bot can tell, and how it knows.
type goWindow struct {
	// Deadline is the go's deadline (whole seconds, rounded down): the
	// earliest restart minus GoSafetyMargin. Zero when unknown.
	Deadline time.Time
	// Basis says where it comes from, for the thread.
	Basis string
}

// goDeadline computes the go's deadline for the stopped Kafka container c:
// its last termination's finishedAt plus the kubelet's current back-off
// (the shortest one a kubelet may use when it cannot be read), minus
// GoSafetyMargin. A container that is running, or whose finishedAt is
// unknown, has no deadline.
func goDeadline(c *corev1.ContainerStatus) goWindow {
	var finished time.Time
	switch {
	case c == nil || c.State.Running != nil:
		return goWindow{Basis: "Kafka is not stopped"}
	case c.State.Terminated != nil:
		finished = c.State.Terminated.FinishedAt.Time
	case c.State.Waiting != nil && c.LastTerminationState.Terminated != nil:
		finished = c.LastTerminationState.Terminated.FinishedAt.Time
	}
	if finished.IsZero() {
		return goWindow{Basis: "the container's last termination time is unknown"}
	}
	backOff, ok := kubeletBackOff(c)
	basis := fmt.Sprintf("back-off %s from its exit at %s", backOff, finished.UTC().Format(time.RFC3339))
	if !ok {
		backOff = shortestBackOff
		basis = fmt.Sprintf("back-off not readable, assumed %s (the shortest a kubelet may use) from its exit at %s", backOff, finished.UTC().Format(time.RFC3339))
	}
	return goWindow{
		Deadline: finished.Add(backOff - GoSafetyMargin).Truncate(time.Second),
		Basis:    basis + fmt.Sprintf(", less %s margin", GoSafetyMargin),
	}
}

// goValue is the go annotation's value: the repair id, ".", the deadline in
// unix seconds. The script accepts exactly this form.
func goValue(repairID string, deadline time.Time) string {
	return repairID + "." + strconv.FormatInt(deadline.Unix(), 10)
}

// parseGoValue returns the deadline of a go annotation given for repairID,
// and false for any other value (another repair's go, a go without a
// deadline as older bots gave it, anything malformed).
func parseGoValue(v, repairID string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(v, repairID+".")
	if !ok || rest == "" || len(rest) > 10 || strings.Trim(rest, "0123456789") != "" {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
