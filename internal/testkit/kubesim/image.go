// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// imageID is what containerd reports as a container's imageID: the
// repository pinned by digest. The digest here is derived from the image
// reference, so it is stable for the same reference.
func imageID(image string) string {
	if image == "" {
		return ""
	}
	if strings.Contains(image, "@sha256:") {
		return image
	}
	repo := image
	// A tag follows the last ':' only when that ':' comes after the last '/'
	// (otherwise it is a registry port).
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	return repo + "@sha256:" + fakeDigest(image)
}

// fakeDigest is a stable 64-hex-digit digest of s.
func fakeDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
