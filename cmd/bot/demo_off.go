// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build nodemo

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newDemoCmd in a production build (-tags nodemo, as hack/build-bot.sh and
// the image build): the demo's fake cluster, kubelet stand-in and Slack
// emulator are not linked, so `bot serve` never initialises them. The
// command stays, to say so.
func newDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "demo",
		Short:              "Not in this build (-tags nodemo): run `go run ./cmd/bot demo` from a checkout",
		Long:               "This build has no demo (built with -tags nodemo, as the container image is):\nrun `go run ./cmd/bot demo` from a checkout.",
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(*cobra.Command, []string) error {
			return errors.New("this build has no demo (built with -tags nodemo, as the container image is); run `go run ./cmd/bot demo` from a checkout")
		},
	}
}
