// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"strings"
	"testing"
)

// An unknown failure (synthetic, in Kafka's log layout): two ERROR lines,
// the last with an exception chain.
const unknownCrash = `[2025-05-01 10:00:00,000] ERROR [ReplicaManager broker=1] Error processing append operation on partition audit-1 (kafka.server.ReplicaManager)
[2025-05-01 10:00:01,000] INFO [KafkaServer id=1] shutting down (kafka.server.KafkaServer)
[2025-05-01 10:00:02,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)
org.apache.kafka.common.KafkaException: com.example.QuotaPlugin failed to initialise
	at kafka.server.QuotaFactory$.instantiate(QuotaFactory.scala:80)
Caused by: java.lang.IllegalStateException: quota backend unavailable
	at com.example.QuotaPlugin.configure(QuotaPlugin.java:42)
	... 12 more
`

func crashLooping(restarts int32, exit int32) Snapshot {
	return kafkaPod(ContainerState{WaitingReason: "CrashLoopBackOff", RestartCount: restarts,
		LastTerminated: &Termination{Reason: "Error", ExitCode: exit}})
}

func TestUnclassifiedFatalOnASickPod(t *testing.T) {
	snap := crashLooping(7, 1)
	snap.Log = unknownCrash
	got := Default().Diagnose(snap)
	if len(got) == 0 || got[0].Rule != UnclassifiedRule || got[0].Class != UnclassifiedRule {
		t.Fatalf("first finding %v, want %s", ruleIDs(got), UnclassifiedRule)
	}
	f := got[0]
	if f.Severity != SeverityHigh {
		t.Errorf("severity %s on a CrashLoopBackOff, want high (red)", f.Severity)
	}
	want := []string{
		"[2025-05-01 10:00:02,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)",
		"org.apache.kafka.common.KafkaException: com.example.QuotaPlugin failed to initialise",
		"Caused by: java.lang.IllegalStateException: quota backend unavailable",
	}
	if len(f.Evidence) < len(want) {
		t.Fatalf("evidence %q", f.Evidence)
	}
	for i, w := range want {
		if f.Evidence[i] != w {
			t.Errorf("evidence[%d] = %q, want %q", i, f.Evidence[i], w)
		}
	}
	if !strings.Contains(f.Evidence[len(f.Evidence)-1], "CrashLoopBackOff") {
		t.Errorf("the status is not quoted: %q", f.Evidence)
	}
	if !strings.Contains(f.Explanation, "No rule") || f.Remedy.Automated {
		t.Errorf("explanation %q / remedy %+v", f.Explanation, f.Remedy)
	}
}

func TestUnclassifiedFatalCases(t *testing.T) {
	cases := []struct {
		name     string
		snap     Snapshot
		log      string
		first    string // "" means no finding
		severity Severity
	}{
		{"healthy running pod, unknown ERROR lines", kafkaPod(ContainerState{Running: true, Ready: true}), unknownCrash, "", ""},
		{"empty log, crash-looping with exit 1", crashLooping(3, 1), "", UnclassifiedRule, SeverityHigh},
		{"failed pod", Snapshot{Phase: "Failed"}, "", UnclassifiedRule, SeverityHigh},
		{"not ready after a failed run", kafkaPod(ContainerState{LastTerminated: &Termination{ExitCode: 1}}), "", UnclassifiedRule, SeverityMedium},
		{"a known class wins", crashLooping(3, 1), readLog(t, "testdata/crashlogs/16-lock-held-bitnami-k8s-broker.log"), "log-dir-lock-held", ""},
		{"OOMKilled with an empty log is said from the status", kafkaPod(ContainerState{WaitingReason: "CrashLoopBackOff",
			LastTerminated: &Termination{Reason: "OOMKilled", ExitCode: 137}}), "", "container-oom-killed", SeverityHigh},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.snap.Log = tc.log
			got := Default().Diagnose(tc.snap)
			if tc.first == "" {
				if len(got) > 0 {
					t.Fatalf("want no finding, got %v", ruleIDs(got))
				}
				return
			}
			if len(got) == 0 || got[0].Rule != tc.first {
				t.Fatalf("first finding %v, want %s", ruleIDs(got), tc.first)
			}
			if tc.severity != "" && got[0].Severity != tc.severity {
				t.Errorf("severity %s, want %s", got[0].Severity, tc.severity)
			}
			if tc.log == "" && !strings.Contains(got[0].Explanation, "empty") {
				t.Errorf("an empty log is not mentioned: %s", got[0].Explanation)
			}
			for _, f := range got[1:] {
				if f.Rule == UnclassifiedRule {
					t.Errorf("unclassified-fatal listed after a known finding")
				}
			}
		})
	}
}
