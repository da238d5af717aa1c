// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command bot is the Kafka ChatOps bot: a Slack Socket Mode app that
// diagnoses crash-looping Kafka brokers on Kubernetes and, on approval,
// repairs their volumes. main only wires packages together.
//
// The command line follows kubectl's conventions (spf13/cobra and pflag):
// `bot SUBCOMMAND --help` prints the subcommand's usage and flags and
// exits 0; a wrong flag or argument exits 2 with one line saying what is
// wrong and a pointer to --help; a failure exits 1. `bot` alone is
// `bot serve`, as the Deployment runs it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// errUsage marks an error caused by wrong arguments (exit code 2).
var errUsage = errors.New("usage error")

// usageError is a wrong flag or argument: errors.Is(err, errUsage) holds,
// and the message is printed as is, followed by a pointer to --help.
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == errUsage }

// usagef returns a usage error (exit code 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and maps its error to an exit code:
// 0 success (and --help), 2 wrong usage, 1 any other failure.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"serve"} // the Deployment runs the image without arguments
	}
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	name := "bot"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintf(stderr, "%s: %s\nSee '%s --help' for usage.\n", name, oneLineError(err), name)
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}

// oneLineError keeps a usage error to one line.
func oneLineError(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// newRootCmd builds the whole command tree on these streams.
func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "bot",
		Short: "Kafka ChatOps bot: diagnose crash-looping Kafka brokers on Kubernetes, repair on approval",
		Long: `Kafka ChatOps bot: diagnoses crash-looping Kafka brokers on Kubernetes from
Slack (/kafka diagnose) and, after an approval, repairs their volumes.

Without a subcommand, bot runs "bot serve". The subcommands that talk to a
cluster take kubectl's --kubeconfig, --context and -n/--namespace.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          rootArgs,
	}
	serve := newServeCmd()
	// `bot` alone is `bot serve` (run() maps an empty command line to it
	// so that messages say "bot serve"). A root that runs also makes cobra
	// check its arguments, so `bot NOT-A-SUBCOMMAND` is a usage error
	// rather than the help and exit 0.
	// `bot --version` (-v) prints what `bot version` prints. The flag is
	// the bot's own rather than cobra's (Version): cobra's prints another
	// line, and changing it takes a text/template (see below).
	root.Flags().BoolP("version", "v", false, "print the version (as bot version)")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if v, _ := cmd.Flags().GetBool("version"); v {
			return printVersion(cmd.OutOrStdout())
		}
		return serve.RunE(cmd, args)
	}
	// Set before the completion command is added: it keeps the writer.
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// No SetVersionTemplate (nor any other template): cobra's templates
	// use text/template, whose reflection keeps every exported method of
	// every linked type in the binary (about 20 MB more).
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(
		serve,
		newDiagnoseCmd(runDiagnose),
		newExplainCmd(),
		newRepairCmd(runRepair),
		newEscalationCmd(),
		newDoctorCmd(),
		newDemoCmd(),
		newVersionCmd(),
	)
	// Add cobra's `completion bash|zsh|fish|powershell` and `help` now
	// rather than at execution, so that their argument errors are usage
	// errors like everyone's.
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Args = helpArgs
		}
	}
	usageArgs(root)
	return root
}

// usageArgs makes every argument validator's error in the tree a usage
// error (exit 2), cobra's own (completion, help) included. A command that
// only groups subcommands (completion) refuses a missing or unknown one,
// where cobra would print its help and exit 0.
func usageArgs(c *cobra.Command) {
	if !c.Runnable() && c.HasSubCommands() {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		want := orList(names)
		c.Args = func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q: want %s", args[0], want)
			}
			return nil
		}
		c.RunE = func(*cobra.Command, []string) error { return usagef("missing command: want %s", want) }
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil && !errors.Is(err, errUsage) {
				return usageError{err}
			} else if err != nil {
				return err
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// flagError makes pflag's errors (unknown flag, missing value) usage errors.
func flagError(_ *cobra.Command, err error) error { return usageError{err} }

// rootArgs refuses `bot NOT-A-SUBCOMMAND` as a usage error, with cobra's
// spelling suggestion when there is one.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return usagef("%s", msg)
}

// helpArgs refuses `bot help TOPIC` for a TOPIC that names no command as a
// usage error (exit 2, as `bot TOPIC` would), where cobra prints "Unknown
// help topic" and the usage and exits 0. Arguments after a command that
// has no subcommands (`bot help diagnose broker-0`) are left to cobra,
// which shows that command's help.
func helpArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	found, rest, err := cmd.Root().Find(args)
	if err != nil || found == nil || len(rest) > 0 && (found == cmd.Root() || found.HasSubCommands()) {
		return usagef("unknown help topic %q", strings.Join(args, " "))
	}
	return nil
}

// exactArgs accepts exactly the positional arguments named in names
// (e.g. "POD"), as a usage error otherwise.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return usagef("missing %s", strings.Join(names[len(args):], " "))
		case len(args) > len(names):
			if len(names) == 0 {
				return usagef("unexpected argument %q", args[0])
			}
			return usagef("one %s expected, got %d: %s", strings.Join(names, " "), len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// oneOf checks a flag's value against its allowed values.
func oneOf(flag, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return usagef("--%s %q: want %s", flag, value, orList(allowed))
}

// orList renders "a, b or c".
func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// completeValues completes a flag from a fixed list.
func completeValues(values ...string) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
