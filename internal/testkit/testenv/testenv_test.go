// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// childEnv makes the test binary act as a test process that starts a
// control plane and then hangs, for TestControlPlaneDiesWithTheTestBinary.
const childEnv = "KAFKABOT_TESTENV_REAPER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runHangingChild())
	}
	os.Exit(Main(m))
}

// runHangingChild starts a control plane, prints its process groups and
// blocks until killed.
func runHangingChild() int {
	if _, err := startEnv(); err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	groups, err := controlPlaneGroups(os.Getpid())
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	var ids []string
	for _, g := range groups {
		ids = append(ids, strconv.Itoa(g))
	}
	fmt.Println("CONTROL-PLANE", strings.Join(ids, " "))
	select {}
}

// TestControlPlaneDiesWithTheTestBinary kills a test process that runs a
// control plane, the way `go test -timeout` or a CI job cancellation does
// (no deferred Stop runs), and checks that its etcd and kube-apiserver do
// not outlive it.
func TestControlPlaneDiesWithTheTestBinary(t *testing.T) {
	requireAssets(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var groups []int
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "CONTROL-PLANE "); ok {
			for _, f := range strings.Fields(rest) {
				g, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				groups = append(groups, g)
			}
			break
		}
		if strings.HasPrefix(lines.Text(), "ERROR") {
			t.Fatalf("child: %s", lines.Text())
		}
	}
	if len(groups) != 2 {
		t.Fatalf("child reported control-plane process groups %v, want etcd's and kube-apiserver's", groups)
	}
	for _, g := range groups {
		if !alive(g) {
			t.Fatalf("process %d is not running before the kill", g)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, g := range groups {
		WaitFor(t, fmt.Sprintf("control-plane process %d to exit", g), func(context.Context) (bool, error) {
			return !alive(g), nil
		})
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	end := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data)[end+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// requireAssets applies Start's policy for missing binaries to tests that
// start control planes by other means.
func requireAssets(t *testing.T) {
	t.Helper()
	if _, err := AssetsDir(); err != nil {
		if skipAllowed() {
			t.Skipf("skipping real-apiserver test (%s=1): %v", EnvSkip, err)
		}
		t.Fatal(err)
	}
}

func TestStartInstallsDeployRBAC(t *testing.T) {
	env := Start(t)
	ctx := t.Context()
	if _, err := env.Clientset.CoreV1().ServiceAccounts(BotNamespace).Get(ctx, BotServiceAccount, metav1.GetOptions{}); err != nil {
		t.Errorf("the bot's ServiceAccount is not installed: %v", err)
	}
	ns := env.KafkaNamespace(t, "kafka-testenv", nil)
	if _, err := env.Clientset.RbacV1().RoleBindings(ns).Get(ctx, "kafka-bot", metav1.GetOptions{}); err != nil {
		t.Errorf("the per-namespace RoleBinding is not installed in %s: %v", ns, err)
	}
	if _, err := env.Clientset.RbacV1().RoleBindings(KafkaNamespacePlaceholder).Get(ctx, "kafka-bot", metav1.GetOptions{}); err == nil {
		t.Errorf("the placeholder namespace %q got a RoleBinding: only namespaces a test asks for should", KafkaNamespacePlaceholder)
	}
	if got := env.BotConfig().Impersonate.UserName; got != BotUserName {
		t.Errorf("BotConfig impersonates %q, want %q", got, BotUserName)
	}
	if env.Config.Impersonate.UserName != "" {
		t.Error("BotConfig changed the admin config")
	}
}

func TestCacheDirMatchesBuildScript(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command("bash", filepath.Join(root, buildScript), "--print-dir").Output()
	if err != nil {
		t.Fatalf("%s --print-dir: %v", buildScript, err)
	}
	got, err := CacheDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Errorf("CacheDir = %s, build script uses %s", got, want)
	}
}

func TestAssetsDirExplainsMissingBinaries(t *testing.T) {
	t.Setenv(EnvAssets, t.TempDir())
	_, err := AssetsDir()
	if err == nil || !strings.Contains(err.Error(), buildScript) {
		t.Fatalf("AssetsDir() error = %v, want one naming %s", err, buildScript)
	}
}

func TestSkipAllowed(t *testing.T) {
	tests := []struct {
		ci, skip string
		want     bool
	}{
		{"", "", false},
		{"", "1", true},
		{"true", "1", false},
		{"true", "", false},
		{"", "yes", false},
	}
	for _, tt := range tests {
		t.Setenv(EnvCI, tt.ci)
		t.Setenv(EnvSkip, tt.skip)
		if got := skipAllowed(); got != tt.want {
			t.Errorf("CI=%q %s=%q: skipAllowed = %v, want %v", tt.ci, EnvSkip, tt.skip, got, tt.want)
		}
	}
}

func TestDecodeManifests(t *testing.T) {
	const doc = `# leading comment
apiVersion: v1
kind: ServiceAccount
metadata: {name: a, namespace: x}
---
# a document with only a comment
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: b, namespace: x}
rules: []
`
	objs, err := DecodeManifests([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var got []schema.GroupVersionKind
	for _, o := range objs {
		got = append(got, o.GroupVersionKind())
	}
	want := []schema.GroupVersionKind{
		{Version: "v1", Kind: "ServiceAccount"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	if _, err := DecodeManifests([]byte("metadata: {name: x}\n")); err == nil {
		t.Error("a document without kind was accepted")
	}
}

func TestLoadManifestsSplitsByNamespace(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifests(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range m.PerKafkaNamespace {
		if o.GetNamespace() != KafkaNamespacePlaceholder {
			t.Errorf("%s %s is in %q, not the placeholder", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	moved := m.ForKafkaNamespace("kafka-east")
	if len(moved) != len(m.PerKafkaNamespace) {
		t.Fatalf("ForKafkaNamespace returned %d objects, want %d", len(moved), len(m.PerKafkaNamespace))
	}
	for i, o := range moved {
		if o.GetNamespace() != "kafka-east" {
			t.Errorf("%s %s moved to %q", o.GetKind(), o.GetName(), o.GetNamespace())
		}
		if m.PerKafkaNamespace[i].GetNamespace() != KafkaNamespacePlaceholder {
			t.Error("ForKafkaNamespace changed the loaded manifests")
		}
	}
	for _, o := range m.Shared {
		if o.GetKind() == "Deployment" || o.GetKind() == "Secret" {
			t.Errorf("%s %s would be installed: the harness installs identity, RBAC and admission only", o.GetKind(), o.GetName())
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line       string
		comm       string
		ppid, pgrp int
		ok         bool
	}{
		{"4242 (etcd) S 100 4242 100 0 -1", "etcd", 100, 4242, true},
		{"77 (kube-apiserver) R 1 77 1 0", "kube-apiserver", 1, 77, true},
		{"9 (a (weird) name) S 3 9 3", "a (weird) name", 3, 9, true},
		{"garbage", "", 0, 0, false},
		{"9 (x) S notanumber 9", "", 0, 0, false},
	}
	for _, tt := range tests {
		comm, ppid, pgrp, ok := parseStat(tt.line)
		if comm != tt.comm || ppid != tt.ppid || pgrp != tt.pgrp || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q %d %d %v, want %q %d %d %v", tt.line, comm, ppid, pgrp, ok, tt.comm, tt.ppid, tt.pgrp, tt.ok)
		}
	}
}
