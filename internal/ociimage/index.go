// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package ociimage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The index's bytes are ours: go-containerregistry writes a descriptor's
// size before its digest, the OCI specification (and containers/image,
// which skopeo and podman use) the other way round. skopeo re-encodes an
// index it copies with --all, and with --preserve-digests refuses to push
// one whose bytes its encoding would change. In the specification's order
// the push keeps the digest the build printed.

// specIndex is an OCI image index with the specification's field order.
type specIndex struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     types.MediaType   `json:"mediaType,omitempty"`
	Manifests     []specDescriptor  `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type specDescriptor struct {
	MediaType   types.MediaType   `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	URLs        []string          `json:"urls,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *specPlatform     `json:"platform,omitempty"`
}

type specPlatform struct {
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	OSVersion    string   `json:"os.version,omitempty"`
	OSFeatures   []string `json:"os.features,omitempty"`
	Variant      string   `json:"variant,omitempty"`
}

// specOrdered is an image index whose manifest is encoded in the
// specification's field order; everything else is the wrapped index's.
type specOrdered struct {
	inner  v1.ImageIndex
	raw    []byte
	digest v1.Hash
}

// inSpecOrder re-encodes idx's manifest in the specification's field order.
func inSpecOrder(idx v1.ImageIndex) (v1.ImageIndex, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if m.Subject != nil || m.ArtifactType != "" {
		return nil, fmt.Errorf("ociimage: an index with a subject or an artifact type is not supported")
	}
	m = m.DeepCopy()
	out := specIndex{SchemaVersion: int(m.SchemaVersion), MediaType: m.MediaType, Annotations: m.Annotations}
	for i, d := range m.Manifests {
		// Embedded data (an optional copy of the blob) and an artifact
		// type (for artifacts, not images) are left out.
		m.Manifests[i].Data, m.Manifests[i].ArtifactType = nil, ""
		sd := specDescriptor{MediaType: d.MediaType, Digest: d.Digest.String(), Size: d.Size, URLs: d.URLs, Annotations: d.Annotations}
		if p := d.Platform; p != nil {
			sd.Platform = &specPlatform{Architecture: p.Architecture, OS: p.OS, OSVersion: p.OSVersion, OSFeatures: p.OSFeatures, Variant: p.Variant}
		}
		out.Manifests = append(out.Manifests, sd)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	// The same index, field for field.
	back, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if again, _ := json.Marshal(back); !bytes.Equal(again, mustJSON(m)) {
		return nil, fmt.Errorf("ociimage: the index does not survive re-encoding: %s", raw)
	}
	sum := sha256.Sum256(raw)
	return &specOrdered{inner: idx, raw: raw, digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}}, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // an IndexManifest always encodes
	return b
}

// RawManifest implements v1.ImageIndex.
func (s *specOrdered) RawManifest() ([]byte, error) { return s.raw, nil }

// Digest implements v1.ImageIndex.
func (s *specOrdered) Digest() (v1.Hash, error) { return s.digest, nil }

// Size implements v1.ImageIndex.
func (s *specOrdered) Size() (int64, error) { return int64(len(s.raw)), nil }

// MediaType implements v1.ImageIndex.
func (s *specOrdered) MediaType() (types.MediaType, error) { return s.inner.MediaType() }

// IndexManifest implements v1.ImageIndex.
func (s *specOrdered) IndexManifest() (*v1.IndexManifest, error) {
	return v1.ParseIndexManifest(bytes.NewReader(s.raw))
}

// Image implements v1.ImageIndex.
func (s *specOrdered) Image(h v1.Hash) (v1.Image, error) { return s.inner.Image(h) }

// ImageIndex implements v1.ImageIndex.
func (s *specOrdered) ImageIndex(h v1.Hash) (v1.ImageIndex, error) { return s.inner.ImageIndex(h) }
