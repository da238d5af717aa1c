// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"fmt"
	"regexp"
	"strings"
)

// UnclassifiedRule is the id (and class) of the finding the engine returns
// for a crash-looping or failed Kafka container when no rule of the
// knowledge base matched: a sick pod is never reported as healthy.
const UnclassifiedRule = "unclassified-fatal"

// The last lines of a log are kept for an unclassified crash: the crash
// ends the run, so its fatal line and exception chain are at the end.
const (
	maxTailLines = 1000
	// maxChainLines is how many exception lines after the last fatal line are quoted.
	maxChainLines = 4
)

var (
	// fatalLinePattern is a line at FATAL, ERROR or SEVERE level, the JVM's
	// "Exception in thread", a launcher or script "Error: " line, or a
	// distribution script's "ERROR ==>" (Bitnami).
	fatalLinePattern = regexp.MustCompile(`\b(?:FATAL|ERROR|SEVERE)\b|Exception in thread "|^Error: `)
	// exceptionLinePattern is an exception at the start of a line, or its cause.
	exceptionLinePattern = regexp.MustCompile(`^\s*(?:Caused by: )?(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b`)
)

// logTail is a ring of the last maxTailLines lines the engine kept, with
// their 1-based line numbers.
type logTail struct {
	ring [][]byte
	nums []int
	next int
	full bool
}

// add keeps line n.
func (t *logTail) add(n int, line []byte) {
	if t.ring == nil {
		t.ring = make([][]byte, maxTailLines)
		t.nums = make([]int, maxTailLines)
	}
	t.ring[t.next] = append(t.ring[t.next][:0], line...)
	t.nums[t.next] = n
	t.next++
	if t.next == maxTailLines {
		t.next, t.full = 0, true
	}
}

// lines returns the kept lines, oldest first.
func (t *logTail) lines() []string {
	lines, _ := t.numbered()
	return lines
}

// numbered returns the kept lines, oldest first, and their line numbers.
func (t *logTail) numbered() ([]string, []int) {
	var out []string
	var nums []int
	if t.full {
		for i, l := range t.ring[t.next:] {
			out = append(out, string(l))
			nums = append(nums, t.nums[t.next+i])
		}
	}
	for i, l := range t.ring[:t.next] {
		out = append(out, string(l))
		nums = append(nums, t.nums[i])
	}
	return out, nums
}

// fatalEvidence returns the last fatal line of the tail and the exception
// chain after it (or, without a fatal line, the last exception lines).
func (t *logTail) fatalEvidence() []string {
	lines := t.lines()
	last := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if fatalLinePattern.MatchString(lines[i]) {
			last = i
			break
		}
	}
	var out []string
	if last >= 0 {
		out = append(out, validUTF8(strings.TrimSpace(lines[last])))
	}
	var chain []string
	for _, l := range lines[last+1:] {
		if exceptionLinePattern.MatchString(l) {
			chain = append(chain, validUTF8(strings.TrimSpace(l)))
		}
	}
	if last >= 0 && len(chain) > maxChainLines {
		chain = chain[:maxChainLines]
	} else if len(chain) > maxChainLines {
		chain = chain[len(chain)-maxChainLines:]
	}
	return append(out, chain...)
}

// sickness says whether the Kafka container is crash-looping or failed,
// how bad that is, and in words why.
func sickness(s *Snapshot) (Severity, string, bool) {
	c := s.Kafka()
	var loop *Termination
	crashLooping := false
	if c != nil {
		// A Kafka pod's container runs under restartPolicy Always (every
		// StatefulSet's does), so an exit 0 is restarted with a back-off too.
		loop, crashLooping = c.CrashLoop(true)
	}
	switch {
	case crashLooping && c.WaitingReason == WaitingCrashLoopBackOff:
		return SeverityHigh, fmt.Sprintf("container %q is in CrashLoopBackOff after %d restarts%s", c.Name, c.RestartCount, lastExit(loop)), true
	case crashLooping:
		return SeverityHigh, fmt.Sprintf("container %q is crash-looping: it terminated%s after %d restarts and the kubelet restarts it with a back-off",
			c.Name, lastExit(loop), c.RestartCount), true
	case s.Phase == "Failed":
		return SeverityHigh, "the pod's phase is Failed", true
	case c != nil && c.Terminated != nil && (c.Terminated.ExitCode != 0 || c.Terminated.Reason == "OOMKilled"):
		return SeverityHigh, fmt.Sprintf("container %q terminated%s", c.Name, lastExit(c.Terminated)), true
	case c != nil && !c.Ready && c.LastTerminated != nil && c.LastTerminated.ExitCode != 0:
		return SeverityMedium, fmt.Sprintf("container %q is not ready and its last run ended%s", c.Name, lastExit(c.LastTerminated)), true
	}
	return "", "", false
}

func lastExit(t *Termination) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" (last exit code %d, reason %q)", t.ExitCode, t.Reason)
}

// unclassified builds the finding for a sick pod that no rule explains.
func (sc *scan) unclassified(s *Snapshot, sev Severity, why string, crash *crashReading) Finding {
	ev := sc.tail.fatalEvidence()
	if t := crash.terminal(); t != nil {
		// The terminal event and its chain, root cause last.
		ev = append([]string{t.text}, t.chain[:min(len(t.chain), maxChainLines)]...)
		if n := len(t.chain); n > maxChainLines {
			ev = append(ev, t.chain[n-1])
		}
	}
	explanation := "No rule of the knowledge base matched this pod, but it is sick: " + why + "."
	if len(ev) > 0 {
		explanation += " The evidence is the last fatal or ERROR line of the log and the exception chain after it: read them first."
	} else if sc.lineNo == 0 {
		explanation += " Its log is empty, so only the pod status speaks: look at kubectl describe pod (events, last state) and the previous container's log."
	} else {
		explanation += " The log has no FATAL/ERROR line or exception: its tail may not reach the cause (read more of the previous container's log)."
	}
	return Finding{
		Rule:        UnclassifiedRule,
		Class:       UnclassifiedRule,
		Title:       "Crash-looping or failed, and no known failure pattern matched",
		Severity:    sev,
		Confidence:  0.5,
		Risk:        RiskNone,
		Evidence:    append(ev, "pod status: "+why),
		Explanation: explanation,
		Remedy: Remedy{Action: "investigate", Steps: []string{
			"Read the quoted fatal line and exception chain; kubectl logs --previous shows the whole last run.",
			"kubectl describe pod shows the last state, exit code and events (probe failures, OOMKilled, mounts).",
			"If this is a failure you know, add a rule for it in a site rules file (bot explain --rules FILE, bot rules lint FILE) so the next one is recognised.",
		}},
	}
}
