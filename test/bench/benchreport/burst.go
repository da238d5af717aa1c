// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"

	"k8s.io/apimachinery/pkg/runtime"
)

// burstSpec is an incident burst: Commands `/kafka diagnose broker-K` from
// Users people in Channels channels over Pods crash-looping brokers, sent
// evenly within Window while every Kubernetes request sleeps Delay.
type burstSpec struct {
	Commands int           `json:"commands"`
	Users    int           `json:"users"`
	Pods     int           `json:"pods"`
	Channels int           `json:"channels"`
	Window   time.Duration `json:"window_ns"`
	Delay    time.Duration `json:"delay_ns"`
}

// burstResult is what one burst measured. It is also the JSON that
// -burst-json writes, so a run of an older commit can be kept and shown
// beside the current code's.
type burstResult struct {
	Spec burstSpec `json:"spec"`
	// PerDiagnosis is the API requests of one lone `/kafka diagnose
	// broker-0` on the same cluster, measured on a fresh bot before the burst.
	PerDiagnosis int `json:"per_diagnosis"`
	// Accepted and Refused split the commands by their ack.
	Accepted int `json:"accepted"`
	Refused  int `json:"refused"`
	// RefusalText is one refusal ack's text ("" when none was refused).
	RefusalText string `json:"refusal_text,omitempty"`
	// Answered counts commands whose requester saw the diagnosis: a channel
	// message naming them and the pod, or an ephemeral message to them
	// naming the pod (a link to the message already posted). Errors counts
	// commands answered with a warning instead.
	Answered int `json:"answered"`
	Errors   int `json:"errors"`
	// Posted and Ephemeral count the answers of each kind.
	Posted    int `json:"posted"`
	Ephemeral int `json:"ephemeral"`
	// APIRequests is every Kubernetes request the bot made during the burst.
	APIRequests int            `json:"api_requests"`
	ByKind      map[string]int `json:"by_kind"`
	// P50, P99 and Max are command sent → answer seen, over answered commands.
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
	// Took is first command sent → last answer seen.
	Took time.Duration `json:"took_ns"`
	// Unanswered names the accepted commands no answer was seen for
	// ("user in channel about pod"), with what that user was shown there.
	Unanswered []string `json:"unanswered,omitempty"`
}

// The burst of issue 17 and a small one for -quick.
var (
	fullBurst  = burstSpec{Commands: 200, Users: 50, Pods: 5, Channels: 2, Window: 5 * time.Second, Delay: apiDelay}
	quickBurst = burstSpec{Commands: 40, Users: 10, Pods: 5, Channels: 2, Window: time.Second, Delay: apiDelay}
)

// burstBrokerName is the full name of broker k of the burst cluster.
func burstBrokerName(k int) string { return fmt.Sprintf("foobar-kafka-broker-%d", k) }

// burstCluster is staticCluster with pods crash-looping brokers instead of
// one: three Ready controllers, then brokers 0..pods-1, each with its bound
// claim and a BackOff event.
func burstCluster(now time.Time, pods int) []runtime.Object {
	var objs []runtime.Object
	for i := range 3 {
		c := kafkaPod(fmt.Sprintf("foobar-kafka-controller-%d", i), "controller-eligible", "controller", fmt.Sprint(i))
		c.Spec.NodeName = nodeName
		kubesim.SetReady(c, now)
		objs = append(objs, c)
	}
	for k := range pods {
		name := burstBrokerName(k)
		b := kafkaPod(name, "broker", "broker", fmt.Sprint(100+k))
		b.Spec.NodeName = nodeName
		if err := setCrashLooping(b, now); err != nil {
			panic(err) // the pod above has a kafka container
		}
		objs = append(objs, b)
		objs = append(objs, claimAndBackOff(name, b.UID, now)...)
	}
	return objs
}

// burstCommand is one command of the burst.
type burstCommand struct {
	user, channel string
	pod           int
	sent          time.Time
	acked         bool
	accepted      bool
	answered      time.Time
	errored       bool
	ephemeral     bool
	key           string // the message that answered it
}

