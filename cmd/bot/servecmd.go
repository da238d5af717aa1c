// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/serve"
)

// newServeCmd is `bot serve` (also `bot` alone). It is configured by
// environment variables only, as a Deployment sets them; --help lists
// them from the same struct tags as the README's table.
func newServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Connect to Slack (Socket Mode) and serve /kafka commands, approvals and sweeps",
		Long: `Connect to Slack over Socket Mode and serve /kafka commands and approvals,
with the health sweep when ALERT_CHANNEL is set, and /healthz, /readyz and
/metrics on HTTP_ADDR. bot without a subcommand runs this.

It takes no flags: it is configured by these environment variables (the
Kubernetes connection by KUBECONFIG, else the pod's service account).
SLACK_APP_TOKEN, SLACK_BOT_TOKEN and APPROVAL_SECRET are required.

Environment variables:
` + config.TextTable(78),
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// startupLogging routes client-go's klog output into the bot's logger (one
// log stream, one format, one redaction) and logs the configuration's
// startup warnings once, one WARN line each, with those of each
// CLUSTERS_FILE cluster.
func startupLogging(log *slog.Logger, cfg *config.Config, clusters []serve.Cluster) {
	logging.RouteKlog(log)
	warnings := cfg.Warnings()
	if cfg.ClustersFile != "" {
		for _, c := range clusters {
			warnings = append(warnings, cfg.ClusterWarnings(c.Name, c.KafkaNamespaces, c.ApprovalChannels)...)
		}
	}
	for _, w := range warnings {
		log.Warn(w.Message, "setting", w.Setting)
	}
}
