// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
)

func TestStateMergeKeepsNewestVersion(t *testing.T) {
	mine, theirs := newState(), newState()
	mine.Alerts["a"] = &alertRecord{Key: "a", Fingerprint: "mine-newer", UpdatedAt: t0.Add(time.Minute)}
	theirs.Alerts["a"] = &alertRecord{Key: "a", Fingerprint: "theirs-older", UpdatedAt: t0}
	mine.Alerts["b"] = &alertRecord{Key: "b", Fingerprint: "mine-older", UpdatedAt: t0}
	theirs.Alerts["b"] = &alertRecord{Key: "b", Fingerprint: "theirs-newer", UpdatedAt: t0.Add(time.Minute)}
	theirs.Alerts["c"] = &alertRecord{Key: "c", Fingerprint: "only-theirs", UpdatedAt: t0}
	theirs.Silences["s1"] = &alert.Silence{ID: "s1", Key: "kafka/x", Until: t0.Add(time.Hour), UpdatedAt: t0}
	mine.Groups["g"] = &groupRecord{Key: "g", Ref: alert.MessageRef{TS: "1"}, UpdatedAt: t0}

	mine.merge(theirs)
	for key, want := range map[string]string{"a": "mine-newer", "b": "theirs-newer", "c": "only-theirs"} {
		if r := mine.Alerts[key]; r == nil || r.Fingerprint != want {
			t.Errorf("alert %s after merge = %+v, want %s", key, r, want)
		}
	}
	if mine.Silences["s1"] == nil || mine.Groups["g"] == nil {
		t.Errorf("merge lost a silence or a group: %+v %+v", mine.Silences, mine.Groups)
	}
}

func TestStatePruneAndBound(t *testing.T) {
	now := t0.Add(48 * time.Hour)
	st := newState()
	st.Alerts["open"] = &alertRecord{Key: "open", StartsAt: t0}
	st.Alerts["resolved-old"] = &alertRecord{Key: "resolved-old", ResolvedAt: now.Add(-25 * time.Hour)}
	st.Alerts["resolved-recent"] = &alertRecord{Key: "resolved-recent", ResolvedAt: now.Add(-time.Hour)}
	st.Silences["expired"] = &alert.Silence{ID: "expired", Until: now.Add(-25 * time.Hour)}
	st.Silences["active"] = &alert.Silence{ID: "active", Until: now.Add(time.Hour)}
	st.Groups["old"] = &groupRecord{Key: "old", ResolvedAt: now.Add(-25 * time.Hour)}
	if _, err := st.encode(now); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"resolved-old"} {
		if st.Alerts[k] != nil {
			t.Errorf("%s not pruned", k)
		}
	}
	if st.Alerts["open"] == nil || st.Alerts["resolved-recent"] == nil || st.Silences["active"] == nil {
		t.Error("prune dropped what is still needed")
	}
	if st.Silences["expired"] != nil || st.Groups["old"] != nil {
		t.Error("expired silence or old group not pruned")
	}

	// Thousands of recently resolved alerts: the oldest go, the encoding fits.
	big := newState()
	big.Alerts["open"] = &alertRecord{Key: "open"}
	for i := range 5000 {
		k := fmt.Sprintf("kafka/broker-%d/%s", i, strings.Repeat("r", 60))
		big.Alerts[k] = &alertRecord{Key: k, Detail: strings.Repeat("d", 80), ResolvedAt: now.Add(-time.Duration(i) * time.Second)}
	}
	data, err := big.encode(now)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data[stateDataKey]); n > maxStateBytes {
		t.Errorf("encoded state is %d bytes, limit %d", n, maxStateBytes)
	}
	if big.Alerts["open"] == nil {
		t.Error("bounding dropped an open alert")
	}
	if big.Alerts[fmt.Sprintf("kafka/broker-%d/%s", 4999, strings.Repeat("r", 60))] != nil {
		t.Error("the oldest resolved alert survived bounding")
	}
	back, err := decodeState(data)
	if err != nil || len(back.Alerts) != len(big.Alerts) {
		t.Errorf("decode: %d alerts, %v; want %d", len(back.Alerts), err, len(big.Alerts))
	}
}
