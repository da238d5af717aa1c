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
		cluster := cmp.Or(p.KafkaCluster, "(no cluster label)")
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

// BlockRepairNotice is the block ID of /kafka status's repair notice.
const BlockRepairNotice = "repair-notice"

// Status is the /kafka status message of a bot serving one cluster: Pods,
// with notice (whether repairs can run at all; "" for none) right under
// the header.
func Status(pods []diagnose.Snapshot, now time.Time, notice string) Message {
	msg := Pods(pods, now)
	if notice != "" && len(msg.Blocks) > 0 {
		msg.Blocks = append(msg.Blocks[:1:1], append([]slack.Block{Section(BlockRepairNotice, notice)}, msg.Blocks[1:]...)...)
		msg.Fallback = notice + "\n" + msg.Fallback
	}
	return msg
}

// ClusterPods is one Kubernetes cluster's part of FleetStatus.
type ClusterPods struct {
	Name string
	// Unreachable says why the cluster was not asked or did not answer;
	// Err why its pod list failed. Pods is its answer when both are unset.
	Unreachable string
	Err         error
	Pods        []diagnose.Snapshot
	// Notice is its repair notice ("" for none).
	Notice string
}

// FleetStatus is the /kafka status message of a bot serving several
// clusters: a section per cluster. Each cluster gets an equal share of the
// message's blocks, so a long list never pushes another cluster (an
// unreachable one) out. The fallback is not cut to a length.
func FleetStatus(clusters []ClusterPods, now time.Time) Message {
	blocks := []slack.Block{Header("Kafka pods, by Kubernetes cluster")}
	budget := max((MaxBlocks-1)/len(clusters), 2)
	var fallback []string
	for _, c := range clusters {
		var section []slack.Block
		var text string
		switch {
		case c.Unreachable != "":
			text = fmt.Sprintf("⛔ *%s* cannot be reached (%s)", EscapeMrkdwn(c.Name), EscapeTruncate(c.Unreachable, 200))
			section = []slack.Block{Section("cluster-"+c.Name, text)}
		case c.Err != nil:
			text = fmt.Sprintf("⚠️ *%s*: I could not list the Kafka pods (%s)", EscapeMrkdwn(c.Name), EscapeTruncate(c.Err.Error(), 200))
			section = []slack.Block{Section("cluster-"+c.Name, text)}
		default:
			msg := Pods(c.Pods, now)
			text = fmt.Sprintf("☸️ *%s*", EscapeMrkdwn(c.Name))
			section = []slack.Block{slack.NewDividerBlock(), Section("cluster-"+c.Name, text)}
			if c.Notice != "" {
				section = append(section, Section(BlockRepairNotice+"-"+c.Name, c.Notice))
				text += "\n" + c.Notice
			}
			if len(msg.Blocks) > 1 {
				section = append(section, msg.Blocks[1:]...) // without its header
			}
			text += "\n" + msg.Fallback
		}
		if len(section) > budget {
			section = append(section[:budget-1], Section("cluster-more-"+c.Name,
				fmt.Sprintf("_… %d more sections of %s left out (Slack's limit on one message's blocks)._", len(section)-budget+1, EscapeMrkdwn(c.Name))))
		}
		blocks = append(blocks, section...)
		fallback = append(fallback, text)
	}
	return Message{Blocks: CapBlocks(blocks), Fallback: strings.Join(fallback, "\n")}
}
