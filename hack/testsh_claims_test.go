// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package hack_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCINeverSkipsTheRealNodeStage backs README's "with CI=true it cannot be
// skipped": hack/test.sh refuses REALNODE=skip under CI=true at once, before
// it installs, builds or tests anything. Were the refusal gone (or back at
// the end of the script), the script would start the whole run: the
// deadline stops it and the test fails.
func TestCINeverSkipsTheRealNodeStage(t *testing.T) {
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "test.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CI=true", "REALNODE=skip")
	// The script's children (apt-get, builds, go test) die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("hack/test.sh with CI=true REALNODE=skip was still running after %v: it started the run instead of refusing\n%s", took, out)
	}
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != 1 {
		t.Fatalf("hack/test.sh with CI=true REALNODE=skip: %v, want exit status 1\n%s", err, out)
	}
	if want := "REALNODE=skip is not allowed with CI=true"; !strings.Contains(string(out), want) {
		t.Errorf("output does not say %q:\n%s", want, out)
	}
	if lines := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; lines != 1 {
		t.Errorf("hack/test.sh did work before refusing (%d lines of output):\n%s", lines, out)
	}
}
