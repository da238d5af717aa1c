// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// execute runs a command line through the whole command tree and returns
// its stdout, stderr and error (run() maps the error to the exit code).
func execute(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCmd(strings.NewReader(stdin), &stdout, &stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return stdout.String(), stderr.String(), err
}

// executeCmd runs one subcommand on its own with args.
func executeCmd(t *testing.T, cmd *cobra.Command, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.SetFlagErrorFunc(flagError)
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(t.Context())
	return stdout.String(), stderr.String(), err
}

// runCLI is run() with captured output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// commandPaths lists every command of the tree as its argument path
// ([] is the root, ["escalation", "clear"] a leaf).
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	paths := [][]string{prefix}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() || sub.Name() == "help" {
			paths = append(paths, commandPaths(sub, append(slices.Clone(prefix), sub.Name()))...)
		}
	}
	return paths
}

// TestEveryCommandHelpAndUsageErrors walks the whole command tree: for
// every command, --help and -h print its usage with each of its flags on
// stdout and exit 0; an unknown flag exits 2 with one line naming it and
// a pointer to --help, on stderr only.
func TestEveryCommandHelpAndUsageErrors(t *testing.T) {
	root := newRootCmd(nil, nil, nil)
	paths := commandPaths(root, nil)
	var names []string
	for _, p := range paths {
		names = append(names, strings.Join(p, " "))
	}
	for _, want := range []string{"serve", "diagnose", "explain", "repair", "escalation", "escalation list", "escalation clear",
		"demo", "version", "completion bash", "completion zsh", "completion fish", "help"} {
		if !slices.Contains(names, want) {
			t.Errorf("the command tree lacks %q (has %q)", want, names)
		}
	}
	for _, path := range paths {
		name := strings.TrimSpace("bot " + strings.Join(path, " "))
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Run(name, func(t *testing.T) {
			for _, help := range []string{"--help", "-h"} {
				code, stdout, stderr := runCLI(t, append(slices.Clone(path), help)...)
				if code != 0 || stderr != "" {
					t.Errorf("%s %s: exit %d, stderr %q; want 0 and nothing on stderr", name, help, code, stderr)
				}
				if !strings.Contains(stdout, "Usage:\n  "+name) {
					t.Errorf("%s %s lacks its usage line:\n%s", name, help, stdout)
				}
				cmd.Flags().VisitAll(func(f *pflag.Flag) {
					if !strings.Contains(stdout, "--"+f.Name) {
						t.Errorf("%s %s does not list --%s:\n%s", name, help, f.Name, stdout)
					}
				})
				cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
					if !strings.Contains(stdout, "--"+f.Name) {
						t.Errorf("%s %s does not list the inherited --%s:\n%s", name, help, f.Name, stdout)
					}
				})
			}
			code, stdout, stderr := runCLI(t, append(slices.Clone(path), "--no-such-flag")...)
			want := fmt.Sprintf("%s: unknown flag: --no-such-flag\nSee '%s --help' for usage.\n", name, name)
			if code != 2 || stderr != want || stdout != "" {
				t.Errorf("%s --no-such-flag: exit %d, stderr %q, stdout %q; want 2 and %q", name, code, stderr, stdout, want)
			}
		})
	}
}

