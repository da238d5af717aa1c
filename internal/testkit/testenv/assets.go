// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables the harness reads.
const (
	// EnvAssets names a directory holding kube-apiserver and etcd; it wins
	// over the build cache (it is also what envtest itself reads).
	EnvAssets = "KUBEBUILDER_ASSETS"
	// EnvSkip, set to 1 on a developer machine, turns "binaries missing"
	// into a skip instead of a failure. It is ignored in CI.
	EnvSkip = "KAFKABOT_SKIP_APISERVER"
	// EnvCI is set to true by CI systems; there a missing control plane
	// always fails.
	EnvCI = "CI"
)

const modulePath = "github.com/kafka-chatops/kafkabot"

// buildScript is the script that builds the control plane, relative to the
// repository root.
const buildScript = "hack/build-control-plane.sh"

// errMissingBinaries is wrapped by AssetsDir's error when kube-apiserver or
// etcd is not where it should be.
var errMissingBinaries = errors.New("control-plane binaries not found")

// RepoRoot walks up from the working directory to the directory holding
// this project's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding repository root: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isModule(data, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("finding repository root: no go.mod for module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func isModule(goMod []byte, path string) bool {
	for line := range strings.Lines(string(goMod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == path
		}
	}
	return false
}

// CacheDir is where hack/build-control-plane.sh puts the binaries for the
// pins currently in hack/tools: .cache/control-plane/<hash of go.mod and
// go.sum>. It must compute the same hash as the script.
func CacheDir(repoRoot string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, "hack", "tools", name))
		if err != nil {
			return "", fmt.Errorf("reading control-plane pins: %w", err)
		}
		h.Write(data)
	}
	return filepath.Join(repoRoot, ".cache", "control-plane", hex.EncodeToString(h.Sum(nil))[:16]), nil
}

// AssetsDir returns the directory holding kube-apiserver and etcd:
// $KUBEBUILDER_ASSETS when set, else the build cache for the current pins.
// The error wraps errMissingBinaries, and says how to build them, when
// either binary is absent.
func AssetsDir() (string, error) {
	dir := os.Getenv(EnvAssets)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		if dir, err = CacheDir(root); err != nil {
			return "", err
		}
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		info, err := os.Stat(filepath.Join(dir, bin))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return dir, fmt.Errorf("%w: no executable %s in %s; build them with `bash %s` "+
				"(or run the whole suite with `bash hack/test.sh`), or set %s=1 to skip these tests locally",
				errMissingBinaries, bin, dir, buildScript, EnvSkip)
		}
	}
	return dir, nil
}

// skipAllowed reports whether a missing control plane may skip tests
// instead of failing them: only off CI and only when explicitly asked.
func skipAllowed() bool {
	return os.Getenv(EnvCI) != "true" && os.Getenv(EnvSkip) == "1"
}