// burstPlan spreads the commands: command i comes from user i%Users in
// that user's channel and names broker (i/Users + i)%Pods, so every user
// asks about different brokers and every broker is asked about by many.
func burstPlan(s burstSpec) []*burstCommand {
	cmds := make([]*burstCommand, s.Commands)
	for i := range cmds {
		u := i % s.Users
		cmds[i] = &burstCommand{
			user:    fmt.Sprintf("U0BURST%03d", u),
			channel: fmt.Sprintf("C0INCIDENT%d", u%s.Channels),
			pod:     (i/s.Users + i) % s.Pods,
		}
	}
	return cmds
}

// measurePerDiagnosis counts the requests of one lone `/kafka diagnose
// broker-0` on a fresh bot and cluster (no delay).
func measurePerDiagnosis(pods int) (int, error) {
	world := fakeapi.New(burstCluster(time.Now(), pods)...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Logs: benchutil.TextLogs(seedLog)})
	sb, err := startSlackBot(kube.New(view, kube.Options{Namespaces: []string{kafkaNS}}), nil)
	if err != nil {
		return 0, err
	}
	defer sb.stop()
	if _, err := sb.diagnose("U0LONE", "diagnose broker-0"); err != nil {
		return 0, err
	}
	return view.Stats().Requests, nil
}

// runBurstOnce plays the burst against the bot wired as `bot serve` wires
// it (default settings) and watches the emulator for every answer.
func runBurstOnce(s burstSpec) (burstResult, error) {
	res := burstResult{Spec: s}
	var err error
	if res.PerDiagnosis, err = measurePerDiagnosis(s.Pods); err != nil {
		return res, fmt.Errorf("measuring one diagnosis: %w", err)
	}
	world := fakeapi.New(burstCluster(time.Now(), s.Pods)...)
	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Delay: s.Delay, Logs: benchutil.TextLogs(seedLog)})
	sb, err := startSlackBot(kube.New(view, kube.Options{Namespaces: []string{kafkaNS}}), nil)
	if err != nil {
		return res, err
	}
	defer sb.stop()
	view.Reset()

	cmds := burstPlan(s)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	ctx, cancel := waitCtx()
	defer cancel()
	start := time.Now()
	gap := s.Window / time.Duration(max(s.Commands, 1))
	for i, c := range cmds {
		wg.Go(func() {
			time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
			mu.Lock()
			c.sent = time.Now()
			mu.Unlock()
			id, err := sb.emu.SendSlashCommand(ctx, slackemu.SlashCommand{ChannelID: c.channel, UserID: c.user, Command: "/kafka",
				Text: fmt.Sprintf("diagnose broker-%d", c.pod)})
			var ack slackemu.Ack
			if err == nil {
				ack, err = sb.emu.WaitAck(ctx, id)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpErr(firstErr, err)
				return
			}
			var p struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(ack.Payload, &p)
			c.acked, c.accepted = true, strings.HasPrefix(p.Text, "🔎")
			if !c.accepted {
				res.Refused++
				res.RefusalText = p.Text
			}
		})
	}
	// Watch for answers until every command is acked and, when accepted,
	// answered (or the wait limit passes).
	pending := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range cmds {
			if !c.acked || (c.accepted && c.answered.IsZero()) {
				n++
			}
		}
		return n
	}
	werr := sb.emu.WaitFor(ctx, func() bool {
		scanAnswers(sb.emu, s, cmds, &mu)
		return pending() == 0
	})
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	// A command acked after the last scan may still be pending: one more.
	scanAnswers(sb.emu, s, cmds, &mu)
	st := view.Stats()
	res.APIRequests, res.ByKind = st.Requests, st.ByKind
	var times []time.Duration
	last := start
	for _, c := range cmds {
		if c.accepted {
			res.Accepted++
		}
		if c.answered.IsZero() {
			if c.accepted {
				var shown []string
				for _, m := range sb.emu.Ephemerals(c.channel, c.user) {
					shown = append(shown, m.Text)
				}
				res.Unanswered = append(res.Unanswered, fmt.Sprintf("%s in %s about %s (shown: %q)", c.user, c.channel, burstBrokerName(c.pod), shown))
			}
			continue
		}
		if c.errored {
			res.Errors++
			continue
		}
		res.Answered++
		if c.ephemeral {
			res.Ephemeral++
		} else {
			res.Posted++
		}
		times = append(times, c.answered.Sub(c.sent))
		if c.answered.After(last) {
			last = c.answered
		}
	}
	res.P50, res.P99, res.Max = percentile(times, 50), percentile(times, 99), percentile(times, 100)
	res.Took = last.Sub(start)
	if werr != nil && res.Answered+res.Errors < res.Accepted {
		return res, fmt.Errorf("%d of %d accepted commands unanswered after %s: %w", res.Accepted-res.Answered-res.Errors, res.Accepted, waitLimit, werr)
	}
	return res, nil
}

