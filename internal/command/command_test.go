// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package command

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

func TestParse(t *testing.T) {
	tests := []struct {
		text    string
		want    Command
		problem string // substring of the usage error; "" = no error
	}{
		{"", Command{Verb: VerbHelp}, ""},
		{"   ", Command{Verb: VerbHelp}, ""},
		{"help", Command{Verb: VerbHelp}, ""},
		{"HELP", Command{Verb: VerbHelp}, ""},
		{"status", Command{Verb: VerbStatus}, ""},
		{"status kafka", Command{}, "takes no arguments"},
		{"diagnose broker-0", Command{Verb: VerbDiagnose, Pod: "broker-0"}, ""},
		{"diagnose kafka/foobar-kafka-broker-0", Command{Verb: VerbDiagnose, Scope: "kafka", Pod: "foobar-kafka-broker-0"}, ""},
		{"diagnose prod-eu/kafka/broker-0", Command{Verb: VerbDiagnose, KubeCluster: "prod-eu", Namespace: "kafka", Pod: "broker-0"}, ""},
		{"diagnose prod-eu//broker-0", Command{}, "namespace is empty"},
		{"diagnose /kafka/broker-0", Command{}, "cluster name is empty"},
		{"diagnose Prod/kafka/broker-0", Command{}, "not a valid cluster name"},
		{"diagnose a/b/c/d", Command{}, "too many parts"},
		{"diagnose -n kafka prod-eu/kafka/broker-0", Command{}, "given twice"},
		{"diagnose -n kafka broker-0", Command{Verb: VerbDiagnose, Namespace: "kafka", Pod: "broker-0"}, ""},
		{"diagnose broker-0 --namespace kafka", Command{Verb: VerbDiagnose, Namespace: "kafka", Pod: "broker-0"}, ""},
		{"diagnose --namespace=kafka broker-0", Command{Verb: VerbDiagnose, Namespace: "kafka", Pod: "broker-0"}, ""},
		{"  diagnose\tbroker-0  ", Command{Verb: VerbDiagnose, Pod: "broker-0"}, ""},
		{"diagnose my.pod-1", Command{Verb: VerbDiagnose, Pod: "my.pod-1"}, ""},
		{"diagnose", Command{}, "needs a pod"},
		{"diagnose -n kafka", Command{}, "needs a pod"},
		{"diagnose -n", Command{}, "needs a namespace"},
		{"diagnose a b", Command{}, "one pod"},
		{"diagnose -n x kafka/broker-0", Command{}, "given twice"},
		{"diagnose -n x -n y broker-0", Command{}, "given twice"},
		{"diagnose -x broker-0", Command{}, "unknown option"},
		{"diagnose Broker-0", Command{}, "not a valid pod name"},
		{"diagnose broker-0;rm", Command{}, "not a valid pod name"},
		{"diagnose -broker", Command{}, "unknown option"},
		{"diagnose broker-", Command{}, "start and end"},
		{"diagnose kafka/", Command{}, "pod name is empty"},
		{"diagnose /broker-0", Command{}, "namespace is empty"},
		{"diagnose a/b/C", Command{}, "not a valid pod name"},
		{"diagnose ka.fka/broker-0", Command{}, "not a valid namespace"},
		{"diagnose <!channel>", Command{}, "not a valid pod name"},
		{"diagnose " + strings.Repeat("a", 254), Command{}, "too long"},
		{"diagnose " + strings.Repeat("a", 64) + "/b", Command{}, "namespace is too long"},
		{strings.Repeat("x", 301), Command{}, "too long"},
		{"restart broker-0", Command{}, "unknown subcommand"},
		{"diagnose \xff", Command{}, "not valid text"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("Parse(%q) error: %v", tt.text, err)
				}
				if got != tt.want {
					t.Fatalf("Parse(%q) = %+v, want %+v", tt.text, got, tt.want)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q) = %+v, %v; want a usage error", tt.text, got, err)
			}
			if !strings.Contains(ue.Problem, tt.problem) {
				t.Fatalf("Parse(%q) problem %q, want it to mention %q", tt.text, ue.Problem, tt.problem)
			}
		})
	}
}

func TestUsageErrorQuotesSafely(t *testing.T) {
	_, err := Parse("<!channel>&" + strings.Repeat("z", 200))
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	if strings.Contains(msg, "<!channel>") || slackview.RuneLen(msg) > 120 {
		t.Fatalf("usage error echoes raw or long input: %q", msg)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "help", "status", "diagnose broker-0", "diagnose kafka/broker-0",
		"diagnose -n kafka broker-0", "diagnose --namespace=kafka x", "diagnose <@U123>", "diagnose a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd, err := Parse(text)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("non-usage error %T: %v", err, err)
			}
			if strings.Contains(ue.Problem, "<") || slackview.RuneLen(ue.Problem) > 160 || !utf8.ValidString(ue.Problem) {
				t.Fatalf("unsafe usage message %q", ue.Problem)
			}
			return
		}
		switch cmd.Verb {
		case VerbHelp, VerbStatus:
			if cmd.Pod != "" || cmd.Namespace != "" {
				t.Fatalf("%q parsed to %+v", text, cmd)
			}
		case VerbDiagnose:
			if validateName("pod name", cmd.Pod, maxPodName, true) != nil {
				t.Fatalf("%q accepted invalid pod %q", text, cmd.Pod)
			}
			if cmd.Namespace != "" && validateName("namespace", cmd.Namespace, maxNamespaceName, false) != nil {
				t.Fatalf("%q accepted invalid namespace %q", text, cmd.Namespace)
			}
		default:
			t.Fatalf("%q parsed to unknown verb %q", text, cmd.Verb)
		}
	})
}

func TestEscapeTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"a<b>&c", 100, "a&lt;b&gt;&amp;c"},
		{"<<<<", 9, "&lt;&lt;…"},
		{"abcdef", 4, "abc…"},
		{"äöüß", 4, "äöüß"},
		{"äöüßx", 4, "äöü…"},
	}
	for _, tt := range tests {
		got := slackview.EscapeTruncate(tt.in, tt.max)
		if got != tt.want || slackview.RuneLen(got) > tt.max {
			t.Errorf("escapeTruncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
