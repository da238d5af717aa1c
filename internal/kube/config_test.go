// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twoContexts is a kubeconfig with two contexts: "one" (current, no
// namespace) and "two" (namespace kafka-two), on different servers.
const twoContexts = `apiVersion: v1
kind: Config
clusters:
- {name: c1, cluster: {server: "https://127.0.0.1:6441"}}
- {name: c2, cluster: {server: "https://127.0.0.1:6442"}}
users: [{name: u, user: {token: test-token}}]
contexts:
- {name: one, context: {cluster: c1, user: u}}
- {name: two, context: {cluster: c2, user: u, namespace: kafka-two}}
current-context: one
`

// otherFile is a second kubeconfig whose current context names a namespace.
const otherFile = `apiVersion: v1
kind: Config
clusters: [{name: c3, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: test-token}}]
contexts: [{name: three, context: {cluster: c3, user: u, namespace: kafka-three}}]
current-context: three
`

const noCurrentContext = `apiVersion: v1
kind: Config
clusters: [{name: c1, cluster: {server: "https://127.0.0.1:6441"}}]
users: [{name: u, user: {token: test-token}}]
contexts: [{name: one, context: {cluster: c1, user: u}}]
`

func TestLoadConnection(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", twoContexts)
	other := write("other", otherFile)
	garbage := write("garbage", "clusters: [this is: not, a kubeconfig\n")
	nocur := write("nocurrent", noCurrentContext)
	missing := filepath.Join(dir, "missing")
	home := t.TempDir() // no .kube/config in it
	homeWithConfig := t.TempDir()
	if err := os.MkdirAll(filepath.Join(homeWithConfig, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(homeWithConfig, ".kube", "config"), []byte(otherFile), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		home    string
		env     string
		flags   ConfigFlags
		server  string // wanted REST host
		ns      string // wanted context namespace
		wantErr []string
	}{
		{name: "KUBECONFIG current context", home: home, env: good, server: "https://127.0.0.1:6441"},
		{name: "--context picks server and namespace", home: home, env: good, flags: ConfigFlags{Context: "two"}, server: "https://127.0.0.1:6442", ns: "kafka-two"},
		{name: "--kubeconfig replaces KUBECONFIG", home: home, env: good, flags: ConfigFlags{Kubeconfig: other}, server: "https://127.0.0.1:6443", ns: "kafka-three"},
		{name: "KUBECONFIG list skips a missing file", home: home, env: missing + string(os.PathListSeparator) + good, server: "https://127.0.0.1:6441"},
		{name: "KUBECONFIG list merges, first current-context wins", home: home, env: good + string(os.PathListSeparator) + other, flags: ConfigFlags{Context: "three"}, server: "https://127.0.0.1:6443", ns: "kafka-three"},
		{name: "~/.kube/config when nothing is given", home: homeWithConfig, server: "https://127.0.0.1:6443", ns: "kafka-three"},

		{name: "--kubeconfig missing", home: homeWithConfig, flags: ConfigFlags{Kubeconfig: missing},
			wantErr: []string{"kubeconfig " + missing + " (--kubeconfig): no such file", "pass the path of an existing kubeconfig file"}},
		{name: "--kubeconfig is a directory", home: home, flags: ConfigFlags{Kubeconfig: dir},
			wantErr: []string{"kubeconfig " + dir + ": cannot read it", "is a directory"}},
		{name: "--kubeconfig is not a kubeconfig", home: home, flags: ConfigFlags{Kubeconfig: garbage},
			wantErr: []string{"kubeconfig " + garbage + ": not a valid kubeconfig"}},
		{name: "KUBECONFIG names only missing files", home: homeWithConfig, env: missing,
			wantErr: []string{"KUBECONFIG=" + missing + ": no such file", "pass --kubeconfig FILE"}},
		{name: "nothing at all, not a pod", home: home,
			wantErr: []string{filepath.Join(home, ".kube", "config") + " does not exist", "KUBECONFIG is not set", "pass --kubeconfig FILE or set KUBECONFIG"}},
		{name: "--context without any kubeconfig", home: home, flags: ConfigFlags{Context: "two"},
			wantErr: []string{"--context two: there is no kubeconfig", "pass --kubeconfig FILE"}},
		{name: "unknown context", home: home, env: good, flags: ConfigFlags{Context: "prod"},
			wantErr: []string{"KUBECONFIG=" + good, `context "prod" does not exist`, "contexts: one, two"}},
		{name: "no current-context", home: home, env: nocur,
			wantErr: []string{"no current-context is set", "pass --context NAME (contexts: one)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", tt.home)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			t.Setenv("KUBERNETES_SERVICE_PORT", "")
			c, err := LoadConnection(tt.env, tt.flags)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("LoadConnection = %+v, want an error", c)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "KUBERNETES_MASTER") {
					t.Errorf("error %q sends the user to KUBERNETES_MASTER", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConnection: %v", err)
			}
			if c.REST.Host != tt.server || c.Namespace != tt.ns {
				t.Errorf("server %s, namespace %q; want %s, %q", c.REST.Host, c.Namespace, tt.server, tt.ns)
			}
		})
	}
}

// TestRESTConfigNamesTheMissingFile is what `bot serve` sees with a wrong
// KUBECONFIG: the file is named, and client-go's KUBERNETES_MASTER advice
// is not given.
func TestRESTConfigNamesTheMissingFile(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := RESTConfig(missing)
	if err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "KUBERNETES_MASTER") {
		t.Fatalf("RESTConfig(%s) = %v; want an error naming the file", missing, err)
	}
}