// TestExitCodes holds the command line's contract, case by case: what
// goes to stdout, what to stderr, and the exit code.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		stdout     string // a substring of stdout ("" = must be empty)
		stderrLine string // the first line of stderr ("" = must be empty)
	}{
		{[]string{"--help"}, 0, "Available Commands:", ""},
		{[]string{"help", "diagnose"}, 0, "--kubeconfig", ""},
		{[]string{"version"}, 0, "bot dev (go", ""},
		{[]string{"--version"}, 0, "bot dev (go", ""},
		{[]string{"-v"}, 0, "bot dev (go", ""},
		{[]string{"help", "completion", "bash"}, 0, "Usage:\n  bot completion bash\n", ""},
		{[]string{"completion", "bash"}, 0, "bash completion", ""},
		{[]string{"completion", "zsh"}, 0, "compdef", ""},
		{[]string{"completion", "fish"}, 0, "complete -c bot", ""},
		// The shell scripts read stdout and discard cobra's note on stderr.
		{[]string{"__complete", "diagnose", "--output", ""}, 0, "text\njson\n", "Completion ended with directive: ShellCompDirectiveNoFileComp"},
		{[]string{"__complete", "explain", "--role", ""}, 0, "broker\ncontroller\ncombined\n", "Completion ended with directive: ShellCompDirectiveNoFileComp"},
		{[]string{"diagnos"}, 2, "", `bot: unknown command "diagnos" (did you mean diagnose?)`},
		{[]string{"--bogus"}, 2, "", "bot: unknown flag: --bogus"},
		{[]string{"serve", "now"}, 2, "", `bot serve: unexpected argument "now"`},
		{[]string{"version", "x"}, 2, "", `bot version: unexpected argument "x"`},
		{[]string{"--version", "x"}, 2, "", `bot: unknown command "x"`},
		{[]string{"help", "nope"}, 2, "", `bot help: unknown help topic "nope"`},
		{[]string{"help", "completion", "tcsh"}, 2, "", `bot help: unknown help topic "completion tcsh"`},
		{[]string{"diagnose", "--version"}, 2, "", "bot diagnose: unknown flag: --version"},
		{[]string{"completion"}, 2, "", "bot completion: missing command: want bash, fish, powershell or zsh"},
		{[]string{"completion", "tcsh"}, 2, "", `bot completion: unknown command "tcsh": want bash, fish, powershell or zsh`},
		{[]string{"completion", "bash", "extra"}, 2, "", `bot completion bash: unknown command "extra" for "bot completion bash"`},
		{[]string{"diagnose"}, 2, "", "bot diagnose: missing POD"},
		{[]string{"diagnose", "-n"}, 2, "", "bot diagnose: flag needs an argument: 'n' in -n"},
		{[]string{"diagnose", "b-0", "-o", "yaml"}, 2, "", `bot diagnose: --output "yaml": want text or json`},
		{[]string{"explain"}, 2, "", "bot explain: missing FILE (use - for standard input)"},
		{[]string{"explain", "a", "b"}, 2, "", "bot explain: one FILE (use - for standard input) expected, got 2: a b"},
		{[]string{"repair", "-yes", "b-0"}, 2, "", "bot repair: unknown shorthand flag: 'y' in -yes"},
		{[]string{"escalation"}, 2, "", "bot escalation: missing list or clear"},
		{[]string{"escalation", "list", "x"}, 2, "", `bot escalation list: unexpected argument "x"`},
		{[]string{"demo", "x"}, 2, "", `bot demo: unexpected argument "x"`},
		{[]string{"explain", filepath.Join(t.TempDir(), "nope.log")}, 1, "", "bot explain: opening log file: open "},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if tt.stdout == "" && stdout != "" || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q, want %q", stdout, tt.stdout)
			}
			first, rest, _ := strings.Cut(stderr, "\n")
			if tt.stderrLine == "" && stderr != "" || !strings.HasPrefix(first, tt.stderrLine) {
				t.Errorf("stderr %q, want a first line %q", stderr, tt.stderrLine)
			}
			if tt.code == 2 && rest != fmt.Sprintf("See '%s --help' for usage.\n", strings.SplitN(first, ":", 2)[0]) {
				t.Errorf("a usage error is not one line and the --help pointer: %q", stderr)
			}
		})
	}
}

// TestServeHelpListsEveryEnvironmentVariable: bot serve --help is the
// configuration reference inside the container, where the README is not.
func TestServeHelpListsEveryEnvironmentVariable(t *testing.T) {
	code, stdout, _ := runCLI(t, "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	vars := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\|").FindAllStringSubmatch(config.MarkdownTable(), -1)
	if len(vars) < 30 {
		t.Fatalf("only %d variables in the table", len(vars))
	}
	for _, v := range vars {
		if !regexp.MustCompile(`(?m)^  ` + v[1] + `( \(default .*\))?$`).MatchString(stdout) {
			t.Errorf("bot serve --help does not list %s", v[1])
		}
	}
	for _, want := range []string{"  SWEEP_SCHEDULE (default @every 5m)", "robfig/cron spec for full health sweeps"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("bot serve --help lacks %q", want)
		}
	}
	if strings.Contains(stdout, "see the README") {
		t.Error("bot serve --help still sends the reader to the README")
	}
}

