// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
)

// TestMain lets the memory scenario re-execute the test binary as its bot
// child, as it re-executes the benchreport binary.
func TestMain(m *testing.M) {
	if isChild() {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestQuickReport runs every scenario at the quick sizes and checks that
// the table and the report have every scenario and every metric, and a
// verdict wherever there is a target. It asserts no times.
func TestQuickReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every scenario (about 5 s)")
	}
	out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	var stdout bytes.Buffer
	if err := run(&stdout, true, out); err != nil {
		t.Fatalf("quick run: %v\n%s", err, stdout.String())
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1. Ack latency", "ack p99 ÷ API delay", "time to posted summary",
		"2. API cost per diagnosis", "requests: Snapshot alone", "log bytes read of a 1024.0 MiB log",
		"3. Sweep cost", "API requests per sweep after warm-up, 200 pods", "API requests per sweep after warm-up, 1000 pods",
		"4. Classifier throughput", "engine throughput ÷ grep throughput",
		"5. Repair overhead", "Approve → `repaired`", "API requests of the whole repair",
		"6. Bot memory", "RSS idle", "goroutines idle", "`bot serve` idle, shipped build",
		"7. Incident burst", "requesters answered", "time to answer p50 / p99 / max",
		"summary p50 ÷ API delay",
		"8. Multi-cluster isolation", "answer p50 / p99: A alone", "p99 ÷ A alone: A + B hanging, `prod-eu/broker-0`",
		"p99 ÷ A alone: A + B refusing connections, `broker-0`",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the printed table lacks %q", want)
		}
		if !strings.Contains(string(doc), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, want := range []string{"## Machine", "- CPU: ", "- nproc: ", "- Go: go", "- run: quick mode", "## Results", "| Scenario | Metric |"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	results, _, _ := strings.Cut(string(doc)[strings.Index(string(doc), "## Results"):], "\n## 1.")
	for line := range strings.SplitSeq(results, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 5 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| Scenario") {
			continue
		}
		target, met := cells[3], strings.TrimSuffix(cells[4], " |")
		if (target == "–") != (met == "–") || (met != "–" && met != "yes" && met != "no") {
			t.Errorf("row %q: target %q with verdict %q", line, target, met)
		}
	}
}

// TestNoGoroutineLeakAfterDiagnoses runs 100 diagnoses through the Slack
// emulator, stops the bot and the emulator, and checks with goleak that
// not one goroutine is left behind.
func TestNoGoroutineLeakAfterDiagnoses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	world := fakeapi.New(staticCluster(time.Now())...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Logs: benchutil.TextLogs(seedLog)})
	// Every command a diagnosis of its own (shared ones are answered by a
	// link, which sb.diagnose does not wait for).
	sb, err := startSlackBot(kube.New(view, kube.Options{Namespaces: []string{kafkaNS}}), func(o *handlers.Options) { o.ShareWindow = -1 })
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		c, err := sb.diagnose(fmt.Sprintf("U0LEAK%03d", i), "diagnose broker-0")
		if err != nil {
			sb.stop()
			t.Fatal(err)
		}
		if !strings.Contains(string(c.message.Blocks), "__cluster_metadata-0") {
			t.Errorf("diagnosis %d does not name __cluster_metadata-0", i)
		}
	}
	if err := sb.stop(); err != nil {
		t.Errorf("the bot stopped with %v", err)
	}
}

// TestGrepPatternsAreERE checks the translation of the engine's rules for
// grep -E: every built-in pattern translates, and no RE2-only syntax is left.
func TestGrepPatternsAreERE(t *testing.T) {
	patterns, skipped := grepPatterns(diagnose.Default())
	if len(patterns) == 0 {
		t.Fatal("no patterns")
	}
	if skipped != 0 {
		t.Errorf("%d built-in patterns could not be translated", skipped)
	}
	rest := regexp.MustCompile(`(^|[^\\])(\(\?|\\[dsSw])`) // an unescaped (? or an RE2 class
	for _, p := range patterns {
		if m := rest.FindString(p); m != "" {
			t.Errorf("pattern %q still holds %q", p, m)
		}
	}
}

// TestToEREMatchesLikeRE2: each translated built-in pattern matches
// exactly the lines of the seed log (plus a few made up to hit the bracket
// cases) that the original matches. The translation is compiled by Go's
// regexp, which reads the POSIX classes it emits and GNU grep's \b alike.
func TestToEREMatchesLikeRE2(t *testing.T) {
	lines := append(strings.Split(seedLog, "\n"),
		"Corrupt index found, index file (/bitnami/kafka/data/orders-0/00000000000000000000.index) has non-zero size",
		"Corrupt index found, index file /x/0.index has non-zero size",
		"id 42 \tword_1 x")
	for _, r := range diagnose.Default().Rules() {
		for _, group := range [][]string{r.Match.All, r.Match.Any, r.Match.None} {
			for _, p := range group {
				ere, ok := toERE(p)
				if !ok {
					continue
				}
				orig, err := regexp.Compile(p)
				if err != nil {
					t.Fatalf("%s: %v", r.ID, err)
				}
				posix, err := regexp.Compile(ere)
				if err != nil {
					t.Errorf("%s: %q -> %q does not compile: %v", r.ID, p, ere, err)
					continue
				}
				for _, l := range lines {
					if orig.MatchString(l) != posix.MatchString(l) {
						t.Errorf("%s: %q and its ERE %q disagree on %q", r.ID, p, ere, l)
					}
				}
			}
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`a(?:b|c)\d+`, `a(b|c)[0-9]+`},
		{`(?P<n>\w+)\s\S`, `([[:alnum:]_]+)[[:space:]][^[:space:]]`},
		{`\(?(?P<f>[^()\s]+\.index)\)?`, `\(?([^()[:space:]]+\.index)\)?`},
		{`[]\d]x`, `[]0-9]x`},
	} {
		if got, ok := toERE(tc.in); !ok || got != tc.want {
			t.Errorf("toERE(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{`(?i)error`, `[^\S]`} {
		if got, ok := toERE(bad); ok {
			t.Errorf("toERE(%q) = %q, want it refused", bad, got)
		}
	}
}
