// Command bot is the Kafka ChatOps bot: a Slack Socket Mode app that
// diagnoses crash-looping Kafka brokers on Kubernetes and, on approval,
// repairs their volumes. main only wires packages together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage marks an error caused by wrong arguments (exit code 2).
var errUsage = errors.New("usage error")

// subcommand is one `bot <name>` entry point.
type subcommand struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func subcommands() map[string]subcommand {
	return map[string]subcommand{
		"serve":      {"connect to Slack (Socket Mode) and serve /kafka commands, approvals and sweeps", runServe},
		"diagnose":   {"diagnose one pod of a live cluster: bot diagnose [-n NS] POD [--output text|json]", runDiagnose},
		"explain":    {"classify a log file offline: bot explain [--output text|json] FILE|-", runExplain},
		"repair":     {"run the approved repair from a terminal: bot repair [-n NS] POD --yes", runRepair},
		"escalation": {"list or clear clusters escalated after a failed repair: bot escalation list | clear NS/CLUSTER", runEscalation},
		"demo":       {"play the whole story on an in-process cluster and Slack emulator", runDemo},
		"version":    {"print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and maps its error to an exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := subcommands()[name]
	if !ok {
		fmt.Fprintf(stderr, "bot: unknown subcommand %q\n\n", name)
		usage(stderr)
		return 2
	}
	if err := cmd.run(ctx, args, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bot %s: %v\n", name, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: bot [SUBCOMMAND] [ARGS]   (default: serve)")
	fmt.Fprintln(w)
	for _, name := range []string{"serve", "diagnose", "explain", "repair", "escalation", "demo", "version"} {
		fmt.Fprintf(w, "  %-10s %s\n", name, subcommands()[name].summary)
	}
}
