// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
)

// maxDiagnosisRequests is the target API cost of one diagnosis.
const maxDiagnosisRequests = 4

// costVariant is one way a diagnosis is asked for.
type costVariant struct {
	name     string
	command  string // "" = kube.Client.Snapshot alone, no Slack
	selector string // KAFKA_POD_SELECTOR
}

var costVariants = []costVariant{
	{"Snapshot alone (kube.Client.Snapshot, exact namespace/pod)", "", ""},
	{"`/kafka diagnose kafka/foobar-kafka-broker-0`", "diagnose kafka/foobar-kafka-broker-0", ""},
	{"`/kafka diagnose broker-0`, KAFKA_POD_SELECTOR set", "diagnose broker-0", "app.kubernetes.io/name=kafka"},
	{"`/kafka diagnose broker-0`, built-in selectors", "diagnose broker-0", ""},
}

// runAPICost counts the requests and bytes of one diagnosis for each
// variant, then reads a 1 GiB container log through the log path.
func runAPICost(logSize int64) (section, error) {
	title := "2. API cost per diagnosis"
	var rows []row
	var d strings.Builder
	fmt.Fprintln(&d, "Requests and bytes the bot's clientset served for one diagnosis (client-go fake clientset; object bytes are the JSON "+
		"size of the returned objects, log bytes are read off the log stream through client-go's REST stream path).")
	fmt.Fprintln(&d)
	fmt.Fprintln(&d, "| Variant | Requests | Breakdown | Object bytes | Log bytes |")
	fmt.Fprintln(&d, "|---|---|---|---|---|")
	for _, v := range costVariants {
		st, err := diagnosisCost(v)
		if err != nil {
			return section{}, fmt.Errorf("%s: %w", v.name, err)
		}
		fmt.Fprintf(&d, "| %s | %d | %s | %d | %d |\n", v.name, st.Requests, breakdown(st.ByKind), st.ObjectBytes, st.LogBytes)
		rows = append(rows, row{title, "requests: " + v.name, fmt.Sprint(st.Requests),
			fmt.Sprintf("≤ %d", maxDiagnosisRequests), verdict(st.Requests <= maxDiagnosisRequests)})
	}

	fmt.Fprintf(&d, "\nA %s container log (generated on demand, never held in memory: %d noise lines, then the seed crash log), "+
		"read by `kube.Client.Inspect` with the default limits:\n\n", mib(float64(logSize)), benchutil.GeneratedLogOfSize(logSize, seedLog).NoiseLines)
	fmt.Fprintln(&d, "| Log server | LOG_TAIL_BYTES | Read cap | Bytes read | Bytes kept | Crash found | Time |")
	fmt.Fprintln(&d, "|---|---|---|---|---|---|---|")
	for _, honour := range []bool{true, false} {
		r, err := bigLogRead(logSize, honour)
		if err != nil {
			return section{}, err
		}
		server := "honours tailLines/limitBytes (kubelet)"
		if !honour {
			server = "ignores them, streams everything"
		}
		fmt.Fprintf(&d, "| %s | %d | %d | %d | %d | %s | %s |\n", server, r.tailBytes, r.cap, r.read, r.kept, verdict(r.crashFound), ms(r.took))
		rows = append(rows, row{title, fmt.Sprintf("log bytes read of a %s log, server %s", mib(float64(logSize)), server),
			fmt.Sprintf("%d (%s)", r.read, mib(float64(r.read))), fmt.Sprintf("≤ read cap %d", r.cap), verdict(r.read <= r.cap)})
	}
	fmt.Fprintln(&d, "\nThe read cap is 4 × LOG_TAIL_BYTES + 1 (kube.inspectReadCapFactor, plus one probe byte that tells a log longer than the cap "+
		"from one that fits exactly): the bot asks for limitBytes of that much and stops reading there whatever the server sends. When the server ignores tailLines the cap keeps memory and bytes bounded, but the newest lines (the crash) are "+
		"beyond it: `Inspect` says so in a note and marks the snapshot `LogTruncated` rather than pretending the log was "+
		"complete. A kubelet always honours tailLines, so this row is about bounding damage, not about diagnosing.")
	return section{Title: title, Rows: rows, Detail: d.String()}, nil
}

func breakdown(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// diagnosisCost runs one diagnosis of the seed broker and returns what
// the bot's clientset served for it.
func diagnosisCost(v costVariant) (benchutil.Stats, error) {
	world := fakeapi.New(staticCluster(time.Now())...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Logs: benchutil.TextLogs(seedLog)})
	cluster := kube.New(view, kube.Options{Namespaces: []string{kafkaNS}, Selector: v.selector})
	if v.command == "" {
		s, err := cluster.Snapshot(context.Background(), kafkaNS, seedBroker)
		if err != nil {
			return benchutil.Stats{}, err
		}
		if f := diagnose.Default().Diagnose(s); len(f) == 0 || f[0].Rule != "metadata-log-offset-mismatch" {
			return benchutil.Stats{}, fmt.Errorf("the seed crash was not diagnosed")
		}
		return view.Stats(), nil
	}
	sb, err := startSlackBot(cluster, nil)
	if err != nil {
		return benchutil.Stats{}, err
	}
	defer sb.stop()
	c, err := sb.diagnose("U0COST", v.command)
	if err != nil {
		return benchutil.Stats{}, err
	}
	if !strings.Contains(string(c.message.Blocks), "__cluster_metadata-0") {
		return benchutil.Stats{}, fmt.Errorf("the posted diagnosis does not name __cluster_metadata-0")
	}
	return view.Stats(), nil
}

// bigLog is the outcome of reading a big log.
type bigLog struct {
	tailBytes, cap, read, kept int64
	crashFound                 bool
	took                       time.Duration
}

func bigLogRead(size int64, honourLimits bool) (bigLog, error) {
	log := benchutil.GeneratedLogOfSize(size, seedLog)
	world := fakeapi.New(staticCluster(time.Now())...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Logs: log.Server(honourLimits)})
	cluster := kube.New(view, kube.Options{Namespaces: []string{kafkaNS}})
	start := time.Now()
	in, err := cluster.Inspect(context.Background(), kafkaNS, seedBroker)
	if err != nil {
		return bigLog{}, fmt.Errorf("inspecting with a %d-byte log: %w", size, err)
	}
	took := time.Since(start)
	f := diagnose.Default().Diagnose(in.Snapshot)
	tail := cluster.Options().LogTailBytes
	return bigLog{
		tailBytes: tail, cap: 4*tail + 1, read: view.Stats().LogBytes, kept: int64(len(in.Snapshot.Log)),
		crashFound: len(f) > 0 && f[0].Rule == "metadata-log-offset-mismatch", took: took,
	}, nil
}
