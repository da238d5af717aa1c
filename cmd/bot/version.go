package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// newVersionCmd is `bot version` (also `bot --version`).
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "bot %s (%s)\n", version, runtime.Version())
			return err
		},
	}
}
