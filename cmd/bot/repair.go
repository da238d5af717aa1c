// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// repairArgs are the parsed arguments of `bot repair`.
type repairArgs struct {
	cluster clusterFlags
	pod     string
	yes     bool
	dryRun  bool
}

// newRepairCmd is `bot repair`; action runs the parsed command (runRepair,
// or a test's recorder).
func newRepairCmd(action func(context.Context, repairArgs, io.Reader, io.Writer, io.Writer) error) *cobra.Command {
	var a repairArgs
	cmd := &cobra.Command{
		Use:   "repair POD [-n NAMESPACE] [--yes] [--dry-run]",
		Short: "Run the approved repair of one broker from a terminal",
		Long: `Diagnose one Kafka pod of the live cluster, print the repair plan of its top
finding when the bot can repair it itself, and run it after --yes (or a
typed "yes" on a terminal), with the same gates, Lease and steps as an
approval in Slack. The person at the terminal is requester and approver.

POD and the namespace are found as by bot diagnose. Without a terminal,
--yes is required. DRY_RUN=true, like --dry-run, stops before the first
write and shows what would run.`,
		Example: `  bot repair -n kafka broker-0 --dry-run
  bot repair -n kafka broker-0 --yes`,
		Args: exactArgs("POD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.pod = args[0]
			if err := a.cluster.validate(); err != nil {
				return err
			}
			if err := kube.ValidateTarget(a.cluster.namespace, a.pod); err != nil {
				return usageError{err}
			}
			return action(cmd.Context(), a, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	a.cluster.add(cmd.Flags())
	cmd.Flags().BoolVar(&a.yes, "yes", false, "run without asking")
	cmd.Flags().BoolVar(&a.dryRun, "dry-run", false, "stop before the first write and show what would run")
	return cmd
}

// runRepair is `bot repair`: diagnose one pod of the live cluster, print
// the repair plan of its automated finding, and run it after --yes (or a
// typed "yes" on a terminal), with the same gates, Lease and steps as an
// approval in Slack. The person at the terminal is requester and approver.
func runRepair(ctx context.Context, a repairArgs, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, engine, client, where, err := clusterTools("kafkabot-repair", &a.cluster)
	if err != nil {
		return err
	}

	ns, pod, err := client.FindPod(ctx, where.namespace, a.pod)
	if err != nil {
		return where.explain(err)
	}
	snap, err := client.Snapshot(ctx, ns, pod)
	if err != nil {
		return err
	}
	findings := engine.Diagnose(snap)
	finding, err := automatedFinding(ns+"/"+pod, findings)
	if err != nil {
		return err
	}
	dryRun := a.dryRun || cfg.DryRun
	printRepairPlan(stdout, snap, finding, dryRun)
	if !dryRun && !a.yes {
		if err := confirmRepair(stdin, stdout, ns+"/"+pod); err != nil {
			return err
		}
	}

	who := currentUser()
	level, _ := config.ParseLevel(cfg.LogLevel)
	logger := logging.New(stderr, cfg.LogFormat, level, logging.NewRedactor(cfg.Secrets()...))
	logging.RouteKlog(logger)
	host, _ := os.Hostname()
	repairer := recovery.NewRepairer(client, engine, recovery.RepairOptions{
		DebugImage: cfg.DebugImage, Timeout: cfg.RepairTimeout, DryRun: cfg.DryRun, AllowRootBroker: cfg.AllowRootBroker,
		Identity: "cli/" + who + "@" + host, Logger: logger,
		Gates:     recovery.GateOptions{AllowNoVisibleController: cfg.RepairWithoutVisibleController},
		RecordKey: []byte(cfg.ApprovalSecret), ClusterName: cfg.ClusterName,
		Settle: cfg.RepairSettle,
	})
	req := recovery.Request{
		ApprovalID: newApprovalID(), Namespace: ns, Pod: pod, PodUID: snap.UID,
		Rule: finding.Rule, Action: finding.Remedy.Action, Target: finding.Remedy.Target,
		Requester: who, Approver: who, DryRun: dryRun,
		ExpiresAt: time.Now(), // the typed "yes" is good for this one run
	}
	s := repairer.Repair(ctx, req, recovery.NewTextReporter(stdout, nil))
	switch s.Outcome {
	case recovery.OutcomeRepaired, recovery.OutcomeDryRun:
		return nil
	}
	return fmt.Errorf("repair of %s/%s ended %s", ns, pod, s.Outcome)
}

// automatedFinding returns the top finding when the bot can repair it
// itself, as Slack offers Approve only on the top finding: a lower finding
// is a symptom or a second opinion, and repairing it while the top one
// needs a person would act on the wrong cause.
func automatedFinding(pod string, findings []diagnose.Finding) (diagnose.Finding, error) {
	if len(findings) == 0 {
		return diagnose.Finding{}, fmt.Errorf("nothing to repair on %s: no finding (see bot diagnose)", pod)
	}
	top := findings[0]
	if top.Remedy.Automated {
		return top, nil
	}
	rules := make([]string, 0, len(findings))
	for _, f := range findings {
		rules = append(rules, f.Rule)
	}
	return diagnose.Finding{}, fmt.Errorf("no automated repair for %s: its top finding %s needs a person (findings: %s); see bot diagnose",
		pod, top.Rule, strings.Join(rules, ", "))
}

// printRepairPlan prints what the repair will do, before asking.
func printRepairPlan(w io.Writer, snap diagnose.Snapshot, f diagnose.Finding, dryRun bool) {
	fmt.Fprintf(w, "Pod:      %s/%s (UID %s, node %s, role %s, node id %s)\n", snap.Namespace, snap.Pod, snap.UID, snap.Node, orDash(string(snap.Role)), orDash(snap.NodeID))
	fmt.Fprintf(w, "Finding:  %s (%s)\n", f.Title, f.Rule)
	for _, e := range f.Evidence {
		fmt.Fprintf(w, "Evidence: %s\n", shorten(e, 200))
	}
	fmt.Fprintf(w, "Repair:   %s %s\n", f.Remedy.Action, f.Remedy.Target)
	for i, s := range f.Remedy.Steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, s)
	}
	if dryRun {
		fmt.Fprintln(w, "Dry run: the gates run and the debug pod spec is shown; nothing is changed.")
	} else {
		fmt.Fprintln(w, "The safety gates are checked again right before the first change.")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// confirmRepair asks for "yes" on an interactive terminal; anything else
// refuses. Without a terminal, --yes is required.
func confirmRepair(stdin io.Reader, stdout io.Writer, pod string) error {
	if f, ok := stdin.(*os.File); !ok || !isTerminal(f) {
		return usagef("refusing to repair %s without --yes (stdin is not a terminal)", pod)
	}
	return askYes(stdin, stdout, pod)
}

// askYes reads one answer line; only "yes" goes ahead.
func askYes(stdin io.Reader, stdout io.Writer, pod string) error {
	fmt.Fprintf(stdout, "Type yes to repair %s: ", pod)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if strings.TrimSpace(line) != "yes" {
		return fmt.Errorf("not confirmed: nothing was changed on %s", pod)
	}
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// currentUser names the person at the terminal ($USER, else the OS user).
func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// newApprovalID returns a fresh id for a terminal approval.
func newApprovalID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "cli-" + hex.EncodeToString(b)
}
