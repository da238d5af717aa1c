// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Limits of the persisted alert state.
const (
	// stateDataKey is the ConfigMap data key holding the JSON state.
	stateDataKey = "state.json"
	// stateRetention is how long resolved alerts, resolved groups and
	// expired silences are kept (to show them, and to merge safely).
	stateRetention = 24 * time.Hour
	// maxStateBytes keeps the ConfigMap well below the 1 MiB object limit.
	maxStateBytes = 512 << 10
)

// silenceMatches reports whether silence s covers the alert r.
func silenceMatches(s alert.Silence, r *alertRecord) bool {
	return s.Key == r.Key || s.Key == r.Namespace+"/"+r.Pod || s.Key == alert.KafkaClusterKey(r.Namespace, r.KafkaCluster)
}

// alertRecord is the persisted state of one alert (one pod and rule).
type alertRecord struct {
	Key          string            `json:"key"`
	Namespace    string            `json:"namespace"`
	Pod          string            `json:"pod"`
	PodUID       string            `json:"podUID,omitempty"`
	KafkaCluster string            `json:"cluster,omitempty"`
	Rule         string            `json:"rule"`
	Title        string            `json:"title,omitempty"`
	Severity     diagnose.Severity `json:"severity,omitempty"`
	Fingerprint  string            `json:"fingerprint"`
	Reason       alert.Reason      `json:"reason"`
	Detail       string            `json:"detail,omitempty"`
	// StartsAt is when the current episode began firing.
	StartsAt time.Time `json:"startsAt"`
	// NotifiedAt and NotifiedFingerprint describe the last notification
	// (zero: never notified, e.g. silenced since it started).
	NotifiedAt          time.Time        `json:"notifiedAt,omitzero"`
	NotifiedFingerprint string           `json:"notifiedFingerprint,omitempty"`
	Ref                 alert.MessageRef `json:"ref,omitzero"`
	Group               string           `json:"group,omitempty"`
	// Channel is the channel an external alert named before the first
	// notification (kept so a repeat goes to the same place).
	Channel string `json:"channel,omitempty"`
	// Source and SourceAlert name the external system and alert that
	// raised it, when one did before the first notification.
	Source      string `json:"source,omitempty"`
	SourceAlert string `json:"sourceAlert,omitempty"`
	// HealthySince is when the pod was first seen Ready (or absent) while
	// the alert fired; zero while it is not.
	HealthySince time.Time        `json:"healthySince,omitzero"`
	ResolvedAt   time.Time        `json:"resolvedAt,omitzero"`
	Resolution   alert.Resolution `json:"resolution,omitempty"`
	// UpdatedAt orders concurrent versions of the record when merging.
	UpdatedAt time.Time `json:"updatedAt"`
}

// firing reports whether the record is an open alert.
func (r *alertRecord) firing() bool { return r.ResolvedAt.IsZero() }

// alert returns the record as an Alert (without findings and snapshot).
func (r *alertRecord) alert() alert.Alert {
	return alert.Alert{
		Key: r.Key, Namespace: r.Namespace, Pod: r.Pod, PodUID: r.PodUID, KafkaCluster: r.KafkaCluster,
		Rule: r.Rule, Title: r.Title, Severity: r.Severity, Reason: r.Reason, Detail: r.Detail,
		StartsAt: r.StartsAt, Group: r.Group, Channel: r.Channel, Source: r.Source, SourceAlert: r.SourceAlert,
		Resolution: r.Resolution, ResolvedAt: r.ResolvedAt,
	}
}

// groupRecord is the persisted state of a cluster's grouped alert.
type groupRecord struct {
	Key          string           `json:"key"`
	Namespace    string           `json:"namespace"`
	KafkaCluster string           `json:"cluster,omitempty"`
	Ref          alert.MessageRef `json:"ref"`
	OpenedAt     time.Time        `json:"openedAt"`
	ResolvedAt   time.Time        `json:"resolvedAt,omitzero"`
	UpdatedAt    time.Time        `json:"updatedAt"`
}

// state is everything the sweep persists: alerts by key, cluster groups by
// key, silences by id.
type state struct {
	Alerts   map[string]*alertRecord   `json:"alerts"`
	Groups   map[string]*groupRecord   `json:"groups,omitempty"`
	Silences map[string]*alert.Silence `json:"silences,omitempty"`
}

func newState() *state {
	return &state{Alerts: map[string]*alertRecord{}, Groups: map[string]*groupRecord{}, Silences: map[string]*alert.Silence{}}
}

