// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command screenshot draws the README picture: the diagnosis message the
// bot posts for the seed incident (demo.PictureSource: the real engine on
// the seed log, the real renderer), as Block Kit JSON
// (docs/slack-message.json, which TestREADMEPictureSourceIsCurrent holds
// to what the code renders) and as a PNG of that payload rendered to HTML
// in Slack's style by headless Chromium. The PNG is a rendering of the
// Block Kit payload, not a screenshot of Slack, and says so.
//
// On Debian: apt-get install -y chromium fonts-noto-color-emoji, then from
// the module root:
//
//	go run ./internal/testkit/demo/screenshot
//
// It prints the picture's content height and the height above the Approve
// button, in pixels at the chosen width. -html FILE also keeps the page.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/testkit/demo"
)

func main() {
	out := flag.String("o", "docs/slack-message.png", "PNG file to write")
	source := flag.String("json", "docs/slack-message.json", "Block Kit JSON file to write (the picture's source)")
	keepHTML := flag.String("html", "", "also write the HTML page to this file")
	browser := flag.String("chromium", "chromium", "the Chromium binary")
	width := flag.Int("width", 900, "the picture's width in pixels (Slack's message column in a 1280 px window)")
	flag.Parse()
	if err := run(*out, *source, *keepHTML, *browser, *width); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out, source, keepHTML, browser string, width int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	blocks, err := demo.PictureSource()
	if err != nil {
		return err
	}
	view, err := demo.PictureView()
	if err != nil {
		return err
	}
	page, err := demo.RenderHTML(demo.MessageView{
		Channel: demo.ChannelName, Author: "kafkabot", Time: "08:31",
		Blocks: blocks, Fallback: view.Message().Fallback, Replies: 1,
		Users: demo.Users{demo.Requester: "alice", demo.Approver: "bob"},
		Note:  "A rendering of the Block Kit payload in docs/slack-message.json (go run ./internal/testkit/demo/screenshot), in Slack's style; not a screenshot of Slack.",
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
	raw := filepath.Join(tmp, "raw.png")
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir="+filepath.Join(tmp, "profile"),
		"--screenshot="+raw, fmt.Sprintf("--window-size=%d,2400", width), "file://"+htmlFile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running %s: %w", browser, err)
	}
	img, err := readPNG(raw)
	if err != nil {
		return errors.Join(fmt.Errorf("%s wrote no usable screenshot", browser), err)
	}
	height, button := contentHeight(img), firstButtonRow(img)
	cropped, ok := img.(interface {
		SubImage(r image.Rectangle) image.Image
	})
	if !ok {
		return errors.New("the screenshot cannot be cropped")
	}
	b := img.Bounds()
	var buf bytes.Buffer
	if err := png.Encode(&buf, cropped.SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, min(b.Max.Y, height+12)))); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(source, blocks, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s and %s: content %d px tall at %d px wide, Approve button at %d px\n", out, source, height, width, button)
	return nil
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

// contentHeight is the y below the last row that is not (nearly) white.
func contentHeight(img image.Image) int {
	b := img.Bounds()
	last := b.Min.Y
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r>>8 < 245 || g>>8 < 245 || bl>>8 < 245 {
				last = y
				break
			}
		}
	}
	return last + 1 - b.Min.Y
}

// firstButtonRow is the first row showing the primary (Approve) button's
// green, #007a5a; -1 when there is none.
func firstButtonRow(img image.Image) int {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 10 && g>>8 > 110 && g>>8 < 135 && bl>>8 > 80 && bl>>8 < 100 {
				return y - b.Min.Y
			}
		}
	}
	return -1
}