// scanAnswers marks the commands whose answer the emulator now shows: a
// channel message naming the requester and the broker, or an ephemeral
// message to the requester naming the broker's full name (the ack names
// only what was typed, "broker-K"). Each message answers one command.
func scanAnswers(emu *slackemu.Server, s burstSpec, cmds []*burstCommand, mu *sync.Mutex) {
	now := time.Now()
	used := map[string]bool{}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range cmds {
		if !c.answered.IsZero() {
			used[c.key] = true
		}
	}
	for ch := range s.Channels {
		channel := fmt.Sprintf("C0INCIDENT%d", ch)
		msgs := emu.Messages(channel)
		for _, c := range cmds {
			if c.channel != channel || c.sent.IsZero() || !c.answered.IsZero() {
				continue
			}
			pod := burstBrokerName(c.pod)
			for _, m := range msgs {
				body := m.Text + string(m.Blocks)
				key := "m" + m.TS
				if !used[key] && strings.Contains(body, c.user) && strings.Contains(body, pod) {
					c.answered, c.errored, used[key] = now, strings.HasPrefix(m.Text, "⚠️"), true
					c.key = key
					break
				}
			}
			if !c.answered.IsZero() {
				continue
			}
			for i, m := range emu.Ephemerals(channel, c.user) {
				key := fmt.Sprintf("e%s/%d", c.user, i)
				if !used[key] && strings.Contains(m.Text, pod) {
					c.answered, c.errored, c.ephemeral, used[key] = now, strings.HasPrefix(m.Text, "⚠️"), true, true
					c.key = key
					break
				}
			}
		}
	}
}

// runBurst runs the burst and reports it beside the recorded run of the
// code before issue 17 (burstBaseline), when there is one.
func runBurst(s burstSpec, jsonOut string) (section, error) {
	res, err := runBurstOnce(s)
	if err != nil {
		return section{}, err
	}
	if jsonOut != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return section{}, err
		}
		if err := os.WriteFile(jsonOut, append(data, '\n'), 0o644); err != nil {
			return section{}, fmt.Errorf("writing %s: %w", jsonOut, err)
		}
	}
	return burstSection(res), nil
}

// baselineJSON is the burst as the code before issue 17 answered it
// (testdata/SOURCES.md says how it was recorded).
//
//go:embed testdata/burst-before-issue17.json
var baselineJSON []byte

// burstBaseline is a recorded burst run of older code.
type burstBaseline struct {
	Code     string      `json:"code"`
	Recorded string      `json:"recorded"`
	Command  string      `json:"command"`
	Result   burstResult `json:"result"`
}

// loadBaseline returns the recorded run before issue 17, if its spec is s.
func loadBaseline(s burstSpec) (burstBaseline, bool) {
	var b burstBaseline
	if err := json.Unmarshal(baselineJSON, &b); err != nil || b.Result.Spec != s {
		return burstBaseline{}, false
	}
	return b, true
}

