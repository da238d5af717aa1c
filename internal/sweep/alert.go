// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"context"

	"github.com/kafka-chatops/kafkabot/internal/alert"
)

// Notifier delivers alerts (of the shared model, internal/alert). The Slack
// implementation (*alertnotify.Notifier) renders the same Block Kit
// diagnosis as /kafka diagnose; tests record what they get.
// Every method may be called from one goroutine at a time only.
type Notifier interface {
	// Notify posts one alert and returns where it was posted.
	Notify(ctx context.Context, a alert.Alert) (alert.MessageRef, error)
	// NotifyGroup posts (or, when g.Ref is set, adds to) one alert for
	// several pods of one cluster, and returns where it was posted.
	NotifyGroup(ctx context.Context, g alert.Group) (alert.MessageRef, error)
	// Resolve marks the alert posted at ref as resolved (a.Resolution says
	// why). For a member of a group (a.Group set), ref is the group's
	// message: post a line in its thread; ResolveGroup follows once the last
	// member resolved.
	Resolve(ctx context.Context, ref alert.MessageRef, a alert.Alert) error
	// ResolveGroup marks the group message at ref as resolved.
	ResolveGroup(ctx context.Context, ref alert.MessageRef, g alert.Group) error
	// Summary posts the periodic summary of a scheduled sweep.
	Summary(ctx context.Context, s alert.Summary) error
}
