// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// explainOptions are the parsed arguments of `bot explain`.
type explainOptions struct {
	file   string // path, or "-" for stdin
	output string // "text" or "json"
	role   diagnose.Role
	rules  string // optional site rules file
	check  bool   // FILE is a rules file to lint, not a log
	list   bool   // list the failure classes instead of reading a log
}

// newExplainCmd is `bot explain`.
func newExplainCmd() *cobra.Command {
	var opts explainOptions
	var role string
	cmd := &cobra.Command{
		Use:   "explain FILE|- [-o text|json] [--role broker|controller|combined] [--rules FILE] | --list",
		Short: "Classify a Kafka log file offline",
		Long: `Classify a Kafka log file offline, with the same rules as the bot: each
finding with its evidence, what it means and the remedy. FILE "-" reads
standard input. The file is streamed, never read whole; no finding is not
an error. No cluster is contacted.

With --check, FILE is a rules file (as RULES_FILE or --rules take): it is
linted, with line numbers, and the command fails on any error.

With --list, no FILE is read: every failure class the diagnosis can report
is printed with its remedy kind (automated or manual), risk and severity
(with --rules, the site's rules included).`,
		Example: `  bot explain broker-0.log
  kubectl logs -n kafka broker-0 --previous | bot explain --role broker -
  bot explain --check site-rules.yaml
  bot explain --list`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.list {
				return exactArgs()(cmd, args)
			}
			return exactArgs("FILE (use - for standard input)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.list {
				if opts.check {
					return usagef("--list and --check exclude each other")
				}
				return listClasses(opts.rules, cmd.OutOrStdout())
			}
			opts.file = args[0]
			if err := oneOf("output", opts.output, "text", "json"); err != nil {
				return err
			}
			switch r := diagnose.Role(role); r {
			case diagnose.RoleUnknown, diagnose.RoleBroker, diagnose.RoleController, diagnose.RoleCombined, diagnose.RoleZooKeeper:
				opts.role = r
			default:
				return usagef("--role %q: want broker, controller or combined", role)
			}
			return runExplain(cmd.Context(), opts, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "text", "output format: text or json")
	f.StringVar(&role, "role", "", "the node's KRaft role: broker, controller or combined (default: read it from the log, else unknown)")
	f.StringVar(&opts.rules, "rules", "", "a site rules file (YAML) to add to or override the built-in rules")
	f.BoolVar(&opts.check, "check", false, "lint FILE as a rules file (errors and warnings with line numbers) instead of classifying a log")
	f.BoolVar(&opts.list, "list", false, "list every failure class with its remedy kind, risk and severity instead of classifying a log")
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues("text", "json"))
	_ = cmd.RegisterFlagCompletionFunc("role", completeValues("broker", "controller", "combined"))
	return cmd
}

// runExplain classifies a Kafka log file offline:
//
//	bot explain [--output text|json] [--role broker|controller|combined] [--rules FILE] FILE|-
//	bot explain --check RULES_FILE
//
// The file is streamed, never read whole. No finding is not an error.
// With --check, FILE is a rules file: it is linted (see checkRules).
func runExplain(ctx context.Context, opts explainOptions, stdin io.Reader, stdout io.Writer) error {
	if opts.check {
		return checkRules(opts.file, stdin, stdout)
	}
	engine, err := explainEngine(opts.rules)
	if err != nil {
		return err
	}

	name, in := "standard input", stdin
	if opts.file != "-" {
		f, err := os.Open(opts.file)
		if err != nil {
			return fmt.Errorf("opening log file: %w", err)
		}
		defer f.Close()
		name, in = opts.file, f
	}
	counted := &countingReader{ctx: ctx, r: in}
	findings, err := engine.DiagnoseReader(counted, diagnose.Snapshot{Role: opts.role})
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if findings == nil {
		findings = []diagnose.Finding{}
	}
	if opts.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Findings []diagnose.Finding `json:"findings"`
		}{findings}); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		return nil
	}
	if err := writeExplainText(stdout, name, counted.n, opts.role, findings); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// explainEngine is the built-in engine, plus a site rules file when given.
func explainEngine(rules string) (*diagnose.Engine, error) {
	if rules == "" {
		return diagnose.Default(), nil
	}
	extra, err := diagnose.LoadRulesFile(rules)
	if err != nil {
		return nil, err
	}
	engine, err := diagnose.NewEngine(extra...)
	if err != nil {
		return nil, fmt.Errorf("site rules %s: %w", rules, err)
	}
	return engine, nil
}