// decodeState parses the ConfigMap data; a missing key is an empty state.
func decodeState(data map[string]string) (*state, error) {
	st := newState()
	raw, ok := data[stateDataKey]
	if !ok || raw == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(raw), st); err != nil {
		return nil, fmt.Errorf("decoding alert state: %w", err)
	}
	if st.Alerts == nil {
		st.Alerts = map[string]*alertRecord{}
	}
	if st.Groups == nil {
		st.Groups = map[string]*groupRecord{}
	}
	if st.Silences == nil {
		st.Silences = map[string]*alert.Silence{}
	}
	return st, nil
}

// encode prunes the state at now and returns it as ConfigMap data, within
// maxStateBytes: when still too big, the oldest resolved alerts go first.
func (st *state) encode(now time.Time) (map[string]string, error) {
	st.prune(now)
	for {
		raw, err := json.Marshal(st)
		if err != nil {
			return nil, fmt.Errorf("encoding alert state: %w", err)
		}
		if len(raw) <= maxStateBytes {
			return map[string]string{stateDataKey: string(raw)}, nil
		}
		if !st.dropOldestResolved(len(raw) - maxStateBytes) {
			return nil, fmt.Errorf("encoding alert state: %d bytes of open alerts and silences exceed %d", len(raw), maxStateBytes)
		}
	}
}

// prune drops what ended more than stateRetention before now.
func (st *state) prune(now time.Time) {
	cutoff := now.Add(-stateRetention)
	maps.DeleteFunc(st.Alerts, func(_ string, r *alertRecord) bool {
		return !r.firing() && r.ResolvedAt.Before(cutoff)
	})
	maps.DeleteFunc(st.Groups, func(_ string, g *groupRecord) bool {
		return !g.ResolvedAt.IsZero() && g.ResolvedAt.Before(cutoff)
	})
	maps.DeleteFunc(st.Silences, func(_ string, s *alert.Silence) bool { return s.Until.Before(cutoff) })
}

// dropOldestResolved deletes resolved alerts, the earliest resolved first,
// until about excess bytes of encoding are gone; false when there is none
// to delete.
func (st *state) dropOldestResolved(excess int) bool {
	var resolved []*alertRecord
	for _, r := range st.Alerts {
		if !r.firing() {
			resolved = append(resolved, r)
		}
	}
	if len(resolved) == 0 {
		return false
	}
	slices.SortFunc(resolved, func(a, b *alertRecord) int {
		return cmp.Or(a.ResolvedAt.Compare(b.ResolvedAt), cmp.Compare(a.Key, b.Key))
	})
	for _, r := range resolved {
		if excess <= 0 {
			break
		}
		raw, _ := json.Marshal(r)
		excess -= len(raw) + len(r.Key) + 4 // the record, its map key, quotes, colon and comma
		delete(st.Alerts, r.Key)
	}
	return true
}

// merge folds other into st: for every alert, group and silence the most
// recently updated version wins (st's on a tie). Two writers that both
// started from the same version therefore lose nothing.
func (st *state) merge(other *state) {
	for k, r := range other.Alerts {
		if mine, ok := st.Alerts[k]; !ok || r.UpdatedAt.After(mine.UpdatedAt) {
			st.Alerts[k] = r
		}
	}
	for k, g := range other.Groups {
		if mine, ok := st.Groups[k]; !ok || g.UpdatedAt.After(mine.UpdatedAt) {
			st.Groups[k] = g
		}
	}
	for k, s := range other.Silences {
		// On a tie the earlier end wins: a silence ended early in the same
		// instant it was written elsewhere is ended (alerts resume).
		mine, ok := st.Silences[k]
		if !ok || s.UpdatedAt.After(mine.UpdatedAt) || s.UpdatedAt.Equal(mine.UpdatedAt) && s.Until.Before(mine.Until) {
			st.Silences[k] = s
		}
	}
}

// silencedBy returns the active silence that covers r, or nil.
func (st *state) silencedBy(r *alertRecord, now time.Time) *alert.Silence {
	for _, id := range slices.Sorted(maps.Keys(st.Silences)) {
		if s := st.Silences[id]; s.Active(now) && silenceMatches(*s, r) {
			return s
		}
	}
	return nil
}

// sortedSilences returns copies of the silences, newest first.
func (st *state) sortedSilences() []alert.Silence {
	out := make([]alert.Silence, 0, len(st.Silences))
	for _, s := range st.Silences {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b alert.Silence) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}
