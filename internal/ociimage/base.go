// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package ociimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// Base is an image read from an OCI image-layout tarball by ReadBase, for
// Write to stack a layer on (Image.Base). It is held in memory.
type Base struct {
	// ManifestDigest is the base manifest's digest, to report what was used.
	ManifestDigest string
	// Architecture and OS are the base's platform.
	Architecture, OS string
	// Config is the base's runtime configuration (user, environment...).
	Config v1.Config
	// Created is the base's creation time.
	Created time.Time
	// Layers are the base's layers, bottom first, with their bytes as the
	// base has them (Docker media types become their OCI equivalents).
	Layers []v1.Layer

	// config is the whole configuration, so that Write keeps what it does
	// not change (exposed ports, stop signal, history...).
	config *v1.ConfigFile
}

// ReadBase reads an OCI image-layout tar archive (what `skopeo copy
// docker://... oci-archive:FILE` writes, with or without --all) and returns
// the one image in it for the platform goos/arch (empty: linux/amd64).
// go-containerregistry's validate checks every blob it uses against its
// digest and size and every layer against its diff ID; an archive holding
// several images for the platform, none, or anything that does not verify is
// an error, never a guess.
func ReadBase(r io.Reader, arch, goos string) (*Base, error) {
	if arch == "" {
		arch = "amd64"
	}
	if goos == "" {
		goos = "linux"
	}
	dir, err := os.MkdirTemp("", "ociimage-base-")
	if err != nil {
		return nil, fmt.Errorf("ociimage: base: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := extractArchive(r, dir); err != nil {
		return nil, err
	}
	layoutFile, err := os.ReadFile(filepath.Join(dir, "oci-layout"))
	if err != nil {
		return nil, errors.New("ociimage: base: no oci-layout file: not an OCI image layout archive (a `docker save` archive converts with `skopeo copy docker-archive:IN oci-archive:OUT`)")
	}
	var lv struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(layoutFile, &lv); err != nil || lv.Version != "1.0.0" {
		return nil, fmt.Errorf("ociimage: base: oci-layout %q: want imageLayoutVersion 1.0.0", layoutFile)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return nil, errors.New("ociimage: base: no index.json")
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("ociimage: base: %w", err)
	}
	f := finder{arch: arch, os: goos, found: map[v1.Hash]v1.Image{}}
	if err := f.walk(idx, 0); err != nil {
		return nil, err
	}
	switch len(f.found) {
	case 0:
		return nil, fmt.Errorf("ociimage: base: no image for %s/%s in the archive", goos, arch)
	case 1:
	default:
		var digests []string
		for d := range f.found {
			digests = append(digests, d.String())
		}
		sort.Strings(digests)
		return nil, fmt.Errorf("ociimage: base: %d images for %s/%s in the archive (%s); copy exactly one with skopeo",
			len(f.found), goos, arch, strings.Join(digests, ", "))
	}
	for digest, img := range f.found {
		return load(digest, img)
	}
	panic("unreachable")
}

// finder walks an index to the images of one platform.
type finder struct {
	arch, os string
	found    map[v1.Hash]v1.Image
}

func (f *finder) walk(idx v1.ImageIndex, depth int) error {
	if depth > 4 {
		return errors.New("ociimage: base: image indexes nested more than 4 deep")
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("ociimage: base: decoding an index: %w", err)
	}
	for _, d := range m.Manifests {
		if p := d.Platform; p != nil && (p.Architecture != f.arch || p.OS != f.os) {
			continue
		}
		if err := checkDigest(d); err != nil {
			return err
		}
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return fmt.Errorf("ociimage: base: index %s: %w", d.Digest, err)
			}
			if err := f.walk(child, depth+1); err != nil {
				return err
			}
		case d.MediaType.IsImage():
			if _, dup := f.found[d.Digest]; dup {
				continue // the same image under a second name
			}
			img, err := idx.Image(d.Digest)
			if err != nil {
				return fmt.Errorf("ociimage: base: image %s: %w", d.Digest, err)
			}
			mf, err := img.Manifest()
			if err != nil {
				return fmt.Errorf("ociimage: base: manifest %s: %w", d.Digest, err)
			}
			if !mf.Config.MediaType.IsConfig() {
				return fmt.Errorf("ociimage: base: manifest %s: config media type %q is not an image config", d.Digest, mf.Config.MediaType)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				return fmt.Errorf("ociimage: base: the config of %s: %w", d.Digest, err)
			}
			if cfg.Architecture != f.arch || cfg.OS != f.os {
				continue // an unannotated entry for another platform
			}
			f.found[d.Digest] = img
		default:
			return fmt.Errorf("ociimage: base: index entry %s has media type %q, not an image manifest or index", d.Digest, d.MediaType)
		}
	}
	return nil
}

func checkDigest(d v1.Descriptor) error {
	if d.Digest.Algorithm != "sha256" {
		return fmt.Errorf("ociimage: base: digest %q: only sha256 digests are supported", d.Digest)
	}
	return nil
}

// ociLayerType maps the layer media types a base may use to the OCI one the
// new (OCI) manifest lists; the bytes are the same. Only gzip: what
// registries serve, and what the library's validation reads.
var ociLayerType = map[types.MediaType]types.MediaType{
	types.OCILayer:    types.OCILayer,
	types.DockerLayer: types.OCILayer,
}

// load verifies img and copies its layers into memory.
func load(digest v1.Hash, img v1.Image) (*Base, error) {
	mf, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("ociimage: base: manifest %s: %w", digest, err)
	}
	for _, l := range mf.Layers {
		if _, ok := ociLayerType[l.MediaType]; !ok {
			return nil, fmt.Errorf("ociimage: base: layer %s has media type %q; only gzip-compressed tar layers are supported (skopeo copy --dest-compress --dest-compress-format gzip converts a base)", l.Digest, l.MediaType)
		}
		if err := checkDigest(l); err != nil {
			return nil, err
		}
	}
	if err := validate.Image(img); err != nil {
		return nil, fmt.Errorf("ociimage: base: image %s does not verify: %w", digest, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("ociimage: base: the config of %s: %w", digest, err)
	}
	base := &Base{ManifestDigest: digest.String(), Architecture: cfg.Architecture, OS: cfg.OS, Config: cfg.Config, Created: cfg.Created.Time, config: cfg.DeepCopy()}
	for _, d := range mf.Layers {
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("ociimage: base: layer %s: %w", d.Digest, err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, fmt.Errorf("ociimage: base: layer %s: %w", d.Digest, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("ociimage: base: layer %s: %w", d.Digest, err)
		}
		mem, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
			tarball.WithMediaType(ociLayerType[d.MediaType]))
		if err != nil {
			return nil, fmt.Errorf("ociimage: base: layer %s: %w", d.Digest, err)
		}
		if got, err := mem.Digest(); err != nil || got != d.Digest {
			return nil, fmt.Errorf("ociimage: base: layer %s read back as %s (%v)", d.Digest, got, err)
		}
		base.Layers = append(base.Layers, mem)
	}
	return base, nil
}
