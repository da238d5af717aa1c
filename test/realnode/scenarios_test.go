// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// approveRepair diagnoses the scenario's broker, approves the repair and
// returns the diagnosis message and its thread once the summary is posted.
func (s *scenario) approveRepair() (th []string, outcome string) {
	s.t.Helper()
	m := diagnose(s.t, "diagnose "+kafkaNS+"/"+s.broker)
	text := blockTexts(s.t, m.Blocks)
	if !strings.Contains(text, "KRaft metadata log diverged") {
		s.t.Fatalf("the diagnosis of %s is not the metadata-log divergence:\n%s", s.broker, text)
	}
	click(s.t, m, actionApprove, approver)
	th, outcome, _ = waitOutcome(s.t, m, 8*time.Minute)
	return th, outcome
}

// bitnamiAtRoot is a Bitnami broker configured with its log dir at the
// volume root, where no backup can be made outside it.
var bitnamiAtRoot = func() layout {
	l := bitnami
	l.volumes = []volumeSpec{{template: "data", mountPath: "/bitnami/kafka", logDir: "."}}
	l.env = func(nodeID string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "KAFKA_CFG_NODE_ID", Value: nodeID}, {Name: "KAFKA_CFG_LOG_DIRS", Value: "/bitnami/kafka"}}
	}
	return l
}()

// TestRepairRefusedByOnDiskChecks: the repair script, run by the real debug
// pod on the real volume, refuses when the volume belongs to another node and
// when the log dir is the volume root. Nothing on the volume changes and the
// broker is not restarted.
func TestRepairRefusedByOnDiskChecks(t *testing.T) {
	for _, tc := range []struct {
		name, cluster string
		layout        layout
		storedID      string
		want          string
	}{
		{"meta.properties of another node", "wrongid", bitnami, "101", "belongs to another node"},
		{"log dir at the volume root", "atroot", bitnamiAtRoot, "100", "volume root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, tc.cluster, tc.layout, "100")
			s.writeVolumes(tc.storedID, true)
			before := snapshot(t, s.volume(0))
			s.deploy()
			old := s.waitCrashLoop(1)
			th, summary := s.approveRepair()
			if strings.Contains(summary, "Repair succeeded") || !strings.Contains(strings.Join(th, "\n"), tc.want) {
				t.Errorf("want a refusal saying %q; the thread reads:\n%s", tc.want, strings.Join(th, "\n---\n"))
			}
			if after := snapshot(t, s.volume(0)); after != before {
				t.Errorf("the volume changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			now, err := s.pod(s.broker)
			if err != nil {
				t.Fatal(err)
			}
			if now.UID != old.UID {
				t.Errorf("%s was restarted (UID %s, was %s) although the repair was refused", s.broker, now.UID, old.UID)
			}
			// The cleanup may still be deleting the debug pod when the
			// outcome is posted.
			if err := waitFor(context.Background(), time.Minute, func() (bool, error) { return len(listDebugPods(t)) == 0, nil }); err != nil {
				t.Errorf("debug pods left behind: %v", listDebugPods(t))
			}
		})
	}
}

// snapshot lists every path under root with its size (the .lock file's
// content is the broker's, so only its presence counts).
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	if err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		size := info.Size()
		if info.IsDir() || info.Name() == ".lock" {
			size = 0
		}
		b.WriteString(rel + " " + info.Mode().Type().String() + " " + strconv.FormatInt(size, 10) + "\n")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
