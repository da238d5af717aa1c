// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"fmt"
	"io"
	"strings"
)

// row is one line of the report's table.
type row struct {
	Scenario string
	Metric   string
	Value    string
	Target   string // "" when the metric has none
	Met      string // "yes", "no", or "" without a target
}

// section is one scenario's result: table rows and a markdown body with
// the details (breakdowns, curves, method).
type section struct {
	Title  string
	Rows   []row
	Detail string
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// writeTable writes rows as a markdown table.
func writeTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| Scenario | Metric | Value | Target | Met |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Scenario, r.Metric, r.Value, dash(r.Target), dash(r.Met))
	}
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// writeText writes rows as an aligned plain-text table for the terminal.
func writeText(w io.Writer, rows []row) {
	head := row{"Scenario", "Metric", "Value", "Target", "Met"}
	all := append([]row{head}, rows...)
	width := make([]int, 5)
	for _, r := range all {
		for i, c := range r.cells() {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for i, r := range all {
		var b strings.Builder
		for j, c := range r.cells() {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[j]-len([]rune(c))+2))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if i == 0 {
			fmt.Fprintln(w, strings.Repeat("-", sum(width)+8))
		}
	}
}

func (r row) cells() []string {
	return []string{r.Scenario, r.Metric, r.Value, dash(r.Target), dash(r.Met)}
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func ms(d interface{ Seconds() float64 }) string { return fmt.Sprintf("%.1f ms", d.Seconds()*1000) }

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
