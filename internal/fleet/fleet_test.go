// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Spec
		// err, when set, must appear in the error (entry and field).
		err string
	}{
		{
			name: "yaml, every field",
			in: `clusters:
  - name: prod-eu
    kubeconfig: /etc/kafkabot/clusters/prod-eu/kubeconfig
    context: eu
    kafkaNamespaces: [kafka, kafka-2]
    approvalChannels: [C0PRODEU]
    approvers: [U0PRODLEAD, W0PRODSRE]
  - name: staging
`,
			want: []Spec{
				{Name: "prod-eu", Kubeconfig: "/etc/kafkabot/clusters/prod-eu/kubeconfig", Context: "eu",
					KafkaNamespaces: []string{"kafka", "kafka-2"}, ApprovalChannels: []string{"C0PRODEU"},
					Approvers: []string{"U0PRODLEAD", "W0PRODSRE"}},
				{Name: "staging"},
			},
		},
		{
			name: "json",
			in:   `{"clusters":[{"name":"a","kafkaNamespaces":["kafka"]},{"name":"b"}]}`,
			want: []Spec{{Name: "a", KafkaNamespaces: []string{"kafka"}}, {Name: "b"}},
		},
		{name: "unknown field names it", in: "clusters:\n  - name: a\n    kubeConfig: /x\n", err: "kubeConfig"},
		{name: "unknown top-level field", in: "clusters: []\nextra: 1\n", err: "extra"},
		{name: "empty list", in: "clusters: []\n", err: "no clusters"},
		{name: "no name", in: "clusters:\n  - kubeconfig: /x\n", err: "clusters[0] (): name: empty"},
		{name: "upper case name", in: "clusters:\n  - name: Prod\n", err: "clusters[0] (Prod): name"},
		{name: "name with a slash", in: "clusters:\n  - name: a/b\n", err: "clusters[0] (a/b): name"},
		{name: "name too long", in: "clusters:\n  - name: " + strings.Repeat("a", 64) + "\n", err: "at most 63"},
		{name: "duplicate name", in: "clusters:\n  - name: a\n  - name: b\n  - name: a\n", err: "clusters[2] (a): name: duplicate of clusters[0]"},
		{name: "bad namespace", in: "clusters:\n  - name: a\n    kafkaNamespaces: [Kafka]\n", err: "clusters[0] (a): kafkaNamespaces"},
		{name: "DM as approval channel", in: "clusters:\n  - name: a\n    approvalChannels: [D0DM]\n", err: "clusters[0] (a): approvalChannels"},
		{name: "channel as approver", in: "clusters:\n  - name: a\n    approvers: [C0PRODEU]\n", err: "clusters[0] (a): approvers"},
		{name: "lower-case approver", in: "clusters:\n  - name: a\n    approvers: [u0lead]\n", err: "clusters[0] (a): approvers"},
		{name: "approver listed twice", in: "clusters:\n  - name: a\n    approvers: [U0LEAD, U0LEAD]\n", err: "listed twice"},
		{name: "context without kubeconfig", in: "clusters:\n  - name: a\n    context: x\n", err: "clusters[0] (a): context"},
		{name: "not yaml", in: "clusters: [", err: "invalid clusters file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("Parse = %v, %v; want an ErrInvalid containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadFileChecksKubeconfigs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(good, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(body string) string {
		p := filepath.Join(dir, "clusters.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, body, err string
	}{
		{"readable", "clusters:\n  - name: a\n    kubeconfig: " + good + "\n  - name: b\n", ""},
		{"missing file", "clusters:\n  - name: a\n    kubeconfig: " + good + "\n  - name: b\n    kubeconfig: " + filepath.Join(dir, "nope") + "\n", "clusters[1] (b): kubeconfig"},
		{"empty file", "clusters:\n  - name: a\n    kubeconfig: " + empty + "\n", "clusters[0] (a): kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, err := LoadFile(write(tt.body))
			if tt.err == "" {
				if err != nil || len(specs) != 2 {
					t.Fatalf("LoadFile = %v, %v", specs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "CLUSTERS_FILE") {
				t.Fatalf("LoadFile error = %v, want one naming CLUSTERS_FILE and %q", err, tt.err)
			}
		})
	}
	if _, err := LoadFile(filepath.Join(dir, "absent.yaml")); err == nil || !strings.Contains(err.Error(), "CLUSTERS_FILE") {
		t.Fatalf("an absent file: %v", err)
	}
}

func TestBreaker(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &Breaker{Period: 30 * time.Second, Now: func() time.Time { return now }}
	steps := []struct {
		name    string
		advance time.Duration
		act     func()
		allow   bool
	}{
		{name: "closed lets calls through", allow: true},
		{name: "still closed", allow: true},
		{name: "a failure opens it", act: func() { b.Failure("timeout") }, allow: false},
		{name: "open within the period", advance: 29 * time.Second, allow: false},
		{name: "the period over: one probe", advance: time.Second, allow: true},
		{name: "while the probe runs, others are refused", allow: false},
		{name: "a failed probe opens it again", act: func() { b.Failure("refused") }, allow: false},
		{name: "next probe", advance: 30 * time.Second, allow: true},
		{name: "a failed probe opens it again (2)", act: func() { b.Failure("refused") }, allow: false},
		{name: "a probe whose caller gave up", advance: 30 * time.Second, allow: true},
		{name: "is abandoned: the next call probes", act: b.Abandon, allow: true},
		{name: "a successful probe closes it", act: b.Success, allow: true},
		{name: "closed again", allow: true},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.act != nil {
			s.act()
		}
		ok, reason := b.Allow()
		if ok != s.allow {
			t.Fatalf("%s: Allow = %v (%q), want %v", s.name, ok, reason, s.allow)
		}
		if !ok && reason == "" {
			t.Fatalf("%s: refused without a reason", s.name)
		}
	}
}

// TestParseSaysWhatIsWrongInWords: a clusters file with several mistakes
// gets every one at once, each with its line, entry and field and what
// was wanted, and never a Go type name (issue 25 item 6: "cannot unmarshal
// !!str `kafka` into []string", "field nmae not found in type fleet.Spec",
// one per run).
func TestParseSaysWhatIsWrongInWords(t *testing.T) {
	in := "clusters:\n" +
		"  - name: prod-eu\n" +
		"    kafkaNamespaces: kafka\n" + // line 3: text where a list belongs
		"  - name: prod-us\n" +
		"    nmae: typo\n" + // line 5: unknown field
		"    KubeConfig: /x\n" + // line 6: miscased
		"  - name: [a, b]\n" + // line 7: a list where text belongs
		"  - just-a-string\n" // line 8: not a cluster
	_, err := Parse([]byte(in))
	if err == nil || !errors.Is(err, ErrInvalid) {
		t.Fatalf("Parse = %v, want an ErrInvalid", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"5 problems",
		"line 3: clusters[0] (prod-eu): kafkaNamespaces: want a list such as [a, b], got the value \"kafka\"",
		"line 5: clusters[1] (prod-us): nmae: unknown field",
		"line 6: clusters[1] (prod-us): KubeConfig: unknown field (did you mean kubeconfig?",
		"line 7: clusters[2] (): name: want text, got a list",
		"line 8: clusters[3]: want a cluster",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Parse error does not say %q:\n%s", want, msg)
		}
	}
	for _, goName := range []string{"!!str", "!!seq", "[]string", "fleet.Spec", "fleet.File", "unmarshal"} {
		if strings.Contains(msg, goName) {
			t.Errorf("Parse error shows %q:\n%s", goName, msg)
		}
	}
	// Semantic problems come all at once too.
	_, err = Parse([]byte("clusters:\n  - name: Prod\n  - name: b\n    approvalChannels: [D0DM]\n    kafkaNamespaces: [Kafka]\n"))
	if err == nil || !strings.Contains(err.Error(), "3 problems") {
		t.Errorf("Parse = %v, want the 3 problems at once", err)
	}
	for _, tt := range []struct{ in, want string }{
		{"- a\n", "line 1: want a mapping with the key `clusters:` at the top, got a list"},
		{"clusters: x\n", "line 1: clusters: want a list of clusters"},
		{"", "the file is empty"},
	} {
		if _, err := Parse([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}
