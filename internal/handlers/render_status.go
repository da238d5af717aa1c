package handlers

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// renderStatus builds the /kafka status message: the Kafka pods grouped by
// namespace and cluster, each with its state.
func renderStatus(pods []diagnose.Snapshot, now time.Time) ([]slack.Block, string) {
	blocks := []slack.Block{slack.NewHeaderBlock(plain("Kafka pods"), slack.HeaderBlockOptionBlockID(blockHeader))}
	if len(pods) == 0 {
		blocks = append(blocks, section(blockSummary, "I can see no Kafka pods in the namespaces I may read."))
		return blocks, "Kafka status: no Kafka pods found"
	}
	type group struct {
		key  string
		pods []diagnose.Snapshot
	}
	byKey := map[string]*group{}
	var groups []*group
	unhealthy := 0
	for _, p := range pods {
		cluster := p.Cluster
		if cluster == "" {
			cluster = "(no cluster label)"
		}
		key := p.Namespace + " / " + cluster
		g, ok := byKey[key]
		if !ok {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.pods = append(g.pods, p)
		if !podHealthy(p) {
			unhealthy++
		}
	}
	slices.SortFunc(groups, func(a, b *group) int { return cmp.Compare(a.key, b.key) })

	// Room for the header, the summary context and a "more" note.
	budget := maxBlocks - 3
	shownPods := 0
	for _, g := range groups {
		slices.SortFunc(g.pods, func(a, b diagnose.Snapshot) int { return cmp.Compare(a.Pod, b.Pod) })
		var b strings.Builder
		b.WriteString("*" + escapeTruncate(g.key, 200) + "*\n")
		for _, p := range g.pods {
			line := "• " + podStateLine(p) + "\n"
			if runeLen(b.String())+runeLen(line) > maxSectionText {
				if budget == 0 {
					break
				}
				blocks = append(blocks, section("", strings.TrimRight(b.String(), "\n")))
				budget--
				b.Reset()
			}
			b.WriteString(line)
			shownPods++
		}
		if budget == 0 {
			break
		}
		blocks = append(blocks, section("", strings.TrimRight(b.String(), "\n")))
		budget--
	}
	summary := fmt.Sprintf("%d Kafka pod(s), %d not healthy · %s", len(pods), unhealthy, now.UTC().Format("2006-01-02 15:04:05 MST"))
	if shownPods < len(pods) {
		summary += fmt.Sprintf(" · %d pod(s) not shown", len(pods)-shownPods)
	}
	blocks = append(blocks, slack.NewContextBlock(blockContext, mrkdwn(summary)))
	return blocks, fmt.Sprintf("Kafka status: %d pod(s), %d not healthy", len(pods), unhealthy)
}

func podHealthy(p diagnose.Snapshot) bool {
	k := p.Kafka()
	return k != nil && k.Ready
}

func podStateLine(p diagnose.Snapshot) string {
	name := inlineCode(p.Pod, 120)
	k := p.Kafka()
	if k == nil {
		return fmt.Sprintf("⚪ %s — no Kafka container status (phase %s)", name, escapeTruncate(p.Phase, 40))
	}
	role := ""
	if p.Role != diagnose.RoleUnknown {
		role = " · " + escapeMrkdwn(string(p.Role))
	}
	switch {
	case k.Ready:
		return fmt.Sprintf("✅ %s — Ready%s", name, role)
	case k.WaitingReason == "CrashLoopBackOff":
		return fmt.Sprintf("🔴 %s — CrashLoopBackOff, %d restarts%s", name, k.RestartCount, role)
	default:
		return fmt.Sprintf("🟡 %s — %s, %d restarts%s", name, escapeTruncate(containerState(*k), 80), k.RestartCount, role)
	}
}
