// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// serveIdle is what a real `bot serve` process reports about itself on
// /metrics once connected and idle.
type serveIdle struct {
	RSS        float64 // process_resident_memory_bytes
	HeapAlloc  float64 // go_memstats_heap_alloc_bytes (not after a GC)
	Goroutines float64 // go_goroutines
	Binary     int64   // size of the binary
}

// serveSettle is how long the process idles before it is read: long
// enough for the background resume of interrupted repairs to give up on
// the unreachable API server.
const serveSettle = 2 * time.Second

// measureServeIdle builds cmd/bot with the given build tags (the shipped
// build uses nodemo), runs `bot serve` against the Slack emulator with a
// kubeconfig naming a loopback port nothing listens on, and reads its
// /metrics once it is connected and has idled.
func measureServeIdle(tags string) (serveIdle, error) {
	var out serveIdle
	dir, err := os.MkdirTemp("", "benchreport-serve-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bot")
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return out, fmt.Errorf("finding the module root to build cmd/bot: %v", err)
	}
	build := exec.Command("go", append(args, "./cmd/bot")...)
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return out, fmt.Errorf("building the bot (tags %q): %v\n%s", tags, err, b)
	}
	if fi, err := os.Stat(bin); err == nil {
		out.Binary = fi.Size()
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: none, user: {token: benchreport-placeholder}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`), 0o600); err != nil {
		return out, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return out, err
	}
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		return out, err
	}
	defer emu.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = []string{
		"SLACK_APP_TOKEN=" + slackemu.DefaultAppToken, "SLACK_BOT_TOKEN=" + slackemu.DefaultBotToken,
		"SLACK_API_URL=" + emu.APIURL(), "APPROVAL_SECRET=" + string(approvalSecret),
		"KUBECONFIG=" + kubeconfig, "KAFKA_NAMESPACES=" + kafkaNS, "HTTP_ADDR=" + addr,
		"LOG_LEVEL=error", "LOG_FORMAT=json", "POD_NAME=benchreport-serve", "HOME=" + dir,
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return out, fmt.Errorf("starting bot serve: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
	}()
	ctx, cancel := waitCtx()
	defer cancel()
	if err := emu.WaitFor(ctx, func() bool { return emu.OpenConnections() > 0 }); err != nil {
		return out, fmt.Errorf("bot serve did not connect to the emulator: %w; its log:\n%s", err, stderr.String())
	}
	select {
	case err := <-exited:
		return out, fmt.Errorf("bot serve exited: %v; its log:\n%s", err, stderr.String())
	case <-time.After(serveSettle):
	}
	m, err := scrape("http://" + addr + "/metrics")
	if err != nil {
		return out, err
	}
	out.RSS, out.HeapAlloc, out.Goroutines = m["process_resident_memory_bytes"], m["go_memstats_heap_alloc_bytes"], m["go_goroutines"]
	if out.RSS == 0 || out.HeapAlloc == 0 {
		return out, errors.New("bot serve's /metrics lacks the process and Go memory metrics")
	}
	return out, nil
}

// freeLoopbackAddr returns a loopback address with a port free just now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// scrape reads the unlabelled samples of a Prometheus text exposition.
func scrape(url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping bot serve's /metrics: %w", err)
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			m[name] = v
		}
	}
	return m, sc.Err()
}
