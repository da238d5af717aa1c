package main

import (
	"context"
	"errors"
	"io"
)

// runDemo is a placeholder until its issue lands; it says so instead of pretending.
func runDemo(_ context.Context, _ []string, _ io.Reader, _, _ io.Writer) error {
	return errors.New("not implemented yet")
}
