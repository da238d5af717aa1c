// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Pods is the /kafka status message: the Kafka pods grouped by namespace
// and Kafka cluster, each with its state.
func Pods(pods []diagnose.Snapshot, now time.Time) Message {
	blocks := []slack.Block{Header("Kafka pods")}
	if len(pods) == 0 {
		blocks = append(blocks, Section(BlockSummary, "I can see no Kafka pods in the namespaces I may read."))
		return Message{Blocks: blocks, Fallback: "Kafka status: no Kafka pods found"}
	}
	type group struct {
		key  string
		pods []diagnose.Snapshot
	}
	byKey := map[string]*group{}
	var groups []*group
	unhealthy := 0
	for _, p := range pods {
		cluster := cmp.Or(p.Cluster, "(no cluster label)")
		key := p.Namespace + " / " + cluster
		g, ok := byKey[key]
		if !ok {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.pods = append(g.pods, p)
		if !PodReady(p) {
			unhealthy++
		}
	}
	slices.SortFunc(groups, func(a, b *group) int { return cmp.Compare(a.key, b.key) })

	// Room for the header, the summary context and a "more" note.
	budget := MaxBlocks - 3
	shownPods := 0
	for _, g := range groups {
		slices.SortFunc(g.pods, func(a, b diagnose.Snapshot) int { return cmp.Compare(a.Pod, b.Pod) })
		var b strings.Builder
		b.WriteString("*" + EscapeTruncate(g.key, 200) + "*\n")
		for _, p := range g.pods {
			line := "• " + podStateLine(p) + "\n"
			if RuneLen(b.String())+RuneLen(line) > MaxSectionText {
				if budget == 0 {
					break
				}
				blocks = append(blocks, Section("", strings.TrimRight(b.String(), "\n")))
				budget--
				b.Reset()
			}
			b.WriteString(line)
			shownPods++
		}
		if budget == 0 {
			break
		}
		blocks = append(blocks, Section("", strings.TrimRight(b.String(), "\n")))
		budget--
	}
	summary := fmt.Sprintf("%d Kafka pod(s), %d not healthy · %s", len(pods), unhealthy, Date(now, DateTime))
	if shownPods < len(pods) {
		summary += fmt.Sprintf(" · %d pod(s) not shown", len(pods)-shownPods)
	}
	blocks = append(blocks, Context(BlockContext, summary))
	return Message{Blocks: blocks, Fallback: fmt.Sprintf("Kafka status: %d pod(s), %d not healthy", len(pods), unhealthy)}
}

func podStateLine(p diagnose.Snapshot) string {
	name := InlineCode(p.Pod, 120)
	icon := PodLevel(p).Icon()
	k := p.Kafka()
	if k == nil {
		return fmt.Sprintf("%s %s — no Kafka container status (phase %s)", icon, name, EscapeTruncate(p.Phase, 40))
	}
	role := ""
	if p.Role != diagnose.RoleUnknown {
		role = " · " + EscapeMrkdwn(string(p.Role))
	}
	if k.Ready {
		return fmt.Sprintf("%s %s — Ready%s", icon, name, role)
	}
	return fmt.Sprintf("%s %s — %s, %d restarts%s", icon, name, EscapeTruncate(ContainerState(*k), 80), k.RestartCount, role)
}
