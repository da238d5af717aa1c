//go:build !nodemo

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"k8s.io/klog/v2"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/demo"
)

const demoUsage = `usage: bot demo [--yes] [--rules FILE] [--shell auto|busybox|sh] [--metrics] [--verbose]

Plays the whole story on an in-process cluster (client-go's fake clientset and
a kubelet stand-in) and a Slack emulator, with the real bot and its health
sweep in between: a crash-looping broker, the sweep's alert in #kafka-alerts,
/kafka diagnose broker-0, the approval, each repair step, the recovered
broker, the alert resolved. No cluster, no Slack, no network.`

// runDemo is `bot demo`. It exits non-zero when the story does not end
// with the alert posted, the broker repaired and the alert resolved, so a
// test or CI can trust it.
func runDemo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	yes := fs.Bool("yes", false, "approve without waiting for Enter")
	rules := fs.String("rules", "", "YAML file of site-specific rules, added to the built-in ones (as RULES_FILE)")
	shell := fs.String("shell", string(demo.ShellAuto), "what runs the repair script: auto (busybox when on PATH, else /bin/sh), busybox or sh")
	withMetrics := fs.Bool("metrics", false, "show a /metrics excerpt at the end")
	verbose := fs.Bool("verbose", false, "print the bot's logs on stderr (default: a temporary file)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, demoUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return fmt.Errorf("%w: %v\n%s", errUsage, err, demoUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q\n%s", errUsage, fs.Arg(0), demoUsage)
	}
	engine, err := loadEngine(&config.Config{RulesFile: *rules})
	if err != nil {
		return err
	}

	opts := demo.Options{
		Out: stdout, In: stdin, Yes: *yes, Engine: engine, Shell: demo.ShellChoice(*shell),
		LogLevel: slog.LevelInfo,
	}
	if *verbose {
		opts.Log, opts.LogLevel = stderr, slog.LevelDebug
	} else {
		logFile, err := os.CreateTemp("", "kafkabot-demo-*.log")
		if err != nil {
			return fmt.Errorf("creating the demo's log file: %w", err)
		}
		defer func() {
			logFile.Close()
			fmt.Fprintf(stdout, "\nThe bot's log: %s (--verbose prints it here)\n", logFile.Name())
		}()
		opts.Log, opts.LogLevel = logFile, slog.LevelDebug
	}

	// client-go's own warnings (klog) go where the bot's logs go.
	klog.LogToStderr(false)
	klog.SetOutput(opts.Log)
	defer klog.LogToStderr(true)

	opts.Metrics = *withMetrics
	_, err = demo.Run(ctx, opts)
	return err
}
