// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package command parses the text of a /kafka command (Parse) into a
// Command, checking every name a user types before anything else is done
// with it. It is pure: it knows no cluster and no Slack call.
package command

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Verb is what a /kafka command asks for.
type Verb string

// The verbs of /kafka.
const (
	VerbHelp     Verb = "help"
	VerbStatus   Verb = "status"
	VerbDiagnose Verb = "diagnose"
	VerbSilences Verb = "silences"
	VerbSweep    Verb = "sweep"
)

// Limits on what a user may type, checked before anything else is done with it.
const (
	maxCommandText   = 300 // characters of the whole argument text
	maxNamespaceName = 63  // DNS-1123 label
	maxPodName       = 253 // DNS-1123 subdomain
)

// Command is a parsed /kafka command.
type Command struct {
	Verb Verb
	// KubeCluster names the Kubernetes cluster, from a three-segment target
	// (CLUSTER/NAMESPACE/POD); empty otherwise.
	KubeCluster string
	// Scope is the first segment of a two-segment target (SCOPE/POD): the
	// cluster when the bot serves one of that name, else a namespace
	// (resolved by the bot, which knows its clusters).
	Scope string
	// Namespace is empty when the user did not name one; the cluster then
	// searches the namespaces the bot may read.
	Namespace string
	// Pod is the pod name as typed; short names like "broker-0" are resolved
	// by the cluster.
	Pod string
}

// UsageError says why a command text was not understood. Its message is
// safe to show to the user (it quotes at most a short, validated fragment).
type UsageError struct {
	Problem string
}

func (e *UsageError) Error() string { return e.Problem }

// Usagef returns a *UsageError whose problem is the formatted text.
func Usagef(format string, args ...any) error {
	return &UsageError{Problem: fmt.Sprintf(format, args...)}
}

// Parse parses the text after the slash command:
//
//	diagnose [CLUSTER/][NAMESPACE/]POD
//	diagnose -n NAMESPACE POD   (also --namespace, before or after POD)
//	status
//	silences
//	sweep
//	help
//
// Empty text means help. Anything else is a *UsageError.
func Parse(text string) (Command, error) {
	if !utf8.ValidString(text) {
		return Command{}, Usagef("the command is not valid text")
	}
	if n := utf8.RuneCountInString(text); n > maxCommandText {
		return Command{}, Usagef("the command is too long (%d characters, at most %d)", n, maxCommandText)
	}
	args := strings.Fields(text)
	if len(args) == 0 {
		return Command{Verb: VerbHelp}, nil
	}
	verb, args := strings.ToLower(args[0]), args[1:]
	switch Verb(verb) {
	case VerbHelp:
		return Command{Verb: VerbHelp}, nil
	case VerbStatus:
		if len(args) > 0 {
			return Command{}, Usagef("`status` takes no arguments")
		}
		return Command{Verb: VerbStatus}, nil
	case VerbDiagnose:
		return parseDiagnose(args)
	case VerbSilences, VerbSweep:
		if len(args) > 0 {
			return Command{}, Usagef("`%s` takes no arguments", verb)
		}
		return Command{Verb: Verb(verb)}, nil
	default:
		return Command{}, Usagef("unknown subcommand %s", Quote(verb))
	}
}

func parseDiagnose(args []string) (Command, error) {
	var ns, target string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-n" || a == "--namespace":
			if i+1 >= len(args) {
				return Command{}, Usagef("%s needs a namespace", a)
			}
			if ns != "" {
				return Command{}, Usagef("the namespace is given twice")
			}
			i++
			ns = args[i]
		case strings.HasPrefix(a, "--namespace="):
			if ns != "" {
				return Command{}, Usagef("the namespace is given twice")
			}
			ns = strings.TrimPrefix(a, "--namespace=")
		case strings.HasPrefix(a, "-"):
			return Command{}, Usagef("unknown option %s", Quote(a))
		default:
			if target != "" {
				return Command{}, Usagef("`diagnose` takes one pod")
			}
			target = a
		}
	}
	if target == "" {
		return Command{}, Usagef("`diagnose` needs a pod, like `diagnose kafka/broker-0`")
	}
	cmd := Command{Verb: VerbDiagnose, Namespace: ns}
	if parts := strings.Split(target, "/"); len(parts) > 1 {
		if ns != "" {
			return Command{}, Usagef("the namespace is given twice")
		}
		switch len(parts) {
		case 2:
			cmd.Scope, target = parts[0], parts[1]
			// Usually a namespace; the bot decides (see Scope).
			if err := validateName("namespace", cmd.Scope, maxNamespaceName, false); err != nil {
				return Command{}, err
			}
		case 3:
			cmd.KubeCluster, cmd.Namespace, target = parts[0], parts[1], parts[2]
			if err := validateName("cluster name", cmd.KubeCluster, maxNamespaceName, false); err != nil {
				return Command{}, err
			}
			if err := validateName("namespace", cmd.Namespace, maxNamespaceName, false); err != nil {
				return Command{}, err
			}
		default:
			for _, p := range parts[:len(parts)-1] {
				if err := validateName("namespace", p, maxNamespaceName, false); err != nil {
					return Command{}, err
				}
			}
			return Command{}, Usagef("%s has too many parts (want [CLUSTER/][NAMESPACE/]POD)", Quote(target))
		}
	}
	if cmd.Namespace != "" {
		if err := validateName("namespace", cmd.Namespace, maxNamespaceName, false); err != nil {
			return Command{}, err
		}
	}
	if err := validateName("pod name", target, maxPodName, true); err != nil {
		return Command{}, err
	}
	cmd.Pod = target
	return cmd, nil
}

// validateName checks a Kubernetes object name: lowercase letters, digits
// and '-' (and '.' for subdomains), starting and ending alphanumeric.
func validateName(what, s string, maxLen int, dots bool) error {
	if s == "" {
		return Usagef("the %s is empty", what)
	}
	if len(s) > maxLen {
		return Usagef("the %s is too long (%d characters, at most %d)", what, len(s), maxLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || dots && c == '.'
		if !ok {
			return Usagef("%s is not a valid %s (lowercase letters, digits and '-' only)", Quote(s), what)
		}
	}
	if !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return Usagef("%s is not a valid %s (must start and end with a letter or digit)", Quote(s), what)
	}
	return nil
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// Quote quotes a short, escaped piece of user input for a usage message.
func Quote(s string) string {
	const maxFragment = 40
	s = slackview.Truncate(s, maxFragment)
	return "`" + strings.ReplaceAll(slackview.EscapeMrkdwn(s), "`", "'") + "`"
}
