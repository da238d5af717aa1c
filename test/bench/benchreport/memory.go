// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// The bot-under-test child process: the benchmark binary re-executed with
// childEnv set runs only the bot, so its RSS is the bot's, not the
// emulator's or the harness's.
const (
	childEnv      = "BENCHREPORT_CHILD"
	childAPIURL   = "BENCHREPORT_SLACK_API_URL"
	childWorkers  = 8
	childReady    = "ready"
	childStatsCmd = "stats"
)

// memStats is what the child reports about itself.
type memStats struct {
	RSSBytes   int64  `json:"rss_bytes"`
	HeapAlloc  uint64 `json:"heap_alloc"`
	HeapInuse  uint64 `json:"heap_inuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
}

// isChild reports whether this process is the bot-under-test child.
func isChild() bool { return os.Getenv(childEnv) == "bot" }

// runChild runs the bot against the emulator at $BENCHREPORT_SLACK_API_URL
// on a fake cluster holding the seed incident, and answers "stats" lines
// on stdin with a memStats JSON line on stdout until stdin closes.
func runChild() error {
	world := fakeapi.New(staticCluster(time.Now())...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Logs: benchutil.TextLogs(seedLog)})
	cluster := kube.New(view, kube.Options{Namespaces: []string{kafkaNS}})
	bot, err := handlers.New(handlers.Options{
		AppToken: slackemu.DefaultAppToken, BotToken: slackemu.DefaultBotToken, APIURL: os.Getenv(childAPIURL),
		ApprovalSecret: approvalSecret, Approvers: []string{approver}, Workers: childWorkers, ApprovalChannels: []string{channel},
		ShareWindow: -1, // every command a diagnosis of its own: 1,000 diagnoses are 1,000 reads
		Clusters:    []handlers.ClusterOptions{{Reader: cluster}}, Diagnoser: diagnose.Default(), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	for !bot.Connected() {
		time.Sleep(2 * time.Millisecond)
	}
	fmt.Println(childReady)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != childStatsCmd {
			continue
		}
		view.ClearActions() // the fake's request log is the harness's memory, not the bot's
		if err := json.NewEncoder(os.Stdout).Encode(selfStats()); err != nil {
			return err
		}
	}
	cancel()
	return <-done
}

// selfStats collects garbage and reads this process's memory and goroutines.
func selfStats() memStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, _ := vmRSS("self")
	return memStats{RSSBytes: rss, HeapAlloc: m.HeapAlloc, HeapInuse: m.HeapInuse, Sys: m.Sys, Goroutines: runtime.NumGoroutine()}
}

// vmRSS reads VmRSS of /proc/<pid>/status in bytes.
func vmRSS(pid string) (int64, error) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS line")
}

// child is the running bot-under-test.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startChild(apiURL string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=bot", childAPIURL+"="+apiURL)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the bot child: %w", err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	if !c.out.Scan() || c.out.Text() != childReady {
		c.stop()
		return nil, fmt.Errorf("the bot child did not become ready (%q)", c.out.Text())
	}
	return c, nil
}

func (c *child) stats() (memStats, error) {
	if _, err := io.WriteString(c.stdin, childStatsCmd+"\n"); err != nil {
		return memStats{}, err
	}
	if !c.out.Scan() {
		return memStats{}, fmt.Errorf("the bot child stopped answering: %v", c.out.Err())
	}
	var m memStats
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		return memStats{}, err
	}
	return m, nil
}

func (c *child) stop() error {
	c.stdin.Close()
	return c.cmd.Wait()
}

// runMemory measures the bot child idle, after a warm-up wave, and after n
// diagnoses, sent in waves of the worker pool's size.
func runMemory(n int) (section, error) {
	title := "6. Bot memory"
	emu, err := slackemu.New(slackemu.Options{})
	if err != nil {
		return section{}, err
	}
	defer emu.Close()
	c, err := startChild(emu.APIURL())
	if err != nil {
		return section{}, err
	}
	defer c.stop()
	time.Sleep(500 * time.Millisecond) // let the connection settle
	idle, err := c.stats()
	if err != nil {
		return section{}, err
	}
	wave := 0
	send := func(count int) error {
		for sent := 0; sent < count; sent += childWorkers {
			k := min(childWorkers, count-sent)
			ch := fmt.Sprintf("C0MEM%05d", wave)
			wave++
			if err := diagnoseWave(emu, ch, k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(childWorkers); err != nil {
		return section{}, err
	}
	warm, err := c.stats()
	if err != nil {
		return section{}, err
	}
	if err := send(n); err != nil {
		return section{}, err
	}
	time.Sleep(500 * time.Millisecond)
	after, err := c.stats()
	if err != nil {
		return section{}, err
	}
	rows := []row{
		{title, "RSS idle / after warm-up / after " + fmt.Sprint(n) + " diagnoses",
			mib(float64(idle.RSSBytes)) + " / " + mib(float64(warm.RSSBytes)) + " / " + mib(float64(after.RSSBytes)), "", ""},
		{title, "live heap idle / after " + fmt.Sprint(n) + " diagnoses", mib(float64(idle.HeapAlloc)) + " / " + mib(float64(after.HeapAlloc)), "", ""},
		{title, "goroutines idle / after warm-up / after " + fmt.Sprint(n) + " diagnoses",
			fmt.Sprintf("%d / %d / %d", idle.Goroutines, warm.Goroutines, after.Goroutines),
			"no growth after warm-up", verdict(after.Goroutines <= warm.Goroutines)},
	}
	var d strings.Builder
	fmt.Fprintf(&d, "The bot runs in a child process (this binary re-executed) wired as `bot serve` wires it, except that its "+
		"clientset is client-go's fake holding the seed incident (4 pods, a claim, an event) instead of a kubeconfig's: there is no "+
		"API server here, and the fake's objects are a few KiB. The child is connected to the emulator in the parent over a real "+
		"WebSocket; the parent sends `/kafka diagnose broker-0` in waves of %d (the worker pool), each diagnosis reading the real "+
		"seed log through the log path. Numbers are read by the child after two GCs: VmRSS from /proc/self/status, HeapAlloc, and "+
		"runtime.NumGoroutine. \"Warm-up\" is after the first wave, once the Web API's keep-alive connections exist; goroutines "+
		"are compared from there, because each idle keep-alive connection holds two goroutines by design. The fake clientset's "+
		"request log is cleared before each reading (it is the harness's memory, not the bot's).\n\n", childWorkers)
	fmt.Fprintln(&d, "| Point | RSS | HeapAlloc | HeapInuse | Sys | Goroutines |")
	fmt.Fprintln(&d, "|---|---|---|---|---|---|")
	for _, p := range []struct {
		name string
		m    memStats
	}{{"idle", idle}, {"after warm-up", warm}, {fmt.Sprintf("after %d diagnoses", n), after}} {
		fmt.Fprintf(&d, "| %s | %s | %s | %s | %s | %d |\n", p.name, mib(float64(p.m.RSSBytes)), mib(float64(p.m.HeapAlloc)),
			mib(float64(p.m.HeapInuse)), mib(float64(p.m.Sys)), p.m.Goroutines)
	}
	binSize := "unknown"
	if self, err := os.Executable(); err == nil {
		if fi, err := os.Stat(self); err == nil {
			binSize = mib(float64(fi.Size()))
		}
	}
	fmt.Fprintf(&d, "\nRSS counts the binary's code pages (the binary is %s) as they are first touched and the pages the Go "+
		"runtime has not yet returned to the OS; the bot's own memory is HeapAlloc (live objects) and Sys (everything the Go "+
		"runtime holds). A leak shows as HeapAlloc or goroutines growing with the number of diagnoses.\n", binSize)
	fmt.Fprintln(&d, "\nThe leak test proper is `TestNoGoroutineLeakAfterDiagnoses` in test/bench/benchreport (go.uber.org/goleak): "+
		"100 diagnoses through the emulator, the bot stopped, and not one goroutine left behind.")

	// The real `bot serve` binary, idle: as shipped, and with the demo linked.
	shipped, err := measureServeIdle("nodemo")
	if err != nil {
		return section{}, err
	}
	withDemo, err := measureServeIdle("")
	if err != nil {
		return section{}, err
	}
	rows = append(rows, row{title, "`bot serve` idle, shipped build (-tags nodemo): RSS / heap / goroutines",
		fmt.Sprintf("%s / %s / %.0f", mib(shipped.RSS), mib(shipped.HeapAlloc), shipped.Goroutines), "", ""})
	fmt.Fprintf(&d, "\n### The `bot serve` binary, idle\n\nThe child above is this benchmark's own binary. To see the real serve path, "+
		"`cmd/bot` is built as hack/build-bot.sh builds the image's binary (CGO off, trimmed, stripped, `-tags nodemo`) and, for "+
		"comparison, without `-tags nodemo`, and each is run as `bot serve` against the emulator (no ALERT_CHANNEL, so no sweep) with "+
		"a kubeconfig naming a loopback port nothing listens on (no API server here: the start-up resume of interrupted repairs "+
		"fails and is logged). %s after it connected, its own `/metrics` is read: process_resident_memory_bytes, "+
		"go_memstats_heap_alloc_bytes (as reported, not after a GC) and go_goroutines. `-tags nodemo` leaves out `bot demo` and with it "+
		"everything only the demo and the tests use (client-go's fake clientset, internal/testkit/fakeapi, internal/testkit/kubesim, internal/testkit/slackemu "+
		"and its WebSocket server), whose package initialisers would otherwise run in every `bot serve`.\n\n", serveSettle)
	fmt.Fprintln(&d, "| Build | Binary | RSS | HeapAlloc | Goroutines |")
	fmt.Fprintln(&d, "|---|---|---|---|---|")
	for _, b := range []struct {
		name string
		m    serveIdle
	}{{"shipped (`-tags nodemo`)", shipped}, {"with `bot demo` linked", withDemo}} {
		fmt.Fprintf(&d, "| %s | %s | %s | %s | %.0f |\n", b.name, mib(float64(b.m.Binary)), mib(b.m.RSS), mib(b.m.HeapAlloc), b.m.Goroutines)
	}
	return section{Title: title, Rows: rows, Detail: d.String()}, nil
}

// diagnoseWave sends k diagnoses at once in channel ch and waits for the k
// diagnosis messages.
func diagnoseWave(emu *slackemu.Server, ch string, k int) error {
	ctx, cancel := waitCtx()
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for i := range k {
		wg.Go(func() {
			for {
				id, err := emu.SendSlashCommand(ctx, slackemu.SlashCommand{ChannelID: ch, UserID: fmt.Sprintf("U0MEM%03d", i), Command: "/kafka", Text: "diagnose broker-0"})
				var ack slackemu.Ack
				if err == nil {
					ack, err = emu.WaitAck(ctx, id)
				}
				if err == nil && strings.Contains(string(ack.Payload), "busy") {
					time.Sleep(5 * time.Millisecond) // a worker frees its slot just after posting
					continue
				}
				errs <- err
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	if err := emu.WaitFor(ctx, func() bool { return len(emu.Messages(ch)) >= k }); err != nil {
		return fmt.Errorf("waiting for %d diagnoses in %s: %w", k, ch, err)
	}
	return nil
}
