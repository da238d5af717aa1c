// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"os"
	"strings"
	"testing"

	k8stesting "k8s.io/client-go/testing"
)

// TestRecoveringBrokerIsNeverRestarted (issue 23 item 6): after the move,
// the new broker pod runs and recovers its logs (a real Kafka 4.4.0 log of
// that phase: "Recovering unflushed segment", waiting to be unfenced) for
// three repair timeouts. The bot waits: it deletes the broker pod once
// (the approved instance, for the repair), never the recovering one, never
// diagnoses it as crashing again, and reports it Repaired once Ready.
func TestRecoveringBrokerIsNeverRestarted(t *testing.T) {
	// The recording is the sweep's test data (its source is noted there).
	raw, err := os.ReadFile("../sweep/testdata/recovering-4.4.0.log")
	if err != nil {
		t.Fatal(err)
	}
	h, rec, s := repairOfStartingBroker(t, string(raw), "is still starting after 15m0s")
	if s.Outcome != OutcomeRepaired {
		t.Errorf("outcome %s, want %s:\n%s", s.Outcome, OutcomeRepaired, s.Text)
	}
	if text := strings.ToLower(rec.text() + s.Text); strings.Contains(text, "escalat") || strings.Contains(text, "crashed again") {
		t.Errorf("the recovering broker was treated as crashing again:\n%s", rec.text())
	}
	deletes := 0
	for _, a := range h.cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource().Resource == "pods" && d.GetName() == brokerName {
			deletes++
			if pre := d.GetDeleteOptions().Preconditions; pre == nil || pre.UID == nil || string(*pre.UID) != brokerUID {
				t.Errorf("a broker pod other than the approved instance was deleted: %+v", d.GetDeleteOptions())
			}
		}
	}
	if deletes != 1 {
		t.Errorf("the broker pod was deleted %d times, want once (the repair's restart)", deletes)
	}
}
