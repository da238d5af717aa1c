// Command screenshot renders the Slack message that `bot demo` makes the
// bot post (the diagnosis of foobar-kafka-broker-0, with its Approve and
// Reject buttons) to a PNG, for the README. It plays the demo's story
// (approving it, so the story is checked to succeed), reads the message
// as the Slack emulator stored it, renders its Block Kit JSON to HTML and
// has headless Chromium take the screenshot.
//
// Generating the picture is a manual step, not part of the tests. On
// Debian: apt-get install -y chromium fonts-noto-color-emoji busybox, then
// from the module root:
//
//	go run ./internal/demo/screenshot -o docs/slack-message.png
//
// -html FILE also keeps the HTML page.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/demo"
)

func main() {
	out := flag.String("o", "docs/slack-message.png", "PNG file to write")
	keepHTML := flag.String("html", "", "also write the HTML page to this file")
	browser := flag.String("chromium", "chromium", "the Chromium binary")
	size := flag.String("window-size", "900,1300", "the screenshot's width,height in pixels")
	flag.Parse()
	if err := run(*out, *keepHTML, *browser, *size); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out, keepHTML, browser, size string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := demo.Run(ctx, demo.Options{Out: io.Discard, Yes: true})
	if err != nil {
		return fmt.Errorf("playing the demo: %w", err)
	}
	page, err := demo.RenderHTML(demo.MessageView{
		Channel: demo.ChannelName, Author: "kafkabot", Time: time.Now().Format("15:04"),
		Blocks: res.Diagnosis.Blocks, Fallback: res.Diagnosis.Text,
		Users: demo.Users{demo.Requester: "alice", demo.Approver: "bob"},
	})
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kafkabot-screenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	htmlFile := filepath.Join(tmp, "message.html")
	if err := os.WriteFile(htmlFile, []byte(page), 0o644); err != nil {
		return err
	}
	if keepHTML != "" {
		if err := os.WriteFile(keepHTML, []byte(page), 0o644); err != nil {
			return err
		}
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir="+filepath.Join(tmp, "profile"),
		"--screenshot="+absOut, "--window-size="+size, "file://"+htmlFile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running %s: %w", browser, err)
	}
	if _, err := os.Stat(absOut); err != nil {
		return errors.Join(fmt.Errorf("%s wrote no screenshot", browser), err)
	}
	fmt.Println("wrote", out)
	return nil
}
