package main

import (
	"context"
	"errors"
	"io"
)

// runRepair is a placeholder until its issue lands; it says so instead of pretending.
func runRepair(_ context.Context, _ []string, _ io.Reader, _, _ io.Writer) error {
	return errors.New("not implemented yet")
}
