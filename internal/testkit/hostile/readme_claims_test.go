// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package hostile

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// shapesClaim is the README's sentence giving the number of forbidden
// request shapes test/integration/hostile_test.go tries.
var shapesClaim = regexp.MustCompile(`tries (\d+) forbidden request shapes`)

// TestREADMECountsTheShapes fails when README.md's Security section states
// another number of forbidden request shapes than Shapes() holds (every
// one tried by TestHostileTokenIsRefused, which only asks for a minimum),
// or when two shapes share a name, which would make the count claim more
// than the suite tries.
func TestREADMECountsTheShapes(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := shapesClaim.FindAllSubmatch(readme, -1)
	if len(m) != 1 {
		t.Fatalf("README.md states the number of shapes %d times, want once (%q)", len(m), shapesClaim)
	}
	claimed, err := strconv.Atoi(string(m[0][1]))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range Shapes() {
		if names[s.Name] {
			t.Errorf("shape %q is listed twice", s.Name)
		}
		names[s.Name] = true
	}
	if claimed != len(names) {
		t.Errorf("README.md says the suite tries %d forbidden request shapes; Shapes() holds %d distinct ones: update the README", claimed, len(names))
	}
}
