// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import "context"

// Step is one small, idempotent action of a repair plan.
type Step interface {
	// Describe is the step's one-line description, shown to people.
	Describe() string
	// Done reports whether the step's effect is already in place (a resumed
	// or repeated run); the executor then skips Do.
	Done(ctx context.Context) (bool, error)
	// Do performs the step.
	Do(ctx context.Context) error
}

// Plan is an ordered list of steps, and the cleanup steps that always run
// after them, whatever happened.
type Plan struct {
	Steps   []Step
	Cleanup []Step
}

// Describe lists the plan's steps, one per line, numbered, followed by its
// cleanup steps.
func (p Plan) Describe() []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.Describe())
	}
	for _, s := range p.Cleanup {
		out = append(out, "always: "+s.Describe())
	}
	return out
}

// funcStep is a Step built from a description and two functions. The
// repair's steps are small closures over one repair's state; this keeps each
// of them a few lines long.
type funcStep struct {
	describe string
	done     func(ctx context.Context) (bool, error)
	do       func(ctx context.Context) error
	detail   func() string
}

// Detailer is implemented by steps that have something to tell people
// after they are done (what moved where, what the new pod logged).
type Detailer interface {
	Detail() string
}

// Detail returns the step's detail, "" when it has none.
func (s funcStep) Detail() string {
	if s.detail == nil {
		return ""
	}
	return s.detail()
}

func (s funcStep) Describe() string { return s.describe }

func (s funcStep) Done(ctx context.Context) (bool, error) {
	if s.done == nil {
		return false, nil
	}
	return s.done(ctx)
}

func (s funcStep) Do(ctx context.Context) error { return s.do(ctx) }
