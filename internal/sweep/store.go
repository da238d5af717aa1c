// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// maxWriteAttempts bounds the read-merge-write retries of one save.
const maxWriteAttempts = 5

// stateStore keeps the alert state in a ConfigMap with optimistic
// concurrency: a write carries the resourceVersion it was based on, and a
// conflict is settled by reading the other writer's version and merging
// (most recently updated record wins). It is not safe for concurrent use;
// the Sweeper serialises access.
type stateStore struct {
	cm *kube.StateConfigMap
	// rv is the resourceVersion the in-memory state was last read or
	// written at ("" when the ConfigMap did not exist).
	rv string
	// foldedRV is the last cached version merged in by refresh.
	foldedRV string
}

// load reads the state from the API server.
func (s *stateStore) load(ctx context.Context) (*state, error) {
	cm, err := s.cm.Read(ctx)
	if err != nil {
		return nil, err
	}
	if cm == nil {
		s.rv = ""
		return newState(), nil
	}
	st, err := decodeState(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", s.cm, err)
	}
	s.rv = cm.ResourceVersion
	return st, nil
}

// refresh merges into st what another replica wrote (a silence set from a
// Slack click it received), as the informer's cache shows it. It costs no
// request.
func (s *stateStore) refresh(st *state) error {
	cm := s.cm.Cached()
	if cm == nil || cm.ResourceVersion == s.rv || cm.ResourceVersion == s.foldedRV {
		return nil
	}
	other, err := decodeState(cm.Data)
	if err != nil {
		return fmt.Errorf("ConfigMap %s: %w", s.cm, err)
	}
	st.merge(other)
	s.foldedRV = cm.ResourceVersion
	return nil
}

// save writes st. On a conflict it reads the current version, merges it
// into st and tries again.
func (s *stateStore) save(ctx context.Context, st *state, now time.Time) error {
	for attempt := 1; ; attempt++ {
		data, err := st.encode(now)
		if err != nil {
			return err
		}
		rv, err := s.cm.Write(ctx, s.rv, data)
		if err == nil {
			s.rv = rv
			return nil
		}
		if !errors.Is(err, kube.ErrStateConflict) || attempt == maxWriteAttempts {
			return fmt.Errorf("saving alert state (attempt %d): %w", attempt, err)
		}
		cm, err := s.cm.Read(ctx)
		if err != nil {
			return fmt.Errorf("saving alert state: %w", err)
		}
		s.rv = ""
		if cm != nil {
			other, err := decodeState(cm.Data)
			if err != nil {
				return fmt.Errorf("saving alert state: ConfigMap %s: %w", s.cm, err)
			}
			st.merge(other)
			s.rv = cm.ResourceVersion
		}
	}
}
