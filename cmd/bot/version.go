package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func runVersion(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) error {
	fmt.Fprintf(stdout, "bot %s (%s)\n", version, runtime.Version())
	return nil
}
