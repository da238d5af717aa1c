// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

// version and commit are stamped at build time by hack/build-bot.sh:
// -ldflags "-X main.version=0.1.0 -X main.commit=<git rev-parse HEAD>". The
// version comes from the repository's VERSION file, the one source of the
// release's version (the image's tag and labels and the chart's version and
// appVersion are the same; hack/release_test.go holds them together).
var (
	version = "dev"
	commit  = ""
)

// printVersion writes the one version line that both `bot version` and
// `bot --version` (-v) print: "bot 0.1.0 (commit 0123abc, go1.x.y)", or
// "bot dev (go1.x.y)" for a build that was not stamped.
func printVersion(w io.Writer) error {
	built := runtime.Version()
	if commit != "" {
		built = "commit " + shortCommit(commit) + ", " + built
	}
	_, err := fmt.Fprintf(w, "bot %s (%s)\n", version, built)
	return err
}

// shortCommit abbreviates a full commit hash to 12 characters, as git does
// for a large history; a "-dirty" suffix stays.
func shortCommit(c string) string {
	hash, dirty := c, ""
	if i := len(c) - len("-dirty"); i > 0 && c[i:] == "-dirty" {
		hash, dirty = c[:i], "-dirty"
	}
	if len(hash) > 12 {
		hash = hash[:12]
	}
	return hash + dirty
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
