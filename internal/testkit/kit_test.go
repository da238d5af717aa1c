// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testkit

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the module path of this repository (go.mod).
const module = "github.com/kafka-chatops/kafkabot"

// kit are the import-path prefixes of the test and demo kit: this folder and
// the test trees (test/bench/benchreport among them).
var kit = []string{module + "/internal/testkit", module + "/test"}

// allowed are the product files that may import a kit package, each with
// the one package it may import: `bot demo`'s wiring, which the shipped
// build (-tags nodemo) leaves out.
var allowed = map[string]string{
	"cmd/bot/demo.go": module + "/internal/testkit/demo",
}

// TestProductDoesNotImportTheKit: no product file (a non-test Go file under
// cmd/ or under internal/ outside internal/testkit) imports a package of
// the kit, whatever its build tags, except the files in allowed; and each
// allowance is still in use, so that the list cannot go stale.
func TestProductDoesNotImportTheKit(t *testing.T) {
	root := filepath.Join("..", "..")
	violations, used, err := kitImports(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Errorf("product code imports the test kit: %s", v)
	}
	for file, pkg := range allowed {
		if !used[file] {
			t.Errorf("%s no longer imports %s: drop it from allowed", file, pkg)
		}
	}
}

// TestKitImportsAreFound: kitImports reports a product file that imports
// the kit, and only that file, on a small tree of its own.
func TestKitImportsAreFound(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"cmd/bot/demo.go":                 "package main\nimport _ \"" + module + "/internal/testkit/demo\"\n",
		"cmd/bot/main.go":                 "package main\nimport _ \"" + module + "/internal/serve\"\n",
		"internal/serve/serve.go":         "package serve\nimport _ \"" + module + "/internal/testkit/slackemu\"\n",
		"internal/serve/serve_test.go":    "package serve\nimport _ \"" + module + "/internal/testkit/testenv\"\n",
		"internal/kube/kube.go":           "//go:build linux\n\npackage kube\nimport _ \"" + module + "/test/bench/benchreport\"\n",
		"internal/testkit/demo/d.go":      "package demo\nimport _ \"" + module + "/internal/testkit/kubesim\"\n",
		"internal/diagnose/testdata/x.go": "package x\nimport _ \"" + module + "/internal/testkit/fakeapi\"\n",
	}
	for name, src := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	violations, used, err := kitImports(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"internal/kube/kube.go imports " + module + "/test/bench/benchreport",
		"internal/serve/serve.go imports " + module + "/internal/testkit/slackemu",
	}
	if !slices.Equal(violations, want) {
		t.Errorf("violations = %q, want %q", violations, want)
	}
	if !used["cmd/bot/demo.go"] {
		t.Error("the allowed import of cmd/bot/demo.go was not seen")
	}
}

// kitImports parses the imports of every non-test Go file of the product
// under root (all of them, whatever their build constraints) and returns
// each import of a kit package that allowed does not grant ("file imports
// path", sorted, file relative to root), and the allowed files whose
// allowance was used.
func kitImports(root string) (violations []string, used map[string]bool, err error) {
	used = map[string]bool{}
	fset := token.NewFileSet()
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				// As the go command: testdata and names starting with . or _
				// hold no packages; the kit itself may import the kit.
				name := d.Name()
				if rel == "internal/testkit" || name == "testdata" ||
					(path != filepath.Join(root, top) && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"))) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return fmt.Errorf("parsing %s: %w", rel, err)
			}
			for _, spec := range f.Imports {
				imp, err := strconv.Unquote(spec.Path.Value)
				if err != nil {
					return fmt.Errorf("%s: import %s: %w", rel, spec.Path.Value, err)
				}
				if !inKit(imp) {
					continue
				}
				if allowed[rel] == imp {
					used[rel] = true
					continue
				}
				violations = append(violations, rel+" imports "+imp)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading the product's imports under %s: %w", top, err)
		}
	}
	slices.Sort(violations)
	return violations, used, nil
}

// inKit reports whether the import path is a package of the kit.
func inKit(imp string) bool {
	return slices.ContainsFunc(kit, func(prefix string) bool {
		return imp == prefix || strings.HasPrefix(imp, prefix+"/")
	})
}
