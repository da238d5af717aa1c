// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"encoding/binary"
	"testing"
)

// Script lines written for this test, in the style of start scripts.
func TestExtractScript(t *testing.T) {
	src := `#!/bin/bash
# error "a comment"
if [ -z "$CLASSPATH" ]; then
  echo "Classpath is empty in ${BASE_DIR}/libs" >&2
  exit 1
fi
echo "Starting broker $ID"
error "Cannot find keystore at $KEYSTORE_DIR/kafka.jks"
exit 1
print_validation_error "The port $PORT is used twice"
warn "Deprecated setting $X"
`
	got := extractScript("bin/start.sh", src, "test:start.sh")
	want := []site{
		{Kind: "script", Thrower: "test:start.sh", Text: "Classpath is empty in {}/libs", Fatal: true, File: "bin/start.sh", Line: 4},
		{Kind: "script", Thrower: "test:start.sh", Text: "Cannot find keystore at {}/kafka.jks", Fatal: true, File: "bin/start.sh", Line: 8},
		{Kind: "script", Thrower: "test:start.sh", Text: "The port {} is used twice", Fatal: true, File: "bin/start.sh", Line: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sites %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("site %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestPyTemplate(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`"%s is required." % name`, "{} is required."},
		{`f"URL {url} is malformed."`, "URL {} is malformed."},
		{`"Expected {} brokers, found {}".format(a, b)`, "Expected {} brokers, found {}"},
		{`"Command [" + cmd + "] FAILED !"`, "Command [{}] FAILED !"},
	}
	for _, tc := range tests {
		if got := pyTemplate(tc.expr); got != tc.want {
			t.Errorf("pyTemplate(%s) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// classBytes builds a minimal class file header with a constant pool of
// the given entries (only what constantStrings reads).
func classBytes(entries ...[]byte) []byte {
	b := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61}
	count := 1
	for _, e := range entries {
		count++
		if e[0] == 5 || e[0] == 6 {
			count++
		}
	}
	b = binary.BigEndian.AppendUint16(b, uint16(count))
	for _, e := range entries {
		b = append(b, e...)
	}
	return append(b, 0, 0, 0, 0) // access flags, this_class...: not read
}

func utf8Entry(s string) []byte {
	return append(binary.BigEndian.AppendUint16([]byte{1}, uint16(len(s))), s...)
}

func TestConstantStrings(t *testing.T) {
	data := classBytes(
		utf8Entry("Failed to lock \x01 in \x01."), // #1
		[]byte{8, 0, 1},                    // #2 String -> #1
		[]byte{5, 0, 0, 0, 0, 0, 0, 0, 7},  // #3-4 Long (two slots)
		utf8Entry("not a string constant"), // #5
		[]byte{8, 0, 5},                    // #6 String -> #5
	)
	strs, err := constantStrings(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(strs) != 2 || strs[0] != "Failed to lock \x01 in \x01." || strs[1] != "not a string constant" {
		t.Fatalf("strings = %q", strs)
	}
	cs := classStrings{"a.B": {"Failed to lock {} in {}."}}
	if !cs.hasTemplate("a.B", "Failed to lock {} in {}.") {
		t.Error("template not found in its class's constants")
	}
	if cs.hasTemplate("a.B", "Failed to open {}") || cs.hasTemplate("a.C", "Failed to lock {} in {}.") {
		t.Error("template found where it is not")
	}
	if !cs.hasTemplate("a.B", "requirement failed: Failed to lock {}") {
		t.Error("require's prefix is not the thrower's text and must be skipped")
	}
	if _, err := constantStrings([]byte("nope")); err == nil {
		t.Error("a non-class file was accepted")
	}
}
