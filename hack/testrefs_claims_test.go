// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package hack_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testRef is a test function named in backquotes in a Markdown file:
// `TestName`, or `TestPrefix_*` for every test whose name starts so.
var testRef = regexp.MustCompile("`(Test[A-Za-z0-9_]*\\*?)`")

// missingTestRefs returns "file:line: `Name`" for every test reference in
// the Markdown text doc (named file) that no function of tests matches: an
// exact name must be a test function, a name ending in * must be the prefix
// of at least one.
func missingTestRefs(file, doc string, tests map[string]bool) []string {
	var missing []string
	for i, line := range strings.Split(doc, "\n") {
		for _, m := range testRef.FindAllStringSubmatch(line, -1) {
			if !testExists(m[1], tests) {
				missing = append(missing, fmt.Sprintf("%s:%d: `%s`", file, i+1, m[1]))
			}
		}
	}
	return missing
}

func testExists(ref string, tests map[string]bool) bool {
	prefix, wildcard := strings.CutSuffix(ref, "*")
	if !wildcard {
		return tests[ref]
	}
	for name := range tests {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// testFunctions parses every _test.go file of the tree, whatever its build
// tags (the real-node tests carry `realnode`), and returns the names of its
// top-level test functions.
func testFunctions(t *testing.T, root string) map[string]bool {
	t.Helper()
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range gitFiles(t, root, "*_test.go") {
		file, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", f, err)
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	return tests
}

// gitFiles lists the tree's tracked and untracked files matching pattern,
// outside testdata/, leaving out files deleted in the work tree.
func gitFiles(t *testing.T, root, pattern string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", pattern).Output()
	if err != nil {
		t.Fatalf("git ls-files %s: %v", pattern, err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if slices.Contains(strings.Split(f, "/"), "testdata") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	return files
}

// TestDocsNameOnlyTestsThatExist fails when README.md or another Markdown
// file of the tree names a test function (`TestX`, or `TestX_*` for a
// family) that no _test.go file defines, so the documents' "this test shows
// it" stays true when a test is renamed or removed.
func TestDocsNameOnlyTestsThatExist(t *testing.T) {
	root := repoRoot(t)
	tests := testFunctions(t, root)
	docs := gitFiles(t, root, "*.md")
	if !slices.Contains(docs, "README.md") {
		t.Fatalf("README.md not among the Markdown files: %v", docs)
	}
	refs := 0
	for _, f := range docs {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		refs += len(testRef.FindAllString(string(data), -1))
		for _, m := range missingTestRefs(f, string(data), tests) {
			t.Errorf("%s names a test that does not exist", m)
		}
	}
	if refs == 0 {
		t.Fatal("no test references found in the Markdown files: is the pattern still right?")
	}
}

// TestMissingTestRefs shows the check above can fail: a renamed test, a
// family with no member, and what it must accept.
func TestMissingTestRefs(t *testing.T) {
	tests := map[string]bool{"TestContainment1_Debug": true, "TestSafety04_Go": true}
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"exact name exists", "shown by `TestSafety04_Go`.", nil},
		{"family has a member", "`TestContainment1_*` there", nil},
		{"renamed test", "line one\nsee `TestSafety04_GoSignal`", []string{"R.md:2: `TestSafety04_GoSignal`"}},
		{"family without member", "`TestContainment9_*`", []string{"R.md:1: `TestContainment9_*`"}},
		{"prefix is not a name", "`TestSafety04`", []string{"R.md:1: `TestSafety04`"}},
		{"two on one line", "`TestSafety04_Go` and `TestNope`", []string{"R.md:1: `TestNope`"}},
		{"not backquoted", "TestNope in prose", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := missingTestRefs("R.md", c.doc, tests); !slices.Equal(got, c.want) {
				t.Errorf("missingTestRefs(%q) = %q, want %q", c.doc, got, c.want)
			}
		})
	}
}
