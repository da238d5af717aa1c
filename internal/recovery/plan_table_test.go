// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// stepVerbs shortens a plan's descriptions to their first two words, enough
// to tell the steps apart without the pod names.
func stepVerbs(p Plan) []string {
	var out []string
	for _, d := range p.Describe() {
		f := strings.Fields(d)
		out = append(out, strings.Join(f[:min(2, len(f))], " "))
	}
	return out
}

// The three plans built from repairSteps hold the steps each plan ran when
// they were written out one by one: the dry run stops before the first
// write, the resumed plan starts by looking and has no Lease to take.
func TestPlansFromTheTable(t *testing.T) {
	shared := []string{"Create debug", "Give the", "Wait for", "Read the", "Check that", "Delete debug", "Restart foobar-kafka-broker-0", "Watch the",
		"always: Delete", "always: Release"}
	tests := []struct {
		kind planKind
		want []string
	}{
		{repairPlan, append([]string{"Re-check kafka/foobar-kafka-broker-0", "Build the", "Take the"}, shared...)},
		{dryRunPlan, []string{"Re-check kafka/foobar-kafka-broker-0", "Build the", "Show what"}},
		{resumePlan, append([]string{"Find the", "Read the", "Re-check kafka/foobar-kafka-broker-0", "Build the"}, shared...)},
	}
	h := newHarness(t, seedCluster(t), kubeletPlan{})
	for _, tt := range tests {
		run := h.r.newRun(request(), &recorder{})
		run.kind = tt.kind
		if got := stepVerbs(run.plan()); !slices.Equal(got, tt.want) {
			t.Errorf("plan %d:\n got %q\nwant %q", tt.kind, got, tt.want)
		}
	}
}

// A resumed plan decides when each step is reached whether its first steps
// run, from what discoverStep found: the early read of a finished debug
// pod's result, the gates while the move may still happen, the spec only
// for a re-run.
func TestResumePlanConditions(t *testing.T) {
	finished := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	tests := []struct {
		name  string
		state func(*repairRun)
		// skipped: whether the early read, the gates and the spec count as done.
		wantSkipped [3]bool
	}{
		{"re-run: gates and spec run", func(run *repairRun) { run.found = resumeRerun }, [3]bool{true, false, false}},
		{"finished debug pod: its result first, then the gates", func(run *repairRun) {
			run.found, run.debug.pod = resumeDebugPod, finished
		}, [3]bool{false, false, true}},
		{"running debug pod: the gates again", func(run *repairRun) {
			run.found, run.debug.pod = resumeDebugPod, running
		}, [3]bool{true, false, true}},
		{"result recorded: no gate", func(run *repairRun) {
			run.found, run.result = resumeAfterResult, &ScriptResult{Status: StatusMoved}
		}, [3]bool{true, true, true}},
		{"broker already restarted: no gate", func(run *repairRun) {
			run.found, run.debug.pod, run.broker.replaced = resumeDebugPod, running, true
		}, [3]bool{true, true, true}},
	}
	h := newHarness(t, seedCluster(t), kubeletPlan{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := h.r.newRun(request(), &recorder{})
			run.kind = resumePlan
			steps := run.plan().Steps
			tt.state(run)
			var got [3]bool
			for i := range got {
				done, err := steps[1+i].Done(context.Background())
				if err != nil {
					t.Fatalf("%s: %v", steps[1+i].Describe(), err)
				}
				got[i] = done
			}
			if got != tt.wantSkipped {
				t.Errorf("skipped (read result, gates, spec) = %v, want %v", got, tt.wantSkipped)
			}
		})
	}
}
