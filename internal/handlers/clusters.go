// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// ClusterOptions are what the bot needs of one Kubernetes cluster it
// serves (one entry of Options.Clusters).
type ClusterOptions struct {
	// Name names the cluster in commands (`NAME/namespace/pod`), message
	// headers ("NAME/namespace/pod") and the tokens of every button;
	// unique. It may be empty only when it is the bot's one cluster.
	Name string
	// Reader reads the cluster's Kafka pods (required). For a bot serving
	// several clusters, a ResolvePod error wrapping ErrNoSuchPod means the
	// cluster answered that it has no such Kafka pod, and one wrapping
	// ErrAmbiguousPod that it has several; any other error means the
	// cluster could not be checked.
	Reader ClusterReader
	// Repairer runs this cluster's approved repairs (nil: cannot execute).
	Repairer Repairer
	// Resumer, when set, runs once in the background when Run starts, to
	// finish or clean up this cluster's repairs an earlier process left
	// running, reporting in their original threads.
	Resumer Resumer
	// RepairNotice, when set, returns the line /kafka status shows for this
	// cluster when its repairs are disabled or unguarded.
	RepairNotice func() string
	// Decisions records every click on this cluster's approvals in a
	// durable record shared by all replicas before the bot acts
	// (*kube.DecisionStore); nil means in memory: one replica only (tests;
	// bot serve always sets it).
	Decisions Decisions
	// Escalations, when set, lets approvers clear this cluster's escalation
	// records with a button posted after a repair whose broker crashed again.
	Escalations Escalations
	// Silencer and Sweeper are this cluster's health sweep, when alerts
	// are on: Silencer records the alerts' Silence buttons and answers
	// /kafka silences, Sweeper answers /kafka sweep.
	Silencer Silencer
	Sweeper  SweepTrigger
	// ApprovalChannels are channels where this cluster's repairs may be
	// approved besides Options.ApprovalChannels and the alert channel.
	ApprovalChannels []string
	// Approvers, when set, are the Slack user IDs allowed to approve this
	// cluster's repairs and clear its escalations, instead of
	// Options.Approvers (which stays the default for clusters without a
	// list of their own).
	Approvers []string
	// KafkaView, when set, reads Kafka's own view of a broker's cluster
	// for a card that offers Approve (bot serve: the repair gate's
	// BeforeMove, bounded by a short timeout); nil means no Kafka
	// bootstrap address is configured, and the card says so.
	KafkaView func(ctx context.Context, s diagnose.Snapshot) slackview.KafkaView
}

// Errors the ResolvePod of a ClusterReader of several wraps to say the
// cluster answered (see ClusterOptions.Reader).
var (
	ErrNoSuchPod    = errors.New("no such Kafka pod in this cluster")
	ErrAmbiguousPod = errors.New("several Kafka pods match in this cluster")
)

// Defaults of the multi-cluster lookups.
const (
	// DefaultLookupTimeout bounds each cluster's part of /kafka status and
	// of a short-name search over several clusters.
	DefaultLookupTimeout = 10 * time.Second
)

// member is one served cluster, as the bot uses it.
type member struct {
	ClusterOptions
	decisions        Decisions
	approvalChannels map[string]bool
	// approvers are the users who may approve this cluster's repairs: its
	// own list, else Options.Approvers (approverIDs in order, for messages).
	approvers   map[string]bool
	approverIDs []string
}

// isApprover reports whether user may approve this cluster's repairs now.
func (m *member) isApprover(user string) bool { return m.approvers[user] }

// approverList is for messages: this cluster's approvers as mentions.
func (m *member) approverList() string { return slackview.ApproverList(m.approverIDs) }

// setupClusters builds b.clusters from opts.Clusters and checks them.
func (b *Bot) setupClusters(opts *Options) error {
	var list []*member
	for i, c := range opts.Clusters {
		if c.Reader == nil {
			return fmt.Errorf("handlers: cluster %d (%s) has no Reader", i, c.Name)
		}
		m := &member{ClusterOptions: c, decisions: c.Decisions, approvalChannels: map[string]bool{}, approvers: map[string]bool{},
			approverIDs: opts.Approvers}
		if len(c.Approvers) > 0 {
			m.approverIDs = c.Approvers
		}
		for _, a := range m.approverIDs {
			m.approvers[a] = true
		}
		if opts.RequiredApprovals > 1 && opts.RequiredApprovals > len(m.approvers) {
			return fmt.Errorf("handlers: %d approvals required but only %d approvers (cluster %q)", opts.RequiredApprovals, len(m.approvers), c.Name)
		}
		if m.decisions == nil {
			m.decisions = newMemoryDecisions()
		}
		for _, ch := range opts.ApprovalChannels {
			m.approvalChannels[ch] = true
		}
		for _, ch := range c.ApprovalChannels {
			m.approvalChannels[ch] = true
		}
		if opts.Alerts != nil && opts.Alerts.Channel() != "" {
			m.approvalChannels[opts.Alerts.Channel()] = true
		}
		list = append(list, m)
	}
	clusters, err := fleet.NewMembers(list, func(m *member) string { return m.Name }, opts.LookupTimeout, opts.BreakerPeriod, opts.Clock, shortReason)
	if err != nil {
		return fmt.Errorf("handlers: %w", err)
	}
	b.clusters = clusters
	return nil
}

// multi reports whether the bot serves several clusters.
func (b *Bot) multi() bool { return b.clusters.Several() }

// inCluster prefixes path ("namespace" or "namespace/pod") with m's
// cluster on a bot serving several ("prod-eu/kafka"), so a message never
// leaves the cluster unsaid; with one cluster, or no m, it is path.
func (b *Bot) inCluster(m *member, path string) string {
	if !b.multi() || m == nil {
		return path
	}
	return m.Name + "/" + path
}

// grantCluster is the cluster a silence, end-silence or clear-escalation
// token names: m's on a multi-cluster bot, none on a single-cluster one
// (which maps "none" to its only cluster), so that a single cluster's
// Silence menu keeps its room in Slack's 255-character action_id.
func (b *Bot) grantCluster(m *member) string {
	if !b.multi() {
		return ""
	}
	return m.Name
}

// clusterNames lists the served clusters' names, for messages.
func (b *Bot) clusterNames() string {
	names := make([]string, len(b.clusters.All()))
	for i, m := range b.clusters.All() {
		names[i] = "`" + m.Name + "`"
	}
	return strings.Join(names, ", ")
}

// shortReason is an error's first line, shortened, for "cannot be reached (…)".
func shortReason(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return slackview.Truncate(s, 160)
}

// commandCluster returns the cluster a command names explicitly (its
// Cluster, or a Scope that is a cluster name) and the namespace it names,
// or nil when it names none (a search over every cluster). A Scope that is
// both a cluster name and a namespace is taken as the cluster.
func (b *Bot) commandCluster(cmd command.Command) (*member, string, error) {
	if cmd.KubeCluster != "" {
		m, ok := b.clusters.Exact(cmd.KubeCluster)
		if !ok {
			return nil, "", command.Usagef("I serve no cluster named %s; clusters: %s", command.Quote(cmd.KubeCluster), b.clusterNames())
		}
		return m, cmd.Namespace, nil
	}
	if cmd.Scope != "" {
		if m, ok := b.clusters.Exact(cmd.Scope); ok {
			return m, cmd.Namespace, nil
		}
		if cmd.Namespace != "" {
			return nil, "", command.Usagef("the namespace is given twice")
		}
		return nil, cmd.Scope, nil
	}
	return nil, cmd.Namespace, nil
}
