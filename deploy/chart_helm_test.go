// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// Where the chart tests find Helm.
const (
	// envHelmBin is the Helm 3 binary (hack/test.sh sets it from
	// hack/build-helm.sh); Helm 4 is beside it, named helm4.
	envHelmBin = "HELM_BIN"
	// envSkipHelm, set to 1 off CI, turns "Helm not built" into a skip.
	envSkipHelm = "KAFKABOT_SKIP_HELM"
)

// helm is one real Helm binary built from the tools module's pins.
type helm struct {
	name string // "helm3" or "helm4"
	path string
	home string // HELM_*_HOME, a private temporary directory
}

// helms returns Helm 3 and Helm 4. When they are not built it fails the test
// with the command that builds them, or skips it with KAFKABOT_SKIP_HELM=1
// outside CI.
func helms(t *testing.T) []helm {
	t.Helper()
	bin := os.Getenv(envHelmBin)
	if bin == "" {
		root, err := testenv.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bash", filepath.Join(root, "hack", "build-helm.sh"), "--print-path").Output()
		if err != nil {
			t.Fatalf("hack/build-helm.sh --print-path: %v", err)
		}
		bin = strings.TrimSpace(string(out))
	}
	var found []helm
	for _, h := range []helm{{name: "helm3", path: bin}, {name: "helm4", path: filepath.Join(filepath.Dir(bin), "helm4")}} {
		if info, err := os.Stat(h.path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			msg := "no executable " + h.path + ": build Helm with `bash hack/build-helm.sh` (or run `bash hack/test.sh`)"
			if os.Getenv(testenv.EnvCI) != "true" && os.Getenv(envSkipHelm) == "1" {
				t.Skipf("skipping the chart test (%s=1): %s", envSkipHelm, msg)
			}
			t.Fatalf("%s, or set %s=1 to skip the chart tests locally", msg, envSkipHelm)
		}
		h.home = t.TempDir()
		found = append(found, h)
	}
	return found
}

// run runs helm with args and returns its stdout, its stderr and whether it
// exited 0. Helm's cache, config and data live in a private directory, so a
// test never reads or writes the user's.
func (h helm) run(t *testing.T, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	cmd := exec.Command(h.path, args...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + h.home,
		"HELM_CACHE_HOME=" + filepath.Join(h.home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(h.home, "config"),
		"HELM_DATA_HOME=" + filepath.Join(h.home, "data"),
		// No cluster unless a test passes --kubeconfig.
		"KUBECONFIG=" + filepath.Join(h.home, "no-kubeconfig"),
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		if _, exited := err.(*exec.ExitError); !exited {
			t.Fatalf("running %s: %v", h.name, err)
		}
	}
	return out.String(), errOut.String(), err == nil
}