// TestClusterCommandsNameTheMissingKubeconfig: every subcommand that
// talks to a cluster, given a kubeconfig that is not there, names it and
// says what to do, exit 1, without client-go's KUBERNETES_MASTER advice.
func TestClusterCommandsNameTheMissingKubeconfig(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	t.Setenv("HOME", home)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	commands := [][]string{
		{"diagnose", "broker-0"}, {"repair", "broker-0", "--yes"},
		{"escalation", "list"}, {"escalation", "clear", "kafka/foobar", "--yes"},
	}
	sources := []struct {
		name  string
		env   string
		flags []string
		want  []string
	}{
		{"--kubeconfig", "", []string{"--kubeconfig", missing}, []string{"kubeconfig " + missing + " (--kubeconfig): no such file", "pass the path of an existing kubeconfig"}},
		{"KUBECONFIG", missing, nil, []string{"KUBECONFIG=" + missing + ": no such file", "set KUBECONFIG to an existing kubeconfig file, or pass --kubeconfig FILE"}},
		{"nothing", "", nil, []string{filepath.Join(home, ".kube", "config") + " does not exist", "pass --kubeconfig FILE or set KUBECONFIG"}},
	}
	for _, src := range sources {
		for _, c := range commands {
			t.Run(src.name+" "+strings.Join(c, " "), func(t *testing.T) {
				t.Setenv("KUBECONFIG", src.env)
				code, _, stderr := runCLI(t, append(slices.Clone(c), src.flags...)...)
				if code != 1 {
					t.Errorf("exit %d, want 1: %s", code, stderr)
				}
				for _, w := range src.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr %q lacks %q", stderr, w)
					}
				}
				if strings.Contains(stderr, "KUBERNETES_MASTER") {
					t.Errorf("stderr %q sends the user to KUBERNETES_MASTER", stderr)
				}
			})
		}
	}
}

// fakeAPIServer is a loopback HTTP server that answers every pod list
// with an empty list and records the paths asked for.
type fakeAPIServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	s := &fakeAPIServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeAPIServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.paths
	s.paths = nil
	slices.Sort(p)
	return slices.Compact(p)
}

// TestNamespaceFollowsKubectl checks on the wire which namespace
// `bot diagnose` and `bot escalation list` read: -n, else the kubeconfig
// context's namespace, else every namespace (-A: every namespace whatever
// the context says); --context switches context and with it the namespace.
func TestNamespaceFollowsKubectl(t *testing.T) {
	api := newFakeAPIServer(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: test-token}}]
