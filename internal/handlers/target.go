// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// target is the pod a diagnose command resolved to, in its cluster.
type target struct {
	m      *member
	status diagnose.Snapshot
	read   func(context.Context) (diagnose.Snapshot, error)
	// unchecked lists the clusters a short-name search could not check
	// (name and reason), told to the requester beside the answer.
	unchecked []string
}

// lookup is what a cluster answered about a pod name.
type lookup struct {
	status diagnose.Snapshot
	read   func(context.Context) (diagnose.Snapshot, error)
}

// answeredLookup reports whether a ResolvePod error still means the cluster
// answered (no such pod, or several).
func answeredLookup(err error) bool {
	return errors.Is(err, ErrNoSuchPod) || errors.Is(err, ErrAmbiguousPod)
}

// resolveTarget finds the pod cmd names. A command naming its cluster
// (`CLUSTER/NAMESPACE/POD`, or `CLUSTER/POD` when the first segment is a
// cluster's name) asks that cluster only and never waits on another. A
// bot serving one cluster asks it within the command's own time (see
// asking). Otherwise every reachable
// cluster is asked at once, each within LookupTimeout: one match is the
// target; several get a reply listing each as cluster/namespace/pod, with
// no buttons (never a guess); none says so and names the clusters that
// could not be checked. It returns false when it has answered s itself.
func (b *Bot) resolveTarget(ctx context.Context, s slashRequest, cmd command.Command) (target, bool) {
	m, ns, err := b.commandCluster(cmd)
	if err != nil {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.Problem(err.Error()))
		return target{}, false
	}
	if m == nil && !b.multi() {
		m = b.clusters.All()[0]
	}
	if m != nil {
		find := func(ctx context.Context) (lookup, error) {
			status, read, err := m.Reader.ResolvePod(ctx, ns, cmd.Pod)
			return lookup{status, read}, err
		}
		// The name lookup (one pod list) is bounded like a search's, and its
		// verdict goes to the cluster's breaker, so a cluster that hangs
		// answers its own commands within LookupTimeout too; reading the
		// pod then has the command's time.
		found := fleet.AskOne(ctx, b.clusters, m.Name, find, answeredLookup)
		if err := found.Err; err != nil {
			switch {
			case !b.multi(), ctx.Err() != nil: // the command itself ended: not the cluster's fault
			case found.Unreachable == "": // it answered: no such pod, or several
				err = fmt.Errorf("cluster %s: %w", m.Name, err)
			default:
				err = fmt.Errorf("cluster %s cannot be reached (%w)", m.Name, err)
			}
			b.log.Info("pod lookup failed", "audit", true, "user", s.User, "channel", s.Channel, "cluster", m.Name,
				"namespace", ns, "pod", cmd.Pod, "error", err)
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.Problem(slackview.EscapeTruncate(err.Error(), 1500)))
			return target{}, false
		}
		return target{m: m, status: found.Val.status, read: found.Val.read}, true
	}

	results := fleet.AskEach(ctx, b.clusters, func(ctx context.Context, m *member) (lookup, error) {
		status, read, err := m.Reader.ResolvePod(ctx, ns, cmd.Pod)
		return lookup{status, read}, err
	}, answeredLookup)
	var matches, ambiguous, unchecked, checked []string
	var hit *fleet.Answer[*member, lookup]
	for i := range results {
		r := &results[i]
		switch {
		case r.Unreachable != "":
			unchecked = append(unchecked, fmt.Sprintf("`%s` (%s)", r.Member.Name, r.Unreachable))
		case r.Err == nil:
			hit = r
			checked = append(checked, "`"+r.Member.Name+"`")
			matches = append(matches, r.Member.Name+"/"+r.Val.status.Namespace+"/"+r.Val.status.Pod)
		case errors.Is(r.Err, ErrAmbiguousPod):
			checked = append(checked, "`"+r.Member.Name+"`")
			ambiguous = append(ambiguous, fmt.Sprintf("in `%s`: %s", r.Member.Name, slackview.EscapeTruncate(r.Err.Error(), 600)))
		default: // no such pod there
			checked = append(checked, "`"+r.Member.Name+"`")
		}
	}
	what := cmd.Pod
	if ns != "" {
		what = ns + "/" + cmd.Pod
	}
	uncheckedNote := slackview.Unchecked(unchecked)
	switch {
	case len(matches) == 1 && len(ambiguous) == 0:
		return target{m: hit.Member, status: hit.Val.status, read: hit.Val.read, unchecked: unchecked}, true
	case len(matches)+len(ambiguous) > 0:
		slices.Sort(matches)
		var lines []string
		for _, mt := range matches {
			lines = append(lines, "• `"+mt+"`")
		}
		for _, a := range ambiguous {
			lines = append(lines, "• "+a)
		}
		b.log.Info("pod name matches in several clusters", "audit", true, "user", s.User, "channel", s.Channel,
			"pod", cmd.Pod, "namespace", ns, "matches", strings.Join(matches, ","), "ambiguous_in", len(ambiguous))
		b.tell(ctx, s.Channel, s.User, s.ResponseURL,
			slackview.ManyMatches(what, firstOr(matches, "CLUSTER/NAMESPACE/POD"), lines, uncheckedNote))
		return target{}, false
	}
	b.log.Info("pod lookup failed", "audit", true, "user", s.User, "channel", s.Channel, "namespace", ns, "pod", cmd.Pod,
		"error", "not found in any cluster", "unchecked", len(unchecked))
	b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.NoMatch(what, checked, uncheckedNote))
	return target{}, false
}

func firstOr(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}
