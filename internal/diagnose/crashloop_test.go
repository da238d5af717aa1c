// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"strings"
	"testing"
	"time"
)

// The container states below are those a real kubelet (v1.37) reports for
// a fast-crashing Kafka container: Terminated for most of each back-off,
// Waiting{CrashLoopBackOff} for about a second when it ends, then Running.

var crashAt = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// exitAfter is an instance that ran for run and ended at crashAt.
func exitAfter(exitCode int32, reason string, run time.Duration) *Termination {
	return &Termination{ExitCode: exitCode, Reason: reason, StartedAt: crashAt.Add(-run), FinishedAt: crashAt}
}

// failed is the crashing Kafka JVM's exit: code 1, 3 s after it started.
var failed = exitAfter(1, "Error", 3*time.Second)

// kubeletBackOffMessage is the kubelet's message of a CrashLoopBackOff.
const kubeletBackOffMessage = "back-off 40s restarting failed container=kafka pod=kafka-broker-0_kafka(0b6f1c2e-4d1a-4b8e-9c57-3f0e2a1d9b11)"

func TestContainerStateCrashLoop(t *testing.T) {
	tests := []struct {
		name          string
		c             ContainerState
		exit0Restarts bool
		want          bool
		wantExit      int32 // the exit code of the termination returned (-1: none)
	}{
		{"terminated after a restart", ContainerState{RestartCount: 1, Terminated: failed}, true, true, 1},
		{"the CrashLoopBackOff blip", ContainerState{RestartCount: 2, WaitingReason: WaitingCrashLoopBackOff, WaitingMessage: kubeletBackOffMessage, LastTerminated: failed}, true, true, 1},
		{"CrashLoopBackOff without a last state", ContainerState{RestartCount: 2, WaitingReason: WaitingCrashLoopBackOff}, true, true, -1},
		{"first exit", ContainerState{Terminated: failed}, true, false, -1},
		{"running again", ContainerState{RestartCount: 1, Running: true, LastTerminated: failed}, true, false, -1},
		{"waiting for another reason", ContainerState{RestartCount: 2, WaitingReason: "CreateContainerConfigError", LastTerminated: failed}, true, false, -1},
		{"exit after a stable run", ContainerState{RestartCount: 3, Terminated: exitAfter(1, "Error", StableRun)}, true, false, -1},
		{"exit just short of a stable run", ContainerState{RestartCount: 3, Terminated: exitAfter(1, "Error", StableRun-time.Second)}, true, true, 1},
		{"run length unknown", ContainerState{RestartCount: 1, Terminated: &Termination{ExitCode: 1, Reason: "Error"}}, true, true, 1},
		{"exit 0, restarted by the kubelet", ContainerState{RestartCount: 2, Terminated: exitAfter(0, "Completed", time.Second)}, true, true, 0},
		{"exit 0, not restarted", ContainerState{RestartCount: 2, Terminated: exitAfter(0, "Completed", time.Second)}, false, false, -1},
		{"exit 0 with a failure reason", ContainerState{RestartCount: 2, Terminated: exitAfter(0, "OOMKilled", time.Second)}, false, true, 0},
		{"no state at all", ContainerState{RestartCount: 2}, true, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term, ok := tt.c.CrashLoop(tt.exit0Restarts)
			if ok != tt.want {
				t.Errorf("CrashLoop = %t, want %t", ok, tt.want)
			}
			got := int32(-1)
			if term != nil {
				got = term.ExitCode
			}
			if got != tt.wantExit {
				t.Errorf("termination exit code %d, want %d (-1: none)", got, tt.wantExit)
			}
		})
	}
}

// A crash loop is said as one whichever of its states the snapshot was
// read in: by the unclassified finding when no rule explains it, and by a
// rule whose status condition is waitingReasons: [CrashLoopBackOff].
func TestDiagnoseSeesTheCrashLoop(t *testing.T) {
	rules, err := ParseRules([]byte(`
rules:
- id: site-broker-crash-loop
  title: Broker crash-looping
  severity: high
  confidence: 0.6
  risk: none
  explanation: Any crash loop of our brokers pages the on-call.
  status:
    waitingReasons: [CrashLoopBackOff]
  remedy:
    label: page
    steps: ['Page the on-call.']
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	site, err := NewEngine(rules...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    ContainerState
		// severity and sickness: the unclassified finding's severity and
		// the status it quotes.
		severity Severity
		sickness string
		// siteRule is the site rule's status evidence ("": it does not fire).
		siteRule string
	}{
		{"terminated between two restarts", ContainerState{RestartCount: 2, Terminated: failed, LastTerminated: failed}, SeverityHigh,
			`container "kafka" is crash-looping: it terminated (last exit code 1, reason "Error") after 2 restarts`,
			`container "kafka" is crash-looping (CrashLoopBackOff): terminated with reason "Error", exit code 1, after 2 restarts`},
		{"the CrashLoopBackOff blip", ContainerState{RestartCount: 2, WaitingReason: WaitingCrashLoopBackOff, WaitingMessage: kubeletBackOffMessage, LastTerminated: failed}, SeverityHigh,
			`container "kafka" is in CrashLoopBackOff after 2 restarts (last exit code 1, reason "Error")`,
			`container "kafka" waiting: CrashLoopBackOff`},
		{"first exit", ContainerState{Terminated: failed}, SeverityHigh, `container "kafka" terminated (last exit code 1, reason "Error")`, ""},
		{"running again, not ready", ContainerState{RestartCount: 1, Running: true, LastTerminated: failed}, SeverityMedium,
			`container "kafka" is not ready and its last run ended`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := kafkaPod(tt.c)
			snap.Log = unknownCrash
			got := Default().Diagnose(snap)
			if len(got) == 0 || got[0].Rule != UnclassifiedRule {
				t.Fatalf("findings %v, want %s", ruleIDs(got), UnclassifiedRule)
			}
			if got[0].Severity != tt.severity {
				t.Errorf("severity %s, want %s", got[0].Severity, tt.severity)
			}
			if ev := got[0].Evidence; !strings.Contains(ev[len(ev)-1], tt.sickness) {
				t.Errorf("status evidence %q, want it to say %q", ev[len(ev)-1], tt.sickness)
			}

			var hit *Finding
			for _, f := range site.Diagnose(snap) {
				if f.Rule == "site-broker-crash-loop" {
					hit = &f
				}
			}
			if (hit != nil) != (tt.siteRule != "") {
				t.Fatalf("site rule fired: %t, want %t", hit != nil, tt.siteRule != "")
			}
			if hit != nil && !strings.Contains(strings.Join(hit.Evidence, "\n"), tt.siteRule) {
				t.Errorf("site rule evidence %q, want it to say %q", hit.Evidence, tt.siteRule)
			}
		})
	}
}
