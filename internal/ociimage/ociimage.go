// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package ociimage builds container images as OCI image-layout tarballs (what
// `skopeo copy ... oci-archive:FILE` reads and writes), without Docker or a
// registry. The image model, the manifests, the configuration, layer
// compression and the image layout come from
// github.com/google/go-containerregistry (the library ko and crane are built
// on); this package adds what the library has no API for: a reproducible
// layer made from files in memory (numeric owners, fixed times, parents
// added) and the tar archive around a layout directory.
//
// An Image is one layer of files plus the runtime configuration, optionally
// stacked on the layers of a base image (ReadBase):
//
//	img := ociimage.Image{
//		Name:   "example.local/app:v1",
//		Files:  []ociimage.File{{Path: "app", Mode: 0o755, Data: binary}},
//		Config: ociimage.Config{Entrypoint: []string{"/app"}, User: "65532:65532"},
//	}
//	ref, err := ociimage.Write(w, img)
//
// WriteIndex writes several such images, one per platform, as one
// multi-architecture image (an OCI image index).
//
// Output is reproducible: the same Image gives the same bytes and digests
// (entries sorted, timestamps fixed to Created, owners numeric, the layer
// gzip-compressed without a name or time in its header).
package ociimage

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// AnnotationImageName names the image for containerd's importer; the OCI
// annotation AnnotationRefName carries the tag alone (what skopeo's
// oci-archive:FILE:TAG selects).
const (
	AnnotationImageName = "io.containerd.image.name"
	AnnotationRefName   = "org.opencontainers.image.ref.name"
)

// File is one entry of the image's single layer. Exactly one of Data (a
// regular file, possibly empty), Link (a symlink to Link) or Dir describes
// it.
type File struct {
	// Path is relative to the image root, slash-separated, without "..".
	Path string
	// Mode holds the permission bits (0o755...); type bits are ignored.
	Mode fs.FileMode
	// UID and GID own the entry (numeric; the image has no passwd file).
	UID, GID int
	Data     []byte
	Link     string
	Dir      bool
}

