// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
)

// apiDelay is the latency injected into every Kubernetes request of a
// diagnosis in the ack scenario.
const apiDelay = 300 * time.Millisecond

// ackTarget: the ack must not wait for Kubernetes (p99 ack / API delay).
const ackTarget = 0.05

// summaryTarget: a diagnosis costs two round trips (the pod list, then the
// claims, events and log at once), plus the bot's own work (p50 summary /
// API delay).
const summaryTarget = 2.3

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// runAck sends n `/kafka diagnose broker-0` commands through the emulator,
// in waves of `workers` at once (the bot's worker pool), while every
// Kubernetes request of the diagnosis sleeps apiDelay.
func runAck(n, workers int) (section, error) {
	world := fakeapi.New(staticCluster(time.Now())...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Delay: apiDelay, Logs: benchutil.TextLogs(seedLog)})
	cluster := kube.New(view, kube.Options{Namespaces: []string{kafkaNS}})
	// Every command is a diagnosis of its own: no sharing of finished
	// diagnoses, and each wave starts after the pod list of the previous
	// one has expired (kube.ResolveListTTL), so that each wave pays both
	// round trips. Scenario 7 measures what sharing saves.
	sb, err := startSlackBot(cluster, func(o *handlers.Options) { o.Workers, o.ShareWindow = workers, -1 })
	if err != nil {
		return section{}, err
	}
	defer sb.stop()

	var (
		mu        sync.Mutex
		acks, sum []time.Duration
		busy      int
		firstErr  error
	)
	for sent := 0; sent < n; sent += workers {
		waveStart := time.Now()
		var wg sync.WaitGroup
		for i := sent; i < min(sent+workers, n); i++ {
			wg.Go(func() {
				c, retries, err := sb.diagnoseRetry(fmt.Sprintf("U0ACK%05d", i), "diagnose broker-0")
				mu.Lock()
				defer mu.Unlock()
				busy += retries
				if err != nil {
					firstErr = cmpErr(firstErr, err)
					return
				}
				acks = append(acks, c.ack)
				sum = append(sum, c.summary)
			})
		}
		wg.Wait()
		if firstErr != nil {
			return section{}, firstErr
		}
		if sent+workers < n {
			time.Sleep(time.Until(waveStart.Add(kube.ResolveListTTL + 50*time.Millisecond)))
		}
	}
	st := view.Stats()
	p50, p99 := percentile(acks, 50), percentile(acks, 99)
	ratio := p99.Seconds() / apiDelay.Seconds()
	sum50 := percentile(sum, 50)
	sumRatio := sum50.Seconds() / apiDelay.Seconds()
	title := "1. Ack latency"
	rows := []row{
		{title, fmt.Sprintf("ack p50 / p99 (%d commands, API delay %s)", n, apiDelay), ms(p50) + " / " + ms(p99), "", ""},
		{title, "ack p99 ÷ API delay", fmt.Sprintf("%.4f", ratio), fmt.Sprintf("< %.2f", ackTarget), verdict(ratio < ackTarget)},
		{title, "time to posted summary p50 / p99", ms(sum50) + " / " + ms(percentile(sum, 99)), "", ""},
		{title, "summary p50 ÷ API delay (before issue 17: 1217.5 ms, 4.06)", fmt.Sprintf("%.2f", sumRatio),
			fmt.Sprintf("≤ %.1f", summaryTarget), verdict(sumRatio <= summaryTarget)},
	}
	var d strings.Builder
	fmt.Fprintf(&d, "The real slack-go Socket Mode client over a real WebSocket to `internal/testkit/slackemu`; the bot is `handlers.New` "+
		"with a `*kube.Client` on client-go's fake clientset, wired as `bot serve` wires it (%d workers), except that finished "+
		"diagnoses are not shared (DIAGNOSIS_SHARE_WINDOW=0), so that every command is a diagnosis of its own. "+
		"Every request of the diagnosis (pods, events, claims, log stream) sleeps %s before the fake answers, outside the fake's "+
		"global lock so concurrent requests overlap as on a real API server: %d of the %d requests the bot made were delayed. "+
		"Commands go in waves of %d, a wave starting once the previous wave's shared pod list has expired (kube.ResolveListTTL, %s), "+
		"so every wave pays for its own pod list. "+
		"Ack latency is the emulator's: envelope written to the socket → ack read. Summary time is command sent → diagnosis posted "+
		"in the channel: the pod list, then the claim, events and log read at once (%s each, two round trips; the %d requests are one pod "+
		"list per wave, shared by its %d commands, and three reads per command). "+
		"The \"before issue 17\" figure is this scenario's p50 in the report generated on 2026-11-29 (docs/BENCHMARKS.md at commit d0c59b3), "+
		"when the four requests ran one after another. %d commands were refused and sent again.\n",
		workers, apiDelay, st.Delayed, st.Requests, workers, kube.ResolveListTTL, apiDelay, st.Requests, workers, busy)
	return section{Title: title, Rows: rows, Detail: d.String()}, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
