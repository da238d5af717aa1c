// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// runRepair runs the seed incident's repair end to end, from the Approve
// click to `repaired`, with the kubelet stand-in acting at once (it has no
// delays), and counts the bot's API requests.
func runRepair() (section, error) {
	title := "5. Repair overhead"
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	dir, err := os.MkdirTemp("", "benchreport-repair-")
	if err != nil {
		return section{}, err
	}
	defer os.RemoveAll(dir)

	world := fakeapi.New()
	kubelet, err := kubesim.New(world, kubesim.Options{NodeName: nodeName, Namespaces: []string{kafkaNS}, WorkDir: dir, Logf: debugf})
	if err != nil {
		return section{}, err
	}
	if err := kubelet.Start(ctx); err != nil {
		return section{}, err
	}
	defer kubelet.Stop()
	if err := seedWorld(ctx, world.CoreV1().Pods(kafkaNS), kubelet, dir); err != nil {
		return section{}, err
	}

	view := benchutil.NewView(world.Tracker(), benchutil.ViewOptions{Logs: benchutil.StoreLogs(kubelet.Logs())})
	cluster := kube.New(view, kube.Options{Namespaces: []string{kafkaNS}})
	repairer := recovery.NewRepairer(cluster, diagnose.Default(), recovery.RepairOptions{
		Timeout: waitLimit, Identity: "benchreport", Logger: slog.New(slog.DiscardHandler),
	})
	sb, err := startSlackBot(cluster, func(o *handlers.Options) { o.Clusters[0].Repairer = repairer })
	if err != nil {
		return section{}, err
	}
	defer sb.stop()
	diag, err := sb.diagnose("U0ONCALL", "diagnose broker-0")
	if err != nil {
		return section{}, err
	}
	if !strings.Contains(string(diag.message.Blocks), actionApprove) {
		return section{}, fmt.Errorf("the diagnosis offers no Approve button")
	}

	view.Reset()
	// The diagnosis' details reply is already in the thread: the first
	// reply of the repair is the one after it.
	before := len(sb.emu.Thread(channel, diag.message.TS))
	start := time.Now()
	id, err := sb.emu.SendClick(ctx, slackemu.Click{ChannelID: channel, UserID: approver, MessageTS: diag.message.TS, ActionID: actionApprove})
	if err != nil {
		return section{}, err
	}
	if _, err := sb.emu.WaitAck(ctx, id); err != nil {
		return section{}, err
	}
	var first, end time.Duration
	var thread []slackemu.Message
	err = sb.emu.WaitFor(ctx, func() bool {
		thread = sb.emu.Thread(channel, diag.message.TS)
		if len(thread) > before && first == 0 {
			first = time.Since(start)
		}
		return len(thread) > 0 && strings.Contains(thread[len(thread)-1].Text, "*Repair ")
	})
	if err != nil {
		return section{}, fmt.Errorf("waiting for the repair summary: %w; thread: %s", err, threadText(thread))
	}
	end = time.Since(start)
	summary := thread[len(thread)-1].Text
	if !strings.Contains(summary, "Repair succeeded") {
		return section{}, fmt.Errorf("the repair did not succeed: %s; thread: %s", summary, threadText(thread))
	}
	st := view.Stats()
	var watches, polls int
	for k, n := range st.ByKind {
		if strings.HasPrefix(k, "watch ") {
			watches += n
		}
		if strings.HasPrefix(k, "get ") || strings.HasPrefix(k, "list ") {
			polls += n
		}
	}
	rows := []row{
		{title, "Approve → first thread message", ms(first), "", ""},
		{title, "Approve → `repaired` (summary posted)", ms(end), "", ""},
		{title, "API requests of the whole repair", fmt.Sprintf("%d (%d gets/lists, %d watches)", st.Requests, polls, watches),
			"watch-driven, no polling", verdict(watches > 0 && polls < 20)},
	}
	var d strings.Builder
	fmt.Fprintf(&d, "The seed incident on client-go's fake clientset with `internal/testkit/kubesim` (node, scheduler, StatefulSet controller, and the "+
		"debug pod's `repair.sh` run for real under busybox against a host directory laid out like the broker's volume); the "+
		"stand-in has no artificial delays, so the times are the bot's own overhead plus the script's run. The bot is "+
		"`handlers.New` with `recovery.NewRepairer`, as `bot serve` wires them. Requests are the bot's only (the stand-in's are "+
		"not counted); they include the Slack-side re-check and every gate. %d thread messages were posted.\n\n", len(thread))
	fmt.Fprintf(&d, "Requests by kind: %s.\n\n", breakdown(st.ByKind))
	fmt.Fprintln(&d, "\"No polling\" is judged from the breakdown: waits for the debug pod and for the new broker are watches, and the "+
		"number of gets and lists is a small constant (the gates and the log read), not proportional to the time waited.")
	return section{Title: title, Rows: rows, Detail: d.String()}, nil
}

func threadText(th []slackemu.Message) string {
	var out []string
	for _, m := range th {
		text := m.Text
		if blocks, err := slackemu.BlocksText(m.Blocks); err == nil && blocks != "" {
			text = blocks
		}
		out = append(out, text)
	}
	return strings.Join(out, "\n---\n")
}

// podCreator is where the seed pods are created.
type podCreator interface {
	Create(ctx context.Context, pod *corev1.Pod, opts metav1.CreateOptions) (*corev1.Pod, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error)
}

// seedWorld creates the seed incident through the kubelet stand-in: three
// Ready controllers and broker-0 crash-looping with the seed log, its
// claim backed by a broker volume under dir.
func seedWorld(ctx context.Context, pods podCreator, kubelet *kubesim.Kubelet, dir string) error {
	vol, err := newBrokerVolume(dir, seedNodeID)
	if err != nil {
		return err
	}
	if _, err := kubelet.ProvisionClaim(ctx, kafkaNS, "data-"+seedBroker, vol, "8Gi"); err != nil {
		return err
	}
	type node struct{ name, component, roles, id string }
	nodes := []node{
		{"foobar-kafka-controller-0", "controller-eligible", "controller", "0"},
		{"foobar-kafka-controller-1", "controller-eligible", "controller", "1"},
		{"foobar-kafka-controller-2", "controller-eligible", "controller", "2"},
		{seedBroker, "broker", "broker", seedNodeID},
	}
	for _, n := range nodes {
		p := kafkaPod(n.name, n.component, n.roles, n.id)
		p.UID = ""
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s: %w", n.name, err)
		}
		for {
			got, err := pods.Get(ctx, n.name, metav1.GetOptions{})
			if err == nil && got.Spec.NodeName != "" {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s was never scheduled: %w", n.name, ctx.Err())
			case <-time.After(2 * time.Millisecond):
			}
		}
		if n.component == "broker" {
			err = kubelet.CrashLoop(ctx, kafkaNS, n.name, seedLog)
		} else {
			err = kubelet.Ready(ctx, kafkaNS, n.name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