// burstSection renders the burst's rows and details, beside the recorded
// run before issue 17 when its spec is the same.
func burstSection(res burstResult) section {
	title := "7. Incident burst"
	s := res.Spec
	label := fmt.Sprintf("%d × `/kafka diagnose`, %d users, %d pods, %s, API delay %s", s.Commands, s.Users, s.Pods, s.Window, s.Delay)
	limit := 5 * res.PerDiagnosis
	before, haveBefore := loadBaseline(s)
	rows := []row{
		{title, "refused (" + label + ")", fmt.Sprint(res.Refused), "0", verdict(res.Refused == 0)},
		{title, "requesters answered", fmt.Sprintf("%d of %d", res.Answered, s.Commands), fmt.Sprint(s.Commands), verdict(res.Answered == s.Commands)},
		{title, "API requests", fmt.Sprintf("%d (one diagnosis: %d)", res.APIRequests, res.PerDiagnosis),
			fmt.Sprintf("≤ %d (5 × %d)", limit, res.PerDiagnosis), verdict(res.APIRequests <= limit)},
		{title, "time to answer p50 / p99 / max", ms(res.P50) + " / " + ms(res.P99) + " / " + ms(res.Max), "", ""},
	}
	if haveBefore {
		b := before.Result
		rows = append(rows, row{title, "before issue 17 (recorded): refused / answered / API requests / p99",
			fmt.Sprintf("%d / %d of %d / %d / %s", b.Refused, b.Answered, s.Commands, b.APIRequests, ms(b.P99)), "", ""})
	}
	var d strings.Builder
	fmt.Fprintf(&d, "%d `/kafka diagnose broker-K` commands from %d users in %d channels about %d crash-looping brokers, sent evenly "+
		"within %s through the Slack emulator (real slack-go Socket Mode client, real WebSocket), to the bot wired as `bot serve` "+
		"wires it with its default settings, on client-go's fake clientset where every request of a diagnosis sleeps %s "+
		"(outside the fake's lock, so concurrent requests overlap as on an API server). Command i comes from user i mod %d and "+
		"names broker (i div %d + i) mod %d, so each user asks about different brokers. A requester counts as answered when the "+
		"channel shows a message naming them and the broker's full name, or they were shown an ephemeral message naming the "+
		"broker's full name (the ack names only what they typed). Time to answer is command sent → answer seen by the harness. "+
		"The first requests about a broker wait for its diagnosis (two round trips: the shared pod list, then the claim, events "+
		"and log at once); the many that come after it finished are answered from it at once (DIAGNOSIS_SHARE_WINDOW), "+
		"hence a p50 far below the p99.\n\n",
		s.Commands, s.Users, s.Channels, s.Pods, s.Window, s.Delay, s.Users, s.Users, s.Pods)
	fmt.Fprintf(&d, "| Run | Accepted | Refused | Answered | Posted / ephemeral | Errors | API requests | p50 | p99 | max | last answer |\n")
	fmt.Fprintf(&d, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	runs := []struct {
		name string
		r    burstResult
	}{{"this code", res}}
	if haveBefore {
		runs = append(runs, struct {
			name string
			r    burstResult
		}{"before issue 17 (recorded)", before.Result})
	}
	for _, run := range runs {
		r := run.r
		fmt.Fprintf(&d, "| %s | %d | %d | %d | %d / %d | %d | %d | %s | %s | %s | %s |\n", run.name, r.Accepted, r.Refused, r.Answered,
			r.Posted, r.Ephemeral, r.Errors, r.APIRequests, ms(r.P50), ms(r.P99), ms(r.Max), ms(r.Took))
	}
	fmt.Fprintf(&d, "\nRequests by kind, this code: %s.\n", breakdown(res.ByKind))
	if res.RefusalText != "" {
		fmt.Fprintf(&d, "\nA refusal said: %q\n", res.RefusalText)
	}
	for _, u := range res.Unanswered {
		fmt.Fprintf(&d, "\nNo answer seen: %s\n", u)
	}
	if haveBefore {
		fmt.Fprintf(&d, "\nThe \"before issue 17\" row is not rerun: it is the run recorded in "+
			"`test/bench/benchreport/testdata/burst-before-issue17.json` (%s; %s; `%s`). Requests by kind then: %s. Its refusals said: %q\n",
			before.Code, before.Recorded, before.Command, breakdown(before.Result.ByKind), before.Result.RefusalText)
	}
	return section{Title: title, Rows: rows, Detail: d.String()}
}
