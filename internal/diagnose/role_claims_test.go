// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// syntheticCheckpointCrash is Kafka's startup fatal exit on a malformed
// broker-level checkpoint, in the wording of Kafka's own messages (kafka.Kafka$
// and CheckpointFile): no log of the corpus ends in it, and only a log that
// does gets the automated move-checkpoint-file.
const syntheticCheckpointCrash = "[2024-01-01 00:00:00,000] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n" +
	"java.io.IOException: Malformed line in checkpoint file (/var/lib/kafka/data/kafka-log0/recovery-point-offset-checkpoint): 'orders 0 12'\n"

// TestOnlyBrokerOnlyNodesGetAnAutomatedRemedy backs README's "Which nodes
// get automated repair": for every log whose finding is automated on a
// broker-only KRaft node (the collected crash logs, the fault lab's logs of
// real Kafka, and syntheticCheckpointCrash), the same log on a controller,
// a combined node, a ZooKeeper-mode broker or a node of unknown role gives
// that rule's finding with the manual runbook. The logs must reach all
// four automated remedies, so a new remedy without such a log fails here.
func TestOnlyBrokerOnlyNodesGetAnAutomatedRemedy(t *testing.T) {
	corpus := map[string]string{"syntheticCheckpointCrash": syntheticCheckpointCrash}
	for _, pattern := range []string{filepath.Join("testdata", "crashlogs", "*.log"), filepath.Join("testdata", "faultlab", "*", "*.log")} {
		found, err := filepath.Glob(pattern)
		if err != nil || len(found) == 0 {
			t.Fatalf("no logs match %s: %v", pattern, err)
		}
		for _, path := range found {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			corpus[path] = string(data)
		}
	}
	others := []diagnose.Role{diagnose.RoleController, diagnose.RoleCombined, diagnose.RoleZooKeeper, diagnose.RoleUnknown}
	engine := diagnose.Default()
	reached := map[string]bool{}
	for path, log := range corpus {
		for _, f := range engine.Diagnose(diagnose.Snapshot{Role: diagnose.RoleBroker, Log: log}) {
			if !f.Remedy.Automated {
				continue
			}
			reached[f.Remedy.Action] = true
			for _, role := range others {
				i := slices.IndexFunc(engine.Diagnose(diagnose.Snapshot{Role: role, Log: log}), func(g diagnose.Finding) bool {
					return g.Rule == f.Rule && g.Remedy.Automated
				})
				if i >= 0 {
					t.Errorf("%s on a %q node: rule %s is automated (%s); only broker-only KRaft nodes may be", path, role, f.Rule, f.Remedy.Action)
				}
			}
		}
	}
	for _, action := range []string{diagnose.ActionMoveMetadataLog, diagnose.ActionMoveForeignDir, diagnose.ActionMoveCheckpointFile, diagnose.ActionMoveIndexFiles} {
		if !reached[action] {
			t.Errorf("no log of the corpus gives an automated %s on a broker: the role check is untested for it", action)
		}
	}
}