// Config is the part of the OCI image configuration an Image sets; the
// fields it leaves empty keep the base's (see Image.Base).
type Config struct {
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Cmd        []string          `json:"Cmd,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	User       string            `json:"User,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

// Image is what Write writes.
type Image struct {
	// Name is the full reference, e.g. "kafkabot.local/broker:test".
	Name   string
	Files  []File
	Config Config
	// Created stamps the config and every file (zero: the Unix epoch), so
	// builds are reproducible.
	Created time.Time
	// Architecture and OS default to amd64 and linux (or the base's).
	Architecture, OS string
	// AlsoByDigest adds a second index entry naming the image by its
	// digest ("repo@sha256:..."), as a registry pull records it. Without it
	// a runtime that imported the archive knows only the tag, and a pod
	// asking for the image by digest would try to pull it.
	AlsoByDigest bool
	// Base, when set, puts the base's layers under Files' layer and starts
	// the configuration from the base's: Config's non-empty fields replace
	// the base's (an Entrypoint also drops the base's Cmd, as a Dockerfile's
	// ENTRYPOINT does), Env and Labels are merged by name with Config's
	// winning, and the rest of the base's configuration (exposed ports,
	// stop signal, history...) is kept. Parent directories Write adds for
	// Files replace the base's (mode 0755, root-owned), so files meant for
	// a base go in existing directories.
	Base *Base
}

// Ref is what Write produced: the manifest's digest (what a pod's image
// "name@sha256:..." refers to) and the config's digest (the image ID).
type Ref struct {
	Name           string
	ManifestDigest string
	ConfigDigest   string
}

// Write writes img to w as an OCI image-layout tar archive.
func Write(w io.Writer, img Image) (Ref, error) {
	if img.Name == "" {
		return Ref{}, errors.New("ociimage: the image has no name")
	}
	built, platform, err := build(img)
	if err != nil {
		return Ref{}, err
	}
	digest, err := built.Digest()
	if err != nil {
		return Ref{}, fmt.Errorf("ociimage: %s: the manifest digest: %w", img.Name, err)
	}
	config, err := built.ConfigName()
	if err != nil {
		return Ref{}, fmt.Errorf("ociimage: %s: the config digest: %w", img.Name, err)
	}
	err = writeArchive(w, img.Created, func(p layout.Path) error {
		for _, ann := range names(img.Name, digest, img.AlsoByDigest) {
			if err := p.AppendImage(built, layout.WithAnnotations(ann), layout.WithPlatform(platform)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Ref{}, err
	}
	return Ref{Name: img.Name, ManifestDigest: digest.String(), ConfigDigest: config.String()}, nil
}

// IndexRef is what WriteIndex produced: the index's digest (what a
// multi-architecture pull refers to) and each platform's image.
type IndexRef struct {
	Name        string
	IndexDigest string
	// Images are the platforms' images, in the order given.
	Images []Ref
}

// WriteIndex writes one multi-architecture image named name: an OCI image
// index holding the images (one per platform: two images for the same
// OS/architecture are an error), as an image-layout tar archive. Each
// image's own Name and AlsoByDigest are ignored; alsoByDigest names the
// index by digest too. created stamps the archive's entries.
func WriteIndex(w io.Writer, name string, images []Image, alsoByDigest bool, created time.Time) (IndexRef, error) {
	if name == "" {
		return IndexRef{}, errors.New("ociimage: the image index has no name")
	}
	if len(images) == 0 {
		return IndexRef{}, errors.New("ociimage: an image index needs at least one image")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	out := IndexRef{Name: name}
	seen := map[string]bool{}
	for _, img := range images {
		img.Name = name
		built, platform, err := build(img)
		if err != nil {
			return IndexRef{}, err
		}
		if key := platform.String(); seen[key] {
			return IndexRef{}, fmt.Errorf("ociimage: %s: two images for %s", name, key)
		} else {
			seen[key] = true
		}
		digest, err := built.Digest()
		if err != nil {
			return IndexRef{}, fmt.Errorf("ociimage: %s (%s): the manifest digest: %w", name, platform, err)
		}
		config, err := built.ConfigName()
		if err != nil {
			return IndexRef{}, fmt.Errorf("ociimage: %s (%s): the config digest: %w", name, platform, err)
		}
		out.Images = append(out.Images, Ref{Name: name, ManifestDigest: digest.String(), ConfigDigest: config.String()})
		p := platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: built, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ordered, err := inSpecOrder(idx)
	if err != nil {
		return IndexRef{}, fmt.Errorf("ociimage: %s: encoding the index: %w", name, err)
	}
	idx = ordered
	digest, err := idx.Digest()
	if err != nil {
		return IndexRef{}, fmt.Errorf("ociimage: %s: the index digest: %w", name, err)
	}
	out.IndexDigest = digest.String()
	err = writeArchive(w, created, func(p layout.Path) error {
		for _, ann := range names(name, digest, alsoByDigest) {
			if err := p.AppendIndex(idx, layout.WithAnnotations(ann)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return IndexRef{}, err
	}
	return out, nil
}

// names returns the index.json annotations naming an image: by its
// reference, and by digest when byDigest.
func names(name string, digest v1.Hash, byDigest bool) []map[string]string {
	first := map[string]string{AnnotationImageName: name}
	if tag := tagOf(name); tag != "" {
		first[AnnotationRefName] = tag
	}
	out := []map[string]string{first}
	if byDigest {
		out = append(out, map[string]string{AnnotationImageName: repoOf(name) + "@" + digest.String()})
	}
	return out
}

// build assembles img as a go-containerregistry image.
func build(img Image) (v1.Image, v1.Platform, error) {
	platform := v1.Platform{Architecture: img.Architecture, OS: img.OS}
	if b := img.Base; b != nil {
		if platform.Architecture == "" {
			platform.Architecture = b.Architecture
		}
		if platform.OS == "" {
			platform.OS = b.OS
		}
		if platform.Architecture != b.Architecture || platform.OS != b.OS {
			return nil, platform, fmt.Errorf("ociimage: %s: the image is for %s but its base is for %s/%s", img.Name, platform, b.OS, b.Architecture)
		}
	}
	if platform.Architecture == "" {
		platform.Architecture = "amd64"
	}
	if platform.OS == "" {
		platform.OS = "linux"
	}
	created := img.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC().Truncate(time.Second)

	data, err := layerTar(img.Files, created)
	if err != nil {
		return nil, platform, err
	}
	// Compressed, so that a push keeps the digest printed (tools that push
	// an image compress uncompressed layers, which changes its digest). The
	// library compresses with compress/gzip and an empty header (no name,
	// no time): the same bytes for the same layer.
	top, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression))
	if err != nil {
		return nil, platform, fmt.Errorf("ociimage: %s: compressing the layer: %w", img.Name, err)
	}

	var layers []v1.Layer
	cfg := &v1.ConfigFile{}
	if b := img.Base; b != nil {
		layers = append(layers, b.Layers...)
		cfg = b.config.DeepCopy()
		cfg.History = append(cfg.History, v1.History{Created: v1.Time{Time: created}, CreatedBy: "ociimage.Write"})
	}
	layers = append(layers, top)

	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	stacked, err := mutate.AppendLayers(base, layers...)
	if err != nil {
		return nil, platform, fmt.Errorf("ociimage: %s: stacking the layers: %w", img.Name, err)
	}
	withLayers, err := stacked.ConfigFile()
	if err != nil {
		return nil, platform, fmt.Errorf("ociimage: %s: %w", img.Name, err)
	}
	cfg.RootFS = withLayers.RootFS
	if img.Base == nil {
		cfg.History = nil
	}
	cfg.Created = v1.Time{Time: created}
	cfg.Architecture, cfg.OS = platform.Architecture, platform.OS
	cfg.Config = apply(cfg.Config, img.Config)
	out, err := mutate.ConfigFile(stacked, cfg)
	if err != nil {
		return nil, platform, fmt.Errorf("ociimage: %s: the config: %w", img.Name, err)
	}
	return out, platform, nil
}

// apply returns the runtime configuration base with over's fields applied
// as Image.Base says.
func apply(base v1.Config, over Config) v1.Config {
	out := base
	if len(over.Entrypoint) > 0 {
		out.Entrypoint = over.Entrypoint
		out.Cmd = nil
	}
	if len(over.Cmd) > 0 {
		out.Cmd = over.Cmd
	}
	if over.User != "" {
		out.User = over.User
	}
	if over.WorkingDir != "" {
		out.WorkingDir = over.WorkingDir
	}
	out.Env = mergeEnv(base.Env, over.Env)
	if len(base.Labels)+len(over.Labels) > 0 {
		labels := maps.Clone(base.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, over.Labels)
		out.Labels = labels
	}
	return out
}

// mergeEnv returns base's NAME=value entries with over's replacing those of
// the same name, in base's order, then over's new names in their order.
func mergeEnv(base, over []string) []string {
	name := func(e string) string { n, _, _ := strings.Cut(e, "="); return n }
	overBy := map[string]string{}
	for _, e := range over {
		overBy[name(e)] = e
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range base {
		n := name(e)
		if seen[n] {
			continue
		}
		seen[n] = true
		if o, ok := overBy[n]; ok {
			e = o
		}
		out = append(out, e)
	}
	for _, e := range over {
		if n := name(e); !seen[n] {
			seen[n] = true
			out = append(out, e)
		}
	}
	return out
}

// tagOf returns the tag of a reference ("v1" of "example.local/app:v1"), or
// "" when it has none.
func tagOf(name string) string {
	slash := strings.LastIndex(name, "/")
	if i := strings.LastIndex(name, ":"); i > slash {
		return name[i+1:]
	}
	return ""
}

// repoOf strips the tag or digest from a reference.
func repoOf(name string) string {
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	if tag := tagOf(name); tag != "" {
		name = strings.TrimSuffix(name, ":"+tag)
	}
	return name
}
