// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package hack_test

import "testing"

// TestEverySourceFileHasTheLicenseHeader fails when a Go or shell file of
// the repository (outside testdata/) lacks the license header, naming it.
func TestEverySourceFileHasTheLicenseHeader(t *testing.T) {
	root := repoRoot(t)
	if out, ok := runScript(t, root, "--check"); !ok {
		t.Errorf("files without the license header (bash hack/license-headers.sh adds it):\n%s", out)
	}
}
