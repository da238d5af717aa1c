// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package catalog

import (
	"os"
	"strings"
	"testing"
)

func mustLoad(t testing.TB) *Catalog {
	t.Helper()
	c, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// TestLoadSanity: the embedded catalogue loads, is thousands of templates
// from many releases, and every template has the fields it must have.
func TestLoadSanity(t *testing.T) {
	c := mustLoad(t)
	if c.Size() < 5000 {
		t.Errorf("catalogue has %d templates, want thousands", c.Size())
	}
	kafka := 0
	for _, r := range c.Releases {
		if r.Product == "kafka" {
			kafka++
		}
		if r.Name == "" || r.Product == "" {
			t.Errorf("release %+v: name and product are required", r)
		}
	}
	if kafka < 8 {
		t.Errorf("%d Kafka releases, want at least 8", kafka)
	}
	kinds := map[string]int{}
	for _, tp := range c.Templates {
		kinds[tp.Kind]++
		if tp.ID == "" || tp.Text == "" || len(tp.Versions) == 0 {
			t.Fatalf("template %+v: id, text and versions are required", tp)
		}
		if tp.Source.Repo == "" || tp.Source.Version == "" || tp.Source.File == "" {
			t.Fatalf("template %s: provenance %+v is incomplete", tp.ID, tp.Source)
		}
		if strings.Contains(tp.Text, Placeholder+Placeholder) {
			t.Errorf("template %s: adjacent placeholders in %q", tp.ID, tp.Text)
		}
	}
	for _, k := range []string{KindThrow, KindRequire, KindLogError, KindLogFatal, KindFault} {
		if kinds[k] == 0 {
			t.Errorf("no template of kind %s", k)
		}
	}
	if c2, _ := Load(); c2 != c {
		t.Error("Load parsed the data twice")
	}
	for _, i := range []int{0, c.Size() / 2, c.Size() - 1} {
		if got := c.Lookup(c.Templates[i].ID); got != c.Templates[i] {
			t.Errorf("Lookup(%s) = %v, want template %d", c.Templates[i].ID, got, i)
		}
	}
	if c.Lookup("no-such-id") != nil {
		t.Error("Lookup found an id that is not there")
	}
}

// TestClassesExist: every class the mapping gives is a class of the rules
// file (internal/diagnose/testdata/failure-class-ids.txt plus rules.yaml's
// class ids), so the mapping invents none.
func TestClassesExist(t *testing.T) {
	raw, err := os.ReadFile("../rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"- id: ", "class: "} {
			if strings.HasPrefix(line, p) {
				known[strings.TrimSpace(strings.TrimPrefix(line, p))] = true
			}
		}
	}
	for _, o := range origins {
		if o.Defers != (o.Class == "") {
			t.Errorf("origin %+v: a terminal event (Defers) has no class, every other entry has one", o)
		}
		if o.Class != "" && !known[o.Class] {
			t.Errorf("origin %+v: class %q is not in rules.yaml", o, o.Class)
		}
		if o.Why == "" {
			t.Errorf("origin %+v: no reason given", o)
		}
	}
	for _, c := range osCauses {
		if !known[c.Class] {
			t.Errorf("OS cause %q: class %q is not in rules.yaml", c.Text, c.Class)
		}
	}
	for id, h := range handClasses {
		if h.Class != "" && !known[h.Class] {
			t.Errorf("hand-listed template %s: class %q is not in rules.yaml", id, h.Class)
		}
	}
}

// TestReportMatchesData: docs/CATALOGUE.md is what Report renders from the
// embedded data (regenerate with go run ./hack/catalog -report-only).
func TestReportMatchesData(t *testing.T) {
	c := mustLoad(t)
	got, err := os.ReadFile("../../../docs/CATALOGUE.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := Report(c); string(got) != want {
		t.Errorf("docs/CATALOGUE.md is stale: run go run ./hack/catalog -report-only")
	}
}

func TestFromFileRejectsBadData(t *testing.T) {
	good := func() *File {
		return &File{Schema: SchemaVersion, Releases: []Release{{Name: "1.0.0", Product: "kafka"}},
			Templates: []FileTemplate{{ID: "a", Text: "Something failed for {}", Kind: KindThrow, In: []int{0}}}}
	}
	if _, err := FromFile(good()); err != nil {
		t.Fatalf("good file: %v", err)
	}
	tests := []struct {
		name string
		edit func(*File)
		want string
	}{
		{"schema", func(f *File) { f.Schema = 99 }, "schema 99"},
		{"release index", func(f *File) { f.Templates[0].In = []int{3} }, "out of range"},
		{"duplicate id", func(f *File) { f.Templates = append(f.Templates, f.Templates[0]) }, "duplicate id"},
		{"no text", func(f *File) { f.Templates[0].Text = "" }, "required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := good()
			tc.edit(f)
			_, err := FromFile(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
