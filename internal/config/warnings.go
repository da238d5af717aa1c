// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"net"
	"net/url"
)

// Warning is a setting that is valid but switches a feature off or
// weakens a safeguard, with what that means.
type Warning struct {
	// Setting names the environment variable(s) concerned.
	Setting string
	// Message says what the value does, in one line.
	Message string
}

// Warnings lists what `bot serve` should say once at startup about c: the
// settings that are accepted but silently disable a feature (nobody can
// approve, no alerts), or weaken a safeguard the defaults keep. An empty
// list means the defaults' behaviour everywhere. With CLUSTERS_FILE, the
// warnings about each cluster's scope come from ClusterWarnings.
func (c *Config) Warnings() []Warning {
	var w []Warning
	add := func(setting, msg string) { w = append(w, Warning{Setting: setting, Message: msg}) }
	if len(c.Approvers) == 0 {
		add("APPROVERS", "APPROVERS is empty: nobody can approve a repair; diagnoses still work")
	}
	if c.AlertChannel == "" {
		add("ALERT_CHANNEL", "ALERT_CHANNEL is empty: no health sweeps and no crash-loop alerts; only /kafka commands are served")
	}
	if c.ClustersFile == "" {
		w = append(w, c.ClusterWarnings("", nil, nil)...)
	}
	if c.DryRun {
		add("DRY_RUN", "DRY_RUN=true: approved repairs stop before the first write; no broker is repaired")
	}
	if !c.ForbidSelfApproval {
		add("FORBID_SELF_APPROVAL", "FORBID_SELF_APPROVAL=false: the person who asked for a diagnosis may approve its repair alone")
	}
	if c.RepairWithoutVisibleController {
		add("REPAIR_WITHOUT_VISIBLE_CONTROLLER", "REPAIR_WITHOUT_VISIBLE_CONTROLLER=true: a repair proceeds when no controller of the broker's cluster is visible, so the quorum gate cannot refuse it")
	}
	if c.AcceptNoPolicy {
		add("ACKNOWLEDGE_NO_ADMISSION_POLICY", "ACKNOWLEDGE_NO_ADMISSION_POLICY=true: repairs run even where the admission policy that limits the bot's writes is not enforced")
	}
	if c.RepairSettle == 0 {
		add("REPAIR_SETTLE", "REPAIR_SETTLE=0: a repair is called a success at the broker's first Ready; a crash right after it is not caught")
	}
	if c.AlertChannel != "" && !c.LeaderElection {
		add("LEADER_ELECTION", "LEADER_ELECTION=false: every replica sweeps and alerts; with more than one replica each alert is posted more than once")
	}
	if u, err := url.Parse(c.SlackAPIURL); err == nil && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		add("SLACK_API_URL", "SLACK_API_URL uses plain http to a host that is not loopback: the Slack tokens cross the network unencrypted")
	}
	return w
}

// ClusterWarnings are the warnings about one served cluster's scope: its
// Kafka namespaces (kafkaNamespaces, else KAFKA_NAMESPACES) and where an
// Approve for it counts (APPROVAL_CHANNELS, approvalChannels and
// ALERT_CHANNEL). cluster is its CLUSTERS_FILE name; "" is the single
// cluster of KUBECONFIG (Warnings includes it then).
func (c *Config) ClusterWarnings(cluster string, kafkaNamespaces, approvalChannels []string) []Warning {
	var w []Warning
	nsSetting, chSetting, prefix := "KAFKA_NAMESPACES", "APPROVAL_CHANNELS", ""
	if cluster != "" {
		nsSetting, chSetting, prefix = "CLUSTERS_FILE", "CLUSTERS_FILE", "cluster "+cluster+": "
	}
	if len(kafkaNamespaces) == 0 && len(c.KafkaNamespaces) == 0 {
		msg := "KAFKA_NAMESPACES is empty"
		if cluster != "" {
			msg = "no kafkaNamespaces in CLUSTERS_FILE and KAFKA_NAMESPACES is empty"
		}
		w = append(w, Warning{Setting: nsSetting, Message: prefix + msg + ": the bot reads and repairs Kafka pods in every namespace, which needs cluster-wide RBAC (the shipped Roles grant only the listed namespaces, so reads may be forbidden)"})
	}
	if c.AlertChannel == "" && len(c.ApprovalChannels) == 0 && len(approvalChannels) == 0 {
		msg := "APPROVAL_CHANNELS and ALERT_CHANNEL are empty"
		if cluster != "" {
			msg = "no approvalChannels in CLUSTERS_FILE, and APPROVAL_CHANNELS and ALERT_CHANNEL are empty"
		}
		w = append(w, Warning{Setting: chSetting, Message: prefix + msg + ": an Approve click counts in no channel, so every repair approval is refused"})
	}
	return w
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
