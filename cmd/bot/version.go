package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// printVersion writes the one version line that both `bot version` and
// `bot --version` (-v) print: "bot v1.2.3 (go1.x.y)".
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "bot %s (%s)\n", version, runtime.Version())
	return err
}

// newVersionCmd is `bot version`.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout())
		},
	}
}
