// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Versions are the Kafka release lines the lab records, oldest first (the
// pins of hack/kafka/versions.txt).
var Versions = []string{"3.7.2", "3.9.2", "4.0.2", "4.4.0"}

// NewestVersion is the release the CI subset runs on.
const NewestVersion = "4.4.0"

// Install is one fetched Kafka release: Dir holds libs/, run.sh and java
// (hack/fetch-kafka.sh's layout).
type Install struct {
	Version string
	Dir     string
}

// ZooKeeperMode reports whether the release still has ZooKeeper mode
// (and ships the ZooKeeper server in its libs): the 3.x lines.
func (in Install) ZooKeeperMode() bool { return strings.HasPrefix(in.Version, "3.") }

// RunScript is the install's run.sh (`run.sh CLASS ARGS...`).
func (in Install) RunScript() string { return filepath.Join(in.Dir, "run.sh") }

// Keytool is the keytool of the JDK the install runs on.
func (in Install) Keytool() (string, error) {
	java, err := filepath.EvalSymlinks(filepath.Join(in.Dir, "java"))
	if err != nil {
		return "", fmt.Errorf("kafka %s: java: %w", in.Version, err)
	}
	return filepath.Join(filepath.Dir(java), "keytool"), nil
}

// JavaVersion is the first line of `java -version` of the install.
func (in Install) JavaVersion() (string, error) {
	out, err := exec.Command(filepath.Join(in.Dir, "java"), "-version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("kafka %s: java -version: %w: %s", in.Version, err, out)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(first), nil
}

// RepoRoot is the module root above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("repo root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repo root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Fetch runs `bash hack/fetch-kafka.sh VERSION` (which reuses a fetched
// copy without asking Maven) and returns the install.
func Fetch(version string) (Install, error) {
	root, err := RepoRoot()
	if err != nil {
		return Install{}, err
	}
	cmd := exec.Command("bash", filepath.Join(root, "hack", "fetch-kafka.sh"), version)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Install{}, fmt.Errorf("hack/fetch-kafka.sh %s: %w: %s", version, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) != 2 || fields[0] != version {
		return Install{}, fmt.Errorf("hack/fetch-kafka.sh %s printed %q, want \"%s <dir>\"", version, out, version)
	}
	// The real path: .cache may be a symlink through a directory that a
	// recipe's non-root user cannot enter.
	dir, err := filepath.EvalSymlinks(fields[1])
	if err != nil {
		return Install{}, fmt.Errorf("kafka %s: %w", version, err)
	}
	in := Install{Version: version, Dir: dir}
	if _, err := os.Stat(in.RunScript()); err != nil {
		return Install{}, fmt.Errorf("kafka %s: %w", version, err)
	}
	return in, nil
}
