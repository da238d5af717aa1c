// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package doctor checks an installation of the bot in one run (`bot
// doctor`, also the chart's `helm test`): the configuration, the Slack app
// (tokens, scopes, channel membership), the bot's RBAC for every request
// its code makes (SelfSubjectAccessReview, from internal/botuses), the
// admission policy (the guard's self-check), the Kafka namespaces, the
// debug-image allow-list against the images the Kafka pods run, and the
// mounts of the Kafka credentials Secrets the repair gates read. Every
// problem is reported with what to do; nothing is written (the only
// "writes" are server-side dry runs, which store nothing).
package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
)

// Severity is how bad a check's finding is.
type Severity int

const (
	// OK: the check passed.
	OK Severity = iota
	// Note: worth knowing, not wrong (a feature that is off on purpose).
	Note
	// Problem: something is wrong; `bot doctor` exits non-zero.
	Problem
)

// Result is one check's finding.
type Result struct {
	// Area groups results: config, slack, rbac, admission, namespace,
	// images, kafka, alertmanager.
	Area string
	// Cluster names the cluster on a bot serving several ("" otherwise).
	Cluster string
	Severity
	// Message says what was found, in one line.
	Message string
	// Fix says what to do ("" when nothing is to be done).
	Fix string
}

// Report is every result of one run, in the order checked.
type Report struct {
	Results []Result
}

// Problems counts the results that are problems.
func (r Report) Problems() int {
	n := 0
	for _, res := range r.Results {
		if res.Severity == Problem {
			n++
		}
	}
	return n
}

// Write prints the report: one line per result (✓ ok, · note, ✗
// problem) with its fix indented below, then a summary line.
func (r Report) Write(w io.Writer) error {
	var b strings.Builder
	for _, res := range r.Results {
		mark := "✓"
		switch res.Severity {
		case Note:
			mark = "·"
		case Problem:
			mark = "✗"
		}
		where := res.Area
		if res.Cluster != "" {
			where = res.Cluster + " " + res.Area
		}
		fmt.Fprintf(&b, "%s %s: %s\n", mark, where, res.Message)
		if res.Fix != "" && res.Severity != OK {
			fmt.Fprintf(&b, "    fix: %s\n", res.Fix)
		}
	}
	if n := r.Problems(); n == 0 {
		fmt.Fprintf(&b, "\nno problems found (%d checks)\n", len(r.Results))
	} else {
		fmt.Fprintf(&b, "\n%d problem(s) found (%d checks); each says what to do\n", n, len(r.Results))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Cluster is one Kubernetes cluster the bot serves, reached with the bot's
// own identity there.
type Cluster struct {
	// Name is its CLUSTERS_FILE name ("" for the single cluster).
	Name string
	// Client reaches its API server as the bot.
	Client kubernetes.Interface
	// KafkaNamespaces are the namespaces the bot reads and repairs there.
	KafkaNamespaces []string
	// ApprovalChannels are its own approval channels (CLUSTERS_FILE).
	ApprovalChannels []string
	// Kafka is how its repair gates reach Kafka (KAFKA_BOOTSTRAP or its
	// CLUSTERS_FILE kafka list): each Secret named there must be mounted
	// under Options.KafkaSecretsDir.
	Kafka []fleet.KafkaAccess
}

// Options say what to check.
type Options struct {
	// Config is the configuration as read; nil when it could not be read
	// at all (ConfigErr says why), and then only ConfigErr is reported.
	Config *config.Config
	// ConfigErr is the configuration's error (a config.Errors lists each
	// problem; each becomes one result), nil when it is valid.
	ConfigErr error
	// Clusters are the clusters to check (none: Kubernetes is not checked,
	// e.g. when CLUSTERS_FILE could not be read: ConfigErr says so).
	Clusters []Cluster
	// HTTPClient reaches Slack (default http.DefaultClient).
	HTTPClient *http.Client
	// KafkaSecretsDir is where the pod mounts the Secrets the Kafka access
	// entries name (serve.KafkaSecretsDir).
	KafkaSecretsDir string
	// ExpectAlertmanager says Alertmanager is meant to post to the bot
	// (the chart's alertmanager.enabled): ALERTMANAGER_TOKEN must be set.
	ExpectAlertmanager bool
}

// Run runs every check and returns the report. It never stops at the
// first problem.
func Run(ctx context.Context, opts Options) Report {
	var r Report
	r.Results = append(r.Results, configResults(opts.ConfigErr)...)
	cfg := opts.Config
	if cfg == nil {
		return r
	}
	r.Results = append(r.Results, alertmanagerResults(cfg, opts.ExpectAlertmanager)...)
	r.Results = append(r.Results, checkSlack(ctx, cfg, opts.Clusters, opts.HTTPClient)...)
	for _, c := range opts.Clusters {
		r.Results = append(r.Results, checkKafkaSecrets(c, opts.KafkaSecretsDir)...)
		r.Results = append(r.Results, checkCluster(ctx, cfg, c)...)
	}
	return r
}

// configResults turns the configuration's errors into one problem each.
func configResults(err error) []Result {
	if err == nil {
		return []Result{{Area: "config", Severity: OK, Message: "every setting is valid"}}
	}
	var errs []error
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		errs = multi.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]Result, 0, len(errs))
	for _, e := range errs {
		out = append(out, Result{Area: "config", Severity: Problem, Message: e.Error(),
			Fix: "correct it in the bot's environment (the chart's values or extraConfig, deploy/base/configmap.yaml, or the Secret for tokens)"})
	}
	return out
}

// alertmanagerResults checks the Alertmanager receiver's token.
func alertmanagerResults(cfg *config.Config, expected bool) []Result {
	switch {
	case cfg.AlertmanagerToken != "":
		return []Result{{Area: "alertmanager", Severity: OK, Message: "the receiver is on (ALERTMANAGER_TOKEN is set)"}}
	case expected:
		return []Result{{Area: "alertmanager", Severity: Problem,
			Message: "Alertmanager is meant to post to the bot (alertmanager.enabled) but ALERTMANAGER_TOKEN is not set, so POST /alertmanager is not served",
			Fix:     "add ALERTMANAGER_TOKEN (at least 16 bytes) to the bot's Secret, the same value as Alertmanager's credentials_file, and restart the bot"}}
	}
	return []Result{{Area: "alertmanager", Severity: Note, Message: "the receiver is off (ALERTMANAGER_TOKEN is not set)"}}
}
