//go:build nodemo

package main

import (
	"context"
	"errors"
	"io"
)

// runDemo in a production build (-tags nodemo, as hack/build-bot.sh and
// the image build): the demo's fake cluster, kubelet stand-in and Slack
// emulator are not linked, so `bot serve` never initialises them.
func runDemo(context.Context, []string, io.Reader, io.Writer, io.Writer) error {
	return errors.New("this build has no demo (built with -tags nodemo, as the container image is); run `go run ./cmd/bot demo` from a checkout")
}
