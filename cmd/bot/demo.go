// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build !nodemo

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/serve"
	// The one product import of the test and demo kit (internal/testkit's
	// TestProductDoesNotImportTheKit allows this file only); the shipped
	// build (-tags nodemo) leaves this file out.
	"github.com/kafka-chatops/kafkabot/internal/testkit/demo"
)

const demoLong = `Plays the whole story on an in-process cluster (client-go's fake clientset and
a kubelet stand-in) and a Slack emulator, with the real bot and its health
sweep in between: a crash-looping broker, the sweep's alert in #kafka-alerts,
/kafka diagnose broker-0, the approval, each repair step, the recovered
broker, the alert resolved. No cluster, no Slack, no network.

It exits non-zero when the story does not end with the alert posted, the
broker repaired and the alert resolved.`

// demoArgs are the parsed flags of `bot demo`.
type demoArgs struct {
	yes, withMetrics, verbose bool
	rules, shell              string
}

// newDemoCmd is `bot demo`.
func newDemoCmd() *cobra.Command {
	var a demoArgs
	cmd := &cobra.Command{
		Use:   "demo [--yes] [--rules FILE] [--shell auto|busybox|sh] [--metrics] [--verbose]",
		Short: "Play the whole story on an in-process cluster and Slack emulator",
		Long:  demoLong,
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOf("shell", a.shell, string(demo.ShellAuto), string(demo.ShellBusybox), string(demo.ShellSystem)); err != nil {
				return err
			}
			return runDemo(cmd.Context(), a, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&a.yes, "yes", false, "approve without waiting for Enter")
	f.StringVar(&a.rules, "rules", "", "YAML file of site-specific rules, added to the built-in ones (as RULES_FILE)")
	f.StringVar(&a.shell, "shell", string(demo.ShellAuto), "what runs the repair script: auto (busybox when on PATH, else /bin/sh), busybox or sh")
	f.BoolVar(&a.withMetrics, "metrics", false, "show a /metrics excerpt at the end")
	f.BoolVar(&a.verbose, "verbose", false, "print the bot's logs on stderr (default: a temporary file)")
	_ = cmd.RegisterFlagCompletionFunc("shell", completeValues(string(demo.ShellAuto), string(demo.ShellBusybox), string(demo.ShellSystem)))
	return cmd
}

// runDemo is `bot demo`. It exits non-zero when the story does not end
// with the alert posted, the broker repaired and the alert resolved, so a
// test or CI can trust it.
func runDemo(ctx context.Context, a demoArgs, stdin io.Reader, stdout, stderr io.Writer) error {
	yes, rules, shell, withMetrics, verbose := &a.yes, &a.rules, &a.shell, &a.withMetrics, &a.verbose
	engine, err := serve.LoadEngine(&config.Config{RulesFile: *rules})
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

	opts.Logger = demoLogger(opts.Log, opts.LogLevel)
	defer klog.ClearLogger()

	opts.Metrics = *withMetrics
	_, err = demo.Run(ctx, opts)
	return err
}

// demoLogger is the demo bot's logger (text, as a person reads it), and
// what client-go logs through klog (reflectors, API server warnings) goes
// through it too, with logger=klog, as in bot serve: one stream, one format.
// The caller undoes the routing with klog.ClearLogger.
func demoLogger(w io.Writer, level slog.Level) *slog.Logger {
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	logging.RouteKlog(log)
	return log
}
