// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/doctor"
	"github.com/kafka-chatops/kafkabot/internal/serve"
)

// newDoctorCmd is `bot doctor`: every check of an installation in one run.
func newDoctorCmd() *cobra.Command {
	var expectAlertmanager bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the installation (configuration, Slack, RBAC, admission policy, images) and say what to fix",
		Long: `Check the bot's installation in one run and report every problem, each with
what to do: every configuration error; the Slack tokens, the bot token's
scopes and the bot's membership of each configured channel; the bot's
permission for every Kubernetes request its code makes (SelfSubjectAccessReview);
each Kafka namespace; the admission policy (the startup self-check); the
debug-image allow-list against the images the Kafka pods run; the mounts
of the Kafka credentials Secrets the repair gates read; the Alertmanager
token. It writes nothing (the admission checks are server-side
dry runs). Exit status 0 only when nothing is wrong, 1 otherwise.

It reads the same environment as bot serve (bot serve --help lists it) and
reaches Kubernetes as the bot does (KUBECONFIG, else the pod's service
account): run it where the bot runs, as the chart's helm test does.`,
		Example: `  # in the bot's pod, or as the chart's test:
  helm test kafkabot -n kafka-bot --logs`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), cmd.OutOrStdout(), expectAlertmanager)
		},
	}
	cmd.Flags().BoolVar(&expectAlertmanager, "alertmanager-receiver", false,
		"Alertmanager is meant to post to the bot (the chart's alertmanager.enabled): a missing ALERTMANAGER_TOKEN is a problem")
	return cmd
}

// runDoctor runs the checks and prints the report on stdout.
func runDoctor(ctx context.Context, stdout io.Writer, expectAlertmanager bool) error {
	cfg, cfgErr := config.Check()
	var errs config.Errors
	if cfgErr != nil {
		errs = append(errs, unwrapAll(cfgErr)...)
	}
	var clusters []doctor.Cluster
	served, _, err := servedClusters(cfg)
	if err != nil {
		errs = append(errs, err)
	}
	for _, c := range served {
		c.Config.UserAgent = "kafkabot-doctor"
		cs, err := kubernetes.NewForConfig(c.Config)
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.Name, err))
			continue
		}
		name := c.Name
		if len(served) == 1 && cfg.ClustersFile == "" {
			name = "" // the single cluster: no need to name it on every line
		}
		clusters = append(clusters, doctor.Cluster{Name: name, Client: cs, KafkaNamespaces: c.KafkaNamespaces, ApprovalChannels: c.ApprovalChannels, Kafka: c.Kafka})
	}
	var checkErr error
	if len(errs) > 0 {
		checkErr = errs
	}
	report := doctor.Run(ctx, doctor.Options{Config: cfg, ConfigErr: checkErr, Clusters: clusters, KafkaSecretsDir: serve.KafkaSecretsDir,
		ExpectAlertmanager: expectAlertmanager})
	if err := report.Write(stdout); err != nil {
		return err
	}
	if n := report.Problems(); n > 0 {
		return fmt.Errorf("%d problem(s) found", n)
	}
	return nil
}

// unwrapAll lists the errors a joined error holds (itself when it holds none).
func unwrapAll(err error) []error {
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		return multi.Unwrap()
	}
	return []error{err}
}
