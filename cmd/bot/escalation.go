package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

const escalationUsage = `usage: bot escalation list
       bot escalation clear NAMESPACE/CLUSTER [--yes]

A cluster is escalated after a repair whose broker crashed again: the bot
runs no automated repair of its brokers until a person clears the record.
CLUSTER is the cluster label (strimzi.io/cluster, app.kubernetes.io/instance,
or the Confluent app label); NAMESPACE/* names a namespace's Kafka pods that
have none.`

// runEscalation is `bot escalation list|clear`.
func runEscalation(ctx context.Context, args []string, stdin io.Reader, stdout, _ io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		if len(args) == 0 {
			return fmt.Errorf("%w: missing list or clear\n%s", errUsage, escalationUsage)
		}
		fmt.Fprintln(stdout, escalationUsage)
		return nil
	}
	verb, rest := args[0], args[1:]
	switch verb {
	case "list":
		if len(rest) > 0 {
			return fmt.Errorf("%w: list takes no arguments\n%s", errUsage, escalationUsage)
		}
		_, _, client, err := clusterTools("kafkabot-escalation")
		if err != nil {
			return err
		}
		return listEscalations(ctx, client, stdout)
	case "clear":
		fs := flag.NewFlagSet("escalation clear", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		yes := fs.Bool("yes", false, "clear without asking")
		arg, err := parseOneArg(fs, rest, "NAMESPACE/CLUSTER")
		if err != nil {
			return fmt.Errorf("%w: %v\n%s", errUsage, err, escalationUsage)
		}
		key, err := kube.ParseClusterKey(arg)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		_, _, client, err := clusterTools("kafkabot-escalation")
		if err != nil {
			return err
		}
		return clearEscalation(ctx, client, key, *yes, stdin, stdout)
	}
	return fmt.Errorf("%w: unknown verb %q\n%s", errUsage, verb, escalationUsage)
}

// listEscalations prints every escalation record in KAFKA_NAMESPACES (or
// every namespace the bot may read).
func listEscalations(ctx context.Context, client *kube.Client, stdout io.Writer) error {
	namespaces := client.Options().Namespaces
	if len(namespaces) == 0 {
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
func clearEscalation(ctx context.Context, client *kube.Client, key kube.ClusterKey, yes bool, stdin io.Reader, stdout io.Writer) error {
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