contexts:
- {name: with-ns, context: {cluster: c, user: u, namespace: kafka-ctx}}
- {name: no-ns, context: {cluster: c, user: u}}
current-context: with-ns
`, api.URL)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)

	tests := []struct {
		args     []string
		path     string
		stderrIn string
		scope    string // KAFKA_NAMESPACES
	}{
		{[]string{"diagnose", "broker-0"}, "/api/v1/namespaces/kafka-ctx/pods", "namespace kafka-ctx is the kubeconfig context with-ns's; -n NAMESPACE or -A looks elsewhere", ""},
		{[]string{"diagnose", "broker-0", "-n", "kafka"}, "/api/v1/namespaces/kafka/pods", "not found", ""},
		{[]string{"diagnose", "broker-0", "-A"}, "/api/v1/pods", "not found", ""},
		{[]string{"diagnose", "broker-0", "--context", "no-ns"}, "/api/v1/pods", "not found", ""},
		{[]string{"repair", "broker-0", "--yes"}, "/api/v1/namespaces/kafka-ctx/pods", "namespace kafka-ctx is the kubeconfig context with-ns's", ""},
		{[]string{"repair", "broker-0", "--yes", "-n", "kafka"}, "/api/v1/namespaces/kafka/pods", "not found", ""},
		{[]string{"escalation", "list"}, "/apis/coordination.k8s.io/v1/namespaces/kafka-ctx/leases", "", ""},
		{[]string{"diagnose", "broker-0", "--kubeconfig", kubeconfig, "--context", "with-ns", "-n", "kafka-x"}, "/api/v1/namespaces/kafka-x/pods", "not found", ""},
		{[]string{"escalation", "list", "-A"}, "/apis/coordination.k8s.io/v1/leases", "", ""},
		{[]string{"escalation", "-n", "kafka", "list"}, "/apis/coordination.k8s.io/v1/namespaces/kafka/leases", "", ""},
		// A context namespace outside KAFKA_NAMESPACES is passed over for the whole scope.
		{[]string{"diagnose", "broker-0"}, "/api/v1/namespaces/kafka/pods", "not found", "kafka"},
		{[]string{"diagnose", "broker-0"}, "/api/v1/namespaces/kafka-ctx/pods", "context with-ns", "kafka,kafka-ctx"},
		{[]string{"escalation", "list"}, "/apis/coordination.k8s.io/v1/namespaces/kafka/leases", "", "kafka"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Setenv("KAFKA_NAMESPACES", tt.scope)
			_, _, stderr := runCLI(t, tt.args...)
			got := api.take()
			for _, p := range got {
				if p != tt.path && !strings.HasPrefix(p, tt.path+"/") {
					t.Errorf("request %s, want only %s and below", p, tt.path)
				}
			}
			if len(got) == 0 {
				t.Errorf("no request; want %s", tt.path)
			}
			if !strings.Contains(stderr, tt.stderrIn) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderrIn)
			}
		})
	}
}

// TestResolveNamespace is the rule itself, and the message it adds.
func TestResolveNamespace(t *testing.T) {
	conn := kube.Connection{Namespace: "kafka-ctx", Context: "prod"}
	tests := []struct {
		flags clusterFlags
		conn  kube.Connection
		scope []string // KAFKA_NAMESPACES
		want  target
	}{
		{clusterFlags{}, conn, nil, target{namespace: "kafka-ctx", fromContext: "prod"}},
		{clusterFlags{}, conn, []string{"kafka", "kafka-ctx"}, target{namespace: "kafka-ctx", fromContext: "prod"}},
		// A context namespace outside KAFKA_NAMESPACES could never match.
		{clusterFlags{}, kube.Connection{Namespace: "default", Context: "prod"}, []string{"kafka"}, target{}},
		{clusterFlags{namespace: "kafka"}, conn, nil, target{namespace: "kafka"}},
		{clusterFlags{namespace: "default"}, conn, []string{"kafka"}, target{namespace: "default"}},
		{clusterFlags{allNamespaces: true}, conn, nil, target{}},
		{clusterFlags{}, kube.Connection{Context: "dev"}, nil, target{}},
		{clusterFlags{}, kube.Connection{Source: "in-cluster"}, nil, target{}},
	}
	for _, tt := range tests {
		if got := tt.flags.resolve(tt.conn, tt.scope); got != tt.want {
			t.Errorf("%+v with %+v: %+v, want %+v", tt.flags, tt.conn, got, tt.want)
		}
	}
	notFound := errors.New("pod not found")
	if err := (target{namespace: "kafka"}).explain(notFound); err != notFound {
		t.Errorf("-n: the error was changed: %v", err)
	}
	if err := (target{namespace: "kafka-ctx", fromContext: "prod"}).explain(notFound); !errors.Is(err, notFound) || !strings.Contains(err.Error(), "context prod") {
		t.Errorf("context namespace: %v", err)
	}
}

// TestNoArgumentsIsServe: the Deployment runs the image without arguments.
func TestNoArgumentsIsServe(t *testing.T) {
	t.Setenv("SLACK_APP_TOKEN", "")
	code, _, stderr := runCLI(t)
	if code != 1 || !strings.HasPrefix(stderr, "bot serve: ") || !strings.Contains(stderr, "SLACK_APP_TOKEN: missing") {
		t.Errorf("bot with no arguments: exit %d, stderr %q; want bot serve's configuration error", code, stderr)
	}
}

// TestNoCobraTemplates: a cobra template (SetUsageTemplate,
// SetHelpTemplate, SetVersionTemplate) links text/template's execution,
// whose reflection keeps every exported method of every linked type: the
// shipped binary grew from 33.6 to 53.4 MB with one version template.
func TestNoCobraTemplates(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\.Set(Usage|Help|Version)Template\(`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := re.FindIndex(b); loc != nil {
			t.Errorf("%s calls %s: use cobra's default functions or SetHelpFunc/SetUsageFunc", f, b[loc[0]:loc[1]])
		}
	}
}
