// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// diagnoseTimeout bounds one `bot diagnose` run (pod lookup, reads, engine).
const diagnoseTimeout = 2 * time.Minute

// findingEngine is what `bot diagnose` needs of the diagnosis engine
// (*diagnose.Engine).
type findingEngine interface {
	Diagnose(s diagnose.Snapshot) []diagnose.Finding
}

// diagnoseArgs are the parsed arguments of `bot diagnose`.
type diagnoseArgs struct {
	cluster clusterFlags
	pod     string
	output  string
}

// newDiagnoseCmd is `bot diagnose`; action runs the parsed command
// (runDiagnose, or a test's recorder).
func newDiagnoseCmd(action func(context.Context, diagnoseArgs, io.Writer) error) *cobra.Command {
	var a diagnoseArgs
	cmd := &cobra.Command{
		Use:   "diagnose POD [-n NAMESPACE] [-o text|json]",
		Short: "Diagnose one Kafka pod of a live cluster (read-only)",
		Long: `Find one Kafka pod of the live cluster, read its status, events, claims and
the previous container's log, run the diagnosis engine and print the
findings with the facts they were drawn from. It only reads the cluster.

POD is a pod name or the end of one (broker-0 finds foobar-kafka-broker-0).
Without -n it looks in the kubeconfig context's namespace when the context
names one inside KAFKA_NAMESPACES, else in every namespace in
KAFKA_NAMESPACES (every one the credentials may read when that is empty);
-A always looks everywhere.`,
		Example: `  bot diagnose broker-0
  bot diagnose -n kafka foobar-kafka-broker-0 -o json
  bot diagnose --context prod --kubeconfig ~/.kube/prod broker-0`,
		Args: exactArgs("POD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.pod = args[0]
			if err := a.validate(); err != nil {
				return err
			}
			return action(cmd.Context(), a, cmd.OutOrStdout())
		},
	}
	a.cluster.add(cmd.Flags())
	cmd.Flags().StringVarP(&a.output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", completeValues("text", "json"))
	return cmd
}

// validate checks the parsed arguments before the cluster is contacted.
func (a diagnoseArgs) validate() error {
	if err := oneOf("output", a.output, "text", "json"); err != nil {
		return err
	}
	if err := a.cluster.validate(); err != nil {
		return err
	}
	if err := kube.ValidateTarget(a.cluster.namespace, a.pod); err != nil {
		return usageError{err}
	}
	return nil
}

// runDiagnose is `bot diagnose`: find one Kafka pod of the live cluster,
// read it, run the diagnosis engine and print the findings with the facts
// they were drawn from. It only reads the cluster.
func runDiagnose(ctx context.Context, a diagnoseArgs, stdout io.Writer) error {
	_, engine, client, where, err := clusterTools("kafkabot-diagnose", &a.cluster)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	ns, pod, err := client.FindPod(ctx, where.namespace, a.pod)
	if err != nil {
		return where.explain(err)
	}
	return diagnosePod(ctx, client, engine, ns, pod, a.output, stdout)
}

// diagnosePod reads ns/pod through client, runs engine on what it read and
// writes the report to w as text or JSON.
func diagnosePod(ctx context.Context, client *kube.Client, engine findingEngine, ns, pod, output string, w io.Writer) error {
	in, err := client.Inspect(ctx, ns, pod)
	if err != nil {
		return err
	}
	findings := engine.Diagnose(in.Snapshot)
	if findings == nil {
		findings = []diagnose.Finding{}
	}
	if output == "json" {
		return writeDiagnosisJSON(w, in, findings)
	}
	return writeDiagnosisText(w, in, findings)
}

// diagnosisFacts is the "pod" object of the JSON report: the Snapshot's
// fields (the log itself left out) plus how they were obtained.
type diagnosisFacts struct {
	diagnose.Snapshot
	RoleSource       string         `json:"roleSource"`
	LogSource        kube.LogSource `json:"logSource"`
	LogBytesReceived int64          `json:"logBytesReceived"`
	Notes            []string       `json:"notes,omitempty"`
}

// diagnosisReport is the JSON output of `bot diagnose --output json`.
type diagnosisReport struct {
	Pod      diagnosisFacts     `json:"pod"`
	Findings []diagnose.Finding `json:"findings"`
}

func writeDiagnosisJSON(w io.Writer, in kube.Inspection, findings []diagnose.Finding) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	err := enc.Encode(diagnosisReport{
		Pod: diagnosisFacts{
			Snapshot:         in.Snapshot,
			RoleSource:       in.RoleSource,
			LogSource:        in.LogSource,
			LogBytesReceived: in.LogBytesReceived,
			Notes:            in.Notes,
		},
		Findings: findings,
	})
	if err != nil {
		return fmt.Errorf("writing JSON report: %w", err)
	}
	return nil
}

// diagnosisText writes a plain-text report. Everything that came from the
// cluster or the log goes through termSafe, so a hostile log line cannot
// drive the terminal.
type diagnosisText struct {
	w   io.Writer
	err error
}

// field writes "Label      value" lines; value may span several lines.
func (t *diagnosisText) field(label, value string) {
	for i, line := range strings.Split(value, "\n") {
		if i > 0 {
			label = ""
		}
		t.printf("%-10s %s\n", label, diagnoseTermSafe(line))
	}
}

// indented writes text with a prefix on every line.
func (t *diagnosisText) indented(prefix, text string) {
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			t.printf("\n")
			continue
		}
		t.printf("%s%s\n", prefix, diagnoseTermSafe(line))
	}
}

