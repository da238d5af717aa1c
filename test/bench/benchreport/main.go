// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command benchreport measures what a user feels and what the cluster pays
// for the bot, in one process: ack latency under a slow API server, API
// cost per diagnosis, sweep cost at cluster scale, classifier throughput
// beside grep, repair overhead, the bot's memory, an incident burst, and
// how a cluster that hangs or is down affects another cluster's answers
// (on a real API server: the control-plane binaries of
// hack/build-control-plane.sh, or $KUBEBUILDER_ASSETS). It prints a table
// and writes docs/BENCHMARKS.md with the machine it ran on.
//
//	go run ./test/bench/benchreport [-quick] [-out docs/BENCHMARKS.md]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// sizes are the knobs -quick turns down.
type sizes struct {
	ackCommands    int
	bigLog         int64
	sweepPods      []int
	sweepsPerSize  int
	classifierLog  int64
	classifierRuns int
	memDiagnoses   int
	burst          burstSpec
	fleet          fleetSpec
}

var (
	fullSizes  = sizes{96, 1 << 30, []int{1000, 10000, 50000}, 20, 64 << 20, 3, 1000, fullBurst, fullFleet}
	quickSizes = sizes{8, 1 << 30, []int{200, 1000}, 3, 4 << 20, 1, 16, quickBurst, quickFleet}
)

func main() {
	if isChild() {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport child:", err)
			os.Exit(1)
		}
		return
	}
	quick := flag.Bool("quick", false, "smaller sizes, for a smoke test")
	out := flag.String("out", "docs/BENCHMARKS.md", "where to write the report (\"\" = nowhere)")
	only := flag.String("only", "", "run only this scenario (ack, apicost, sweep, classifier, repair, memory, burst, fleet); for debugging")
	flag.StringVar(&burstJSON, "burst-json", "", "also write the incident burst's measurements as JSON to this file")
	flag.Parse()
	if *only != "" {
		if *out == "docs/BENCHMARKS.md" {
			*out = "" // a partial report never replaces the full one
		}
		if !slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == *only }) {
			fmt.Fprintln(os.Stderr, "benchreport: no scenario", *only)
			os.Exit(2)
		}
		scenarios = slices.DeleteFunc(scenarios, func(s scenario) bool { return s.name != *only })
	}
	if err := run(os.Stdout, *quick, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

// scenario is one named measurement.
type scenario struct {
	name string
	run  func(sizes) (section, error)
}

var scenarios = []scenario{
	{"ack", func(s sizes) (section, error) { return runAck(s.ackCommands, 8) }},
	{"apicost", func(s sizes) (section, error) { return runAPICost(s.bigLog) }},
	{"sweep", func(s sizes) (section, error) { return runSweep(s.sweepPods, s.sweepsPerSize) }},
	{"classifier", func(s sizes) (section, error) { return runClassifier(s.classifierLog, s.classifierRuns) }},
	{"repair", func(sizes) (section, error) { return runRepair() }},
	{"memory", func(s sizes) (section, error) { return runMemory(s.memDiagnoses) }},
	{"burst", func(s sizes) (section, error) { return runBurst(s.burst, burstJSON) }},
	{"fleet", func(s sizes) (section, error) { return runFleet(s.fleet) }},
}

// burstJSON is the -burst-json flag.
var burstJSON string

// run runs every scenario, prints the table to w and writes the markdown
// report to outPath (unless empty).
func run(w io.Writer, quick bool, outPath string) error {
	sz := fullSizes
	mode := "full"
	if quick {
		sz, mode = quickSizes, "quick"
	}
	started := time.Now()
	var sections []section
	for _, sc := range scenarios {
		t := time.Now()
		fmt.Fprintf(w, "running %s…\n", sc.name)
		s, err := sc.run(sz)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.name, err)
		}
		fmt.Fprintf(w, "  done in %s\n", time.Since(t).Round(time.Millisecond))
		sections = append(sections, s)
	}
	var rows []row
	for _, s := range sections {
		rows = append(rows, s.Rows...)
	}
	fmt.Fprintln(w)
	writeText(w, rows)
	took := time.Since(started)
	fmt.Fprintf(w, "\n%s run in %s\n", mode, took.Round(time.Second))
	if outPath == "" {
		return nil
	}
	var doc bytes.Buffer
	writeReport(&doc, mode, took, started, sections, rows)
	doc.WriteString(keptSection(outPath))
	if err := os.WriteFile(outPath, doc.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(w, "wrote %s\n", outPath)
	return nil
}

// realNodeHeading starts the section of docs/BENCHMARKS.md written from the
// real-node tests (test/realnode), which this command cannot measure.
const realNodeHeading = "\n## Real node\n"

// keptSection returns the real-node section of the existing report, if any,
// so that rewriting the report keeps it.
func keptSection(path string) string {
	old, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if i := bytes.Index(old, []byte(realNodeHeading)); i >= 0 {
		return string(old[i:])
	}
	return ""
}

// writeReport renders docs/BENCHMARKS.md.
func writeReport(w io.Writer, mode string, took time.Duration, started time.Time, sections []section, rows []row) {
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated by `go run ./test/bench/benchreport` (do not edit by hand; rerun it). Times are from a shared, noisy machine: "+
		"read the ratios and counts, which hold across machines, before the absolute times.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Machine")
	fmt.Fprintln(w)
	for _, kv := range machine() {
		fmt.Fprintf(w, "- %s: %s\n", kv[0], kv[1])
	}
	fmt.Fprintf(w, "- run: %s mode, %s, took %s\n", mode, started.UTC().Format(time.RFC3339), took.Round(time.Second))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Results")
	fmt.Fprintln(w)
	writeTable(w, rows)
	for _, s := range sections {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "## %s\n\n", s.Title)
		fmt.Fprint(w, s.Detail)
	}
}

// machine describes where the report ran.
func machine() [][2]string {
	cpu := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	nproc := fmt.Sprint(runtime.NumCPU())
	if out, err := exec.Command("nproc").Output(); err == nil {
		nproc = strings.TrimSpace(string(out))
	}
	grep := "unknown"
	if out, err := exec.Command("grep", "--version").Output(); err == nil {
		grep, _, _ = strings.Cut(string(out), "\n")
	}
	return [][2]string{
		{"CPU", cpu},
		{"nproc", nproc},
		{"GOMAXPROCS", fmt.Sprint(runtime.GOMAXPROCS(0))},
		{"Go", runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{"grep", grep},
	}
}

// debugf logs the kubelet stand-in's actions when BENCHREPORT_DEBUG is set.
func debugf(format string, args ...any) {
	if os.Getenv("BENCHREPORT_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}
