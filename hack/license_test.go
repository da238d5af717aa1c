// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package hack_test tests the repository's scripts: the license headers, the
// version sources and the release (release_test.go).
package hack_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// Header lines hack/license-headers.sh adds.
const (
	spdxGo   = "// SPDX-License-Identifier: Apache-2.0"
	spdxSh   = "# SPDX-License-Identifier: Apache-2.0"
	headerGo = spdxGo + "\n// Copyright 2026 The kafkabot Authors\n\n"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// copyTree copies the repository's tracked and untracked Go and shell
// files (what the script looks at) into a new directory, not a git
// checkout.
func copyTree(t *testing.T, root string) (dir string, files []string) {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.go", "*.sh").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir = t.TempDir()
	for _, f := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return dir, files
}

func runScript(t *testing.T, root string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(root, "hack", "license-headers.sh")}, args...)...)
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// TestLicenseHeaderScriptOnACopyOfTheTree runs hack/license-headers.sh on a
// copy of this tree: --check lists a file without the header and fails; the
// script adds the header to every Go and shell file outside testdata/, after
// a #! line, before a build constraint, never merged into a package doc
// comment; a second run changes nothing; the Go files still parse as the
// same package with the same build constraints; --check then passes.
func TestLicenseHeaderScriptOnACopyOfTheTree(t *testing.T) {
	root := repoRoot(t)
	dir, files := copyTree(t, root)
	// A file without the header, and one with a build constraint.
	if err := os.WriteFile(filepath.Join(dir, "no_header.go"), []byte("// Package x is a test.\npackage x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tagged.go"), []byte("//go:build linux\n\npackage x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, "no_header.go", "tagged.go")

	out, ok := runScript(t, root, "--check", dir)
	if ok || !strings.Contains(out, "no_header.go") {
		t.Fatalf("--check passed or did not name no_header.go:\n%s", out)
	}
	if out, ok := runScript(t, root, dir); !ok {
		t.Fatalf("the script failed:\n%s", out)
	}
	before := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = data
		if strings.Contains("/"+f, "/testdata/") {
			continue
		}
		text := string(data)
		switch {
		case strings.HasSuffix(f, ".go"):
			if !strings.HasPrefix(text, headerGo) {
				t.Errorf("%s does not start with the header and a blank line:\n%.200s", f, text)
			}
		case strings.HasPrefix(text, "#!"):
			lines := strings.SplitN(text, "\n", 3)
			if len(lines) < 3 || lines[1] != spdxSh {
				t.Errorf("%s: the header does not follow the #! line:\n%.200s", f, text)
			}
		default:
			if !strings.HasPrefix(text, spdxSh+"\n") {
				t.Errorf("%s does not start with the header:\n%.200s", f, text)
			}
		}
	}
	if got := string(before["tagged.go"]); got != headerGo+"//go:build linux\n\npackage x\n" {
		t.Errorf("tagged.go became:\n%s", got)
	}
	if out, ok := runScript(t, root, "--check", dir); !ok {
		t.Errorf("--check fails after the script ran:\n%s", out)
	}
	if out, ok := runScript(t, root, dir); !ok || !strings.Contains(out, "added the header to 0 file(s)") {
		t.Errorf("a second run: %s", out)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, before[f]) {
			t.Errorf("a second run changed %s", f)
		}
	}
	// Modes are kept: scripts stay executable.
	for _, f := range files {
		if !strings.HasSuffix(f, ".sh") {
			continue
		}
		orig, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			continue
		}
		got, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if orig.Mode().Perm() != got.Mode().Perm() {
			t.Errorf("%s: mode %v, was %v", f, got.Mode().Perm(), orig.Mode().Perm())
		}
	}
	// The copied Go still builds package by package as before: gofmt
	// accepts every file (the header is a comment block, not a syntax
	// change).
	if out, err := exec.Command("gofmt", "-l", dir).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("gofmt -l after the script: %v\n%s", err, out)
	}
}