// listClasses prints every failure class the engine can report, with its
// remedy kind, risk and severity: the data of docs/FAILURE-CLASSES.md.
func listClasses(rules string, stdout io.Writer) error {
	engine, err := explainEngine(rules)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tREMEDY\tRISK\tSEVERITY\tRULES")
	for _, c := range engine.Classes() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Class, c.Remedy, c.Risk, c.Severity, strings.Join(c.Rules, ","))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the class list: %w", err)
	}
	return nil
}

// errRulesInvalid is returned by checkRules when a rules file has errors.
var errRulesInvalid = errors.New("the rules file has errors")

// checkRules lints a rules file and prints one "FILE:LINE: ..." line per
// issue. Warnings alone do not fail; any error does, and the file would be
// refused by --rules and by the bot.
func checkRules(file string, stdin io.Reader, stdout io.Writer) error {
	name, in := "standard input", stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("opening rules file: %w", err)
		}
		defer f.Close()
		name, in = file, f
	}
	data, err := io.ReadAll(io.LimitReader(in, 16<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	var builtin []string
	if rules, err := diagnose.BuiltinRules(); err == nil {
		for _, r := range rules {
			builtin = append(builtin, r.ID)
		}
	}
	errs, warnings := 0, 0
	for _, issue := range diagnose.LintRules(data, builtin) {
		fmt.Fprintf(stdout, "%s:%s\n", name, issue)
		if issue.Warning {
			warnings++
		} else {
			errs++
		}
	}
	fmt.Fprintf(stdout, "%s: %d error(s), %d warning(s)\n", name, errs, warnings)
	if errs > 0 {
		return errRulesInvalid
	}
	return nil
}

// countingReader counts bytes read and stops when ctx is done (Ctrl-C on
// a slow pipe).
type countingReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// writeExplainText renders findings for a person reading a terminal.
func writeExplainText(w io.Writer, name string, bytesRead int64, role diagnose.Role, findings []diagnose.Finding) error {
	var b strings.Builder
	if len(findings) == 0 {
		fmt.Fprintf(&b, "No known failure pattern in %s (%d bytes read).\n", name, bytesRead)
		b.WriteString("Nothing here matches the knowledge base. Read the end of the log by hand, and check the pod\n")
		b.WriteString("status (kubectl describe pod: OOMKilled, probe failures), which a log file does not contain.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	plural := "s"
	if len(findings) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d finding%s in %s (%d bytes read), most likely first.\n", len(findings), plural, name, bytesRead)
	if role == diagnose.RoleUnknown {
		b.WriteString("Role not given (--role): taken from the log where it says, else unknown (no automated repair).\n")
	}
	for i, f := range findings {
		fmt.Fprintf(&b, "\n#%d  %s  %s  (confidence %.2f)\n", i+1, strings.ToUpper(string(f.Severity)), f.Rule, f.Confidence)
		fmt.Fprintf(&b, "    %s\n", f.Title)
		b.WriteString("\n    What it means:\n")
		for j, para := range strings.Split(f.Explanation, "\n\n") {
			if j > 0 {
				b.WriteByte('\n')
			}
			writeWrapped(&b, para, "      ", "", 96)
		}
		if len(f.Evidence) > 0 {
			b.WriteString("\n    Evidence:\n")
			for _, ev := range f.Evidence {
				fmt.Fprintf(&b, "      | %s\n", shorten(ev, 220))
			}
		}
		if o := f.Offsets; o != nil {
			verdict := "next == log start: controller-side problem, ESCALATE"
			if o.LocalDivergence {
				verdict = "next > log start: this node's copy diverged"
			}
			fmt.Fprintf(&b, "\n    Offsets: first %d, next %d, log start %d (%s)\n", o.FirstOffset, o.NextOffset, o.LogStartOffset, verdict)
		}
		r := f.Remedy
		if r.Automated {
			fmt.Fprintf(&b, "\n    Remedy: AUTOMATED after approval: %s on %q (risk %s)\n", r.Action, r.Target, f.Risk)
		} else {
			fmt.Fprintf(&b, "\n    Remedy: MANUAL (%s), risk %s\n", r.Action, f.Risk)
		}
		for j, step := range r.Steps {
			writeWrapped(&b, fmt.Sprintf("%d. %s", j+1, step), "      ", "   ", 96)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeWrapped writes text wrapped at width columns, every line indented
// and continuation lines indented further by hang.
func writeWrapped(b *strings.Builder, text, indent, hang string, width int) {
	col := 0
	for i, word := range strings.Fields(text) {
		switch {
		case i == 0:
			b.WriteString(indent)
			col = len(indent)
		case col+1+len(word) > width:
			b.WriteString("\n" + indent + hang)
			col = len(indent) + len(hang)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	b.WriteByte('\n')
}

// shorten cuts s to at most n bytes, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}
