// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

const escalationLong = `A cluster is escalated after a repair whose broker crashed again: the bot
runs no automated repair of its brokers until a person clears the record.
CLUSTER is the cluster label (strimzi.io/cluster, app.kubernetes.io/instance,
or the Confluent app label); NAMESPACE/* names a namespace's Kafka pods that
have none.`

// newEscalationCmd is `bot escalation list|clear`. The cluster flags are
// shared by both verbs.
func newEscalationCmd() *cobra.Command {
	var flags clusterFlags
	cmd := &cobra.Command{
		Use:   "escalation list | clear NAMESPACE/CLUSTER [--yes]",
		Short: "List or clear clusters escalated after a failed repair",
		Long:  escalationLong,
		Example: `  bot escalation list
  bot escalation list -n kafka
  bot escalation clear kafka/foobar
  bot escalation clear foobar -n kafka --yes`,
		// A verb that is not list or clear lands here as an argument.
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown verb %q: want list or clear", args[0])
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			return usagef("missing list or clear")
		},
	}
	flags.add(cmd.PersistentFlags())

	list := &cobra.Command{
		Use:   "list [-n NAMESPACE | -A]",
		Short: "List the escalated clusters",
		Long: escalationLong + `

Without -n it lists the kubeconfig context's namespace when the context
names one, else every namespace in KAFKA_NAMESPACES (every one the
credentials may read when that is empty); -A always lists everywhere.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := flags.validate(); err != nil {
				return err
			}
			_, _, client, where, err := clusterTools("kafkabot-escalation", &flags)
			if err != nil {
				return err
			}
			return listEscalations(cmd.Context(), client, where.namespace, cmd.OutOrStdout())
		},
	}

	var yes bool
	clear := &cobra.Command{
		Use:   "clear NAMESPACE/CLUSTER [--yes]",
		Short: "Allow automated repairs of an escalated cluster again",
		Long: escalationLong + `

The record is shown, then removed after a typed "yes" (or --yes). CLUSTER
alone takes its namespace from -n, else from the kubeconfig context.`,
		Args: exactArgs("NAMESPACE/CLUSTER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flags.validate(); err != nil {
				return err
			}
			arg := args[0]
			if !strings.Contains(arg, "/") && flags.namespace != "" {
				arg = flags.namespace + "/" + arg
			}
			if strings.Contains(arg, "/") {
				if _, err := kube.ParseKafkaClusterKey(arg); err != nil {
					return usageError{err}
				}
			}
			_, _, client, where, err := clusterTools("kafkabot-escalation", &flags)
			if err != nil {
				return err
			}
			if !strings.Contains(arg, "/") {
				if where.namespace == "" {
					return usagef("cluster %q: name its namespace (NAMESPACE/CLUSTER or -n NAMESPACE)", arg)
				}
				arg = where.namespace + "/" + arg
			}
			key, err := kube.ParseKafkaClusterKey(arg)
			if err != nil {
				return usageError{err}
			}
			return clearEscalation(cmd.Context(), client, key, yes, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	clear.Flags().BoolVar(&yes, "yes", false, "clear without asking")
	cmd.AddCommand(list, clear)
	return cmd
}

// listEscalations prints the escalation records of namespace, or of
// every namespace in KAFKA_NAMESPACES (every one the bot may read when
// that is empty) when namespace is "".
func listEscalations(ctx context.Context, client *kube.Client, namespace string, stdout io.Writer) error {
	namespaces := client.Options().Namespaces
	switch {
	case namespace != "":
		if !client.NamespaceAllowed(namespace) {
			return fmt.Errorf("%w: %s is not in KAFKA_NAMESPACES", kube.ErrNamespaceNotAllowed, namespace)
		}
		namespaces = []string{namespace}
	case len(namespaces) == 0:
		namespaces = []string{""}
	}
	var all []kube.Escalation
	for _, ns := range namespaces {
		list, err := client.Escalations(ctx, ns)
		if err != nil {
			return err
		}
		all = append(all, list...)
	}
	if len(all) == 0 {
		fmt.Fprintln(stdout, "No cluster is escalated: automated repairs are allowed everywhere the gates allow them.")
		return nil
	}
	slices.SortFunc(all, func(a, b kube.Escalation) int { return a.At.Compare(b.At) })
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSINCE\tPOD\tAPPROVAL\tREASON")
	for _, e := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Key, e.At.UTC().Format(time.RFC3339), orDashCLI(e.Pod), orDashCLI(e.ApprovalID), oneLine(e.Reason, 120))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nClear one, once its cause is understood: bot escalation clear NAMESPACE/CLUSTER")
	return nil
}

// clearEscalation shows the record and removes it, after "yes" on a
// terminal unless yes is set.
func clearEscalation(ctx context.Context, client *kube.Client, key kube.KafkaClusterKey, yes bool, stdin io.Reader, stdout io.Writer) error {
	e, found, err := client.GetEscalation(ctx, key)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("cluster %s is not escalated (bot escalation list shows the records)", key)
	}
	fmt.Fprintf(stdout, "Cluster %s is escalated since %s, after the repair of %s (approval %s):\n  %s\n",
		e.Key, e.At.UTC().Format(time.RFC3339), orDashCLI(e.Pod), orDashCLI(e.ApprovalID), e.Reason)
	if !yes {
		if err := confirmClear(stdin, stdout, key.String()); err != nil {
			return err
		}
	}
	// The record shown is the one removed: a newer one is left alone.
	if _, err := client.ClearEscalation(ctx, key, e.UID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Cleared: the bot offers automated repairs of %s again.\n", key)
	return nil
}

func confirmClear(stdin io.Reader, stdout io.Writer, key string) error {
	fmt.Fprintf(stdout, "Type yes to allow automated repairs of %s again: ", key)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if strings.TrimSpace(line) != "yes" {
		return fmt.Errorf("not confirmed: %s stays escalated", key)
	}
	return nil
}

func orDashCLI(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