func (t *diagnosisText) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func writeDiagnosisText(w io.Writer, in kube.Inspection, findings []diagnose.Finding) error {
	s := in.Snapshot
	t := &diagnosisText{w: w}
	t.field("Pod", fmt.Sprintf("%s/%s (uid %s)", s.Namespace, s.Pod, diagOrDash(s.UID)))
	t.field("Node", fmt.Sprintf("%s, phase %s", diagOrDash(s.Node), diagOrDash(s.Phase)))
	t.field("Cluster", diagOrDash(s.KafkaCluster))
	role := string(s.Role)
	if s.Role == diagnose.RoleUnknown {
		role = "unknown (treated as a controller: no automated repair)"
	}
	t.field("Role", fmt.Sprintf("%s, node id %s\n%s", role, diagOrDash(s.NodeID), in.RoleSource))
	if k := s.Kafka(); k != nil {
		t.field("Kafka", diagContainerLine(k))
	} else {
		t.field("Kafka", "no container recognisable as Kafka")
	}
	if len(s.Claims) == 0 {
		t.field("Claims", "none mounted by the Kafka container")
	}
	for i, c := range s.Claims {
		label := ""
		if i == 0 {
			label = "Claims"
		}
		modes := strings.Join(c.AccessModes, ",")
		t.field(label, fmt.Sprintf("%s (volume %s) at %s: %s, %s", c.ClaimName, c.Volume, diagOrDash(c.MountPath), diagOrDash(c.Phase), diagOrDash(modes)))
	}
	for i, e := range s.Events {
		label := ""
		if i == 0 {
			label = "Events"
		}
		t.field(label, e)
	}
	t.field("Log", diagLogLine(in))
	for _, n := range in.Notes {
		t.field("Note", n)
	}
	t.printf("\n")
	if len(findings) == 0 {
		t.printf("No known failure class matched. Read the log yourself:\n")
		t.indented("  ", fmt.Sprintf("kubectl logs -n %s %s -c %s --previous", s.Namespace, s.Pod, diagOrDash(s.KafkaContainer)))
		return t.err
	}
	t.printf("Findings: %d\n", len(findings))
	for i, f := range findings {
		t.printf("\n")
		t.indented(fmt.Sprintf("[%d] ", i+1), fmt.Sprintf("%s  %s: %s", strings.ToUpper(string(f.Severity)), f.Rule, f.Title))
		t.indented("    ", fmt.Sprintf("confidence %.2f, remedy risk %s", f.Confidence, f.Risk))
		if f.RoleSource != "" {
			t.indented("    ", fmt.Sprintf("decided for role %s (%s)", diagOrDash(string(f.Role)), f.RoleSource))
		}
		if o := f.Offsets; o != nil {
			verdict := "next offset == log start offset: the controllers hold the bad state; escalate"
			if o.LocalDivergence {
				verdict = "next offset > log start offset: this node's copy diverged"
			}
			t.indented("    ", fmt.Sprintf("offsets: first %d, next %d, log start %d (%s)", o.FirstOffset, o.NextOffset, o.LogStartOffset, verdict))
		}
		if len(f.Evidence) > 0 {
			t.indented("    ", "evidence:")
			for _, e := range f.Evidence {
				t.indented("      | ", e)
			}
		}
		if f.Explanation != "" {
			t.indented("    ", "why:")
			t.indented("      ", f.Explanation)
		}
		kind := "manual"
		if f.Remedy.Automated {
			kind = "automated after approval"
		}
		head := fmt.Sprintf("remedy (%s): %s", kind, diagOrDash(f.Remedy.Action))
		if f.Remedy.Target != "" {
			head += " " + f.Remedy.Target
		}
		t.indented("    ", head)
		for j, step := range f.Remedy.Steps {
			t.indented(fmt.Sprintf("      %d. ", j+1), step)
		}
	}
	return t.err
}

// diagContainerLine summarises the Kafka container's state.
func diagContainerLine(k *diagnose.ContainerState) string {
	var state string
	switch {
	case k.WaitingReason != "":
		state = "waiting " + k.WaitingReason
	case k.Running:
		state = "running"
	case k.Terminated != nil:
		state = "terminated"
	default:
		state = "no status yet"
	}
	ready := "not ready"
	if k.Ready {
		ready = "ready"
	}
	lines := []string{fmt.Sprintf("container %s: %s, %s, %d restarts", k.Name, state, ready, k.RestartCount)}
	if t := k.LastTerminated; t != nil {
		lines = append(lines, "last exit "+diagTermination(t))
	}
	if t := k.Terminated; t != nil {
		lines = append(lines, "exited "+diagTermination(t))
	}
	image := k.Image
	if k.ImageID != "" {
		image += " (" + k.ImageID + ")"
	}
	lines = append(lines, "image "+diagOrDash(image))
	return strings.Join(lines, "\n")
}

func diagTermination(t *diagnose.Termination) string {
	s := fmt.Sprintf("%d", t.ExitCode)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	if t.Signal != 0 {
		s += fmt.Sprintf(", signal %d", t.Signal)
	}
	if !t.FinishedAt.IsZero() {
		s += " at " + t.FinishedAt.UTC().Format(time.RFC3339)
	}
	if t.Message != "" {
		s += ": " + strings.Join(strings.Fields(t.Message), " ")
	}
	return s
}

func diagLogLine(in kube.Inspection) string {
	s := in.Snapshot
	if in.LogSource == kube.LogNone {
		return "none read"
	}
	d := fmt.Sprintf("%d bytes of the %s instance's log of container %s", s.LogBytes, in.LogSource, s.KafkaContainer)
	if s.LogTruncated {
		d += fmt.Sprintf(" (the last part of %d bytes received; older lines cut)", in.LogBytesReceived)
	}
	return d
}

func diagOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// diagnoseTermSafe replaces control characters (escape sequences, carriage
// returns, bells) and invalid UTF-8 with visible escapes, so text from the
// cluster prints as text.
func diagnoseTermSafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) && r != '\t':
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
