// Package ociimage writes container images as OCI image-layout tarballs with
// the standard library only: no Docker, no registry. The result loads with
// `ctr images import`, `podman load` or `skopeo copy oci-archive:`.
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
// Output is reproducible: the same Image gives the same bytes and digests
// (entries sorted, timestamps fixed to Created, owners numeric). Parent
// directories are added as needed (mode 0755, root-owned).
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// Media types of the OCI image specification v1.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar"
	// MediaTypeLayerGzip is a gzip-compressed layer (Image.Gzip).
	MediaTypeLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip"
	// MediaTypeLayerZstd is a zstd-compressed layer; only a base's.
	MediaTypeLayerZstd = "application/vnd.oci.image.layer.v1.tar+zstd"
)

// AnnotationImageName names the image for containerd's importer; the OCI
// annotation AnnotationRefName carries the tag alone.
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

// Config is the part of the OCI image configuration a runtime reads.
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
	// Architecture and OS default to amd64 and linux.
	Architecture, OS string
	// AlsoByDigest adds a second index entry naming the image by its
	// manifest digest ("repo@sha256:..."), as a registry pull records it.
	// Without it a runtime that imported the archive knows only the tag, and
	// a pod asking for the image by digest would try to pull it.
	AlsoByDigest bool
	// Base, when set, puts the base's layers under Files' layer and starts
	// the configuration from the base's: Config's non-empty fields replace
	// the base's (an Entrypoint also drops the base's Cmd, as a Dockerfile's
	// ENTRYPOINT does), Env and Labels are merged by name with Config's
	// winning, and the fields this package does not model are kept. Parent
	// directories Write adds for Files replace the base's (mode 0755,
	// root-owned), so files meant for a base go in existing directories.
	Base *Base
	// Gzip compresses the layer (deterministically: no name, no time in
	// the gzip header). Tools that push an image compress uncompressed
	// layers, which changes its digest; a compressed layer is pushed as is,
	// so the digest Write reports is the one a registry will serve.
	Gzip bool
}

// Descriptor identifies a blob by digest, as in the OCI specification.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is a descriptor's platform.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Index is an OCI image index (index.json).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// imageConfig is the whole configuration blob.
type imageConfig struct {
	Created      string `json:"created"`
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       Config `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
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
	if b := img.Base; b != nil {
		if img.Architecture == "" {
			img.Architecture = b.Architecture
		}
		if img.OS == "" {
			img.OS = b.OS
		}
		if img.Architecture != b.Architecture || img.OS != b.OS {
			return Ref{}, fmt.Errorf("ociimage: the image is for %s/%s but its base is for %s/%s", img.OS, img.Architecture, b.OS, b.Architecture)
		}
	}
	if img.Architecture == "" {
		img.Architecture = "amd64"
	}
	if img.OS == "" {
		img.OS = "linux"
	}
	created := img.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()

	layer, err := layerTar(img.Files, created)
	if err != nil {
		return Ref{}, err
	}
	diffID := descriptor(MediaTypeLayer, layer).Digest
	if img.Gzip {
		if layer, err = gzipLayer(layer); err != nil {
			return Ref{}, err
		}
	}
	layerDesc := descriptor(MediaTypeLayer, layer)
	if img.Gzip {
		layerDesc.MediaType = MediaTypeLayerGzip
	}

	var cfgJSON []byte
	layers := []Descriptor{layerDesc}
	blobs := []blobEntry{{layerDesc.Digest, layer}}
	if img.Base == nil {
		var cfg imageConfig
		cfg.Created = created.Format(time.RFC3339)
		cfg.Architecture, cfg.OS = img.Architecture, img.OS
		cfg.Config = img.Config
		cfg.RootFS.Type = "layers"
		cfg.RootFS.DiffIDs = []string{diffID}
		cfgJSON, err = json.Marshal(cfg)
	} else {
		layers = nil
		blobs = nil
		for _, l := range img.Base.Layers {
			layers = append(layers, l.Descriptor)
			blobs = append(blobs, blobEntry{l.Descriptor.Digest, l.data})
		}
		layers = append(layers, layerDesc)
		blobs = append(blobs, blobEntry{layerDesc.Digest, layer})
		cfgJSON, err = img.Base.config(img.Config, created, diffID)
	}
	if err != nil {
		return Ref{}, fmt.Errorf("ociimage: encoding the config: %w", err)
	}
	cfgDesc := descriptor(MediaTypeConfig, cfgJSON)

	manifestJSON, err := json.Marshal(Manifest{
		SchemaVersion: 2, MediaType: MediaTypeManifest, Config: cfgDesc, Layers: layers,
	})
	if err != nil {
		return Ref{}, fmt.Errorf("ociimage: encoding the manifest: %w", err)
	}
	manifestDesc := descriptor(MediaTypeManifest, manifestJSON)
	manifestDesc.Platform = &Platform{Architecture: img.Architecture, OS: img.OS}
	manifestDesc.Annotations = map[string]string{AnnotationImageName: img.Name}
	if tag := tagOf(img.Name); tag != "" {
		manifestDesc.Annotations[AnnotationRefName] = tag
	}
	manifests := []Descriptor{manifestDesc}
	if img.AlsoByDigest {
		byDigest := manifestDesc
		byDigest.Annotations = map[string]string{AnnotationImageName: repoOf(img.Name) + "@" + manifestDesc.Digest}
		manifests = append(manifests, byDigest)
	}
	indexJSON, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: manifests})
	if err != nil {
		return Ref{}, fmt.Errorf("ociimage: encoding the index: %w", err)
	}

	tw := tar.NewWriter(w)
	type entry struct {
		name string
		data []byte
	}
	entries := []entry{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}}
	written := map[string]bool{}
	blobs = append(blobs, blobEntry{cfgDesc.Digest, cfgJSON}, blobEntry{manifestDesc.Digest, manifestJSON})
	for _, b := range blobs {
		if !written[b.digest] { // two identical layers are one blob
			written[b.digest] = true
			entries = append(entries, entry{"blobs/sha256/" + hexOf(b.digest), b.data})
		}
	}
	entries = append(entries, entry{"index.json", indexJSON})
	dirs := []string{"blobs/", "blobs/sha256/"}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: created, Format: tar.FormatPAX}); err != nil {
			return Ref{}, fmt.Errorf("ociimage: writing the archive: %w", err)
		}
	}
	for _, e := range entries {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: created, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return Ref{}, fmt.Errorf("ociimage: writing the archive: %w", err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return Ref{}, fmt.Errorf("ociimage: writing the archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return Ref{}, fmt.Errorf("ociimage: writing the archive: %w", err)
	}
	return Ref{Name: img.Name, ManifestDigest: manifestDesc.Digest, ConfigDigest: cfgDesc.Digest}, nil
}

// gzipLayer compresses a layer. The output depends only on the input and
// the Go version's compress/flate, as the rest of the build does.
func gzipLayer(layer []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("ociimage: compressing the layer: %w", err)
	}
	if _, err := zw.Write(layer); err != nil {
		return nil, fmt.Errorf("ociimage: compressing the layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("ociimage: compressing the layer: %w", err)
	}
	return buf.Bytes(), nil
}

// blobEntry is a blob to write under blobs/sha256/.
type blobEntry struct {
	digest string
	data   []byte
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

func descriptor(mediaType string, blob []byte) Descriptor {
	sum := sha256.Sum256(blob)
	return Descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(blob))}
}

func hexOf(digest string) string { return strings.TrimPrefix(digest, "sha256:") }

// cleanPath validates and normalises a layer path.
func cleanPath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return "", fmt.Errorf("ociimage: path %q must be relative and slash-separated", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("ociimage: path %q leaves the image root", p)
		}
	}
	c := path.Clean(p)
	if c == "." {
		return "", fmt.Errorf("ociimage: path %q names the image root", p)
	}
	return c, nil
}

// layerTar builds the layer: every file, plus the parent directories not
// given, sorted so that parents come first and output is reproducible.
func layerTar(files []File, mtime time.Time) ([]byte, error) {
	byPath := map[string]File{}
	for _, f := range files {
		p, err := cleanPath(f.Path)
		if err != nil {
			return nil, err
		}
		kinds := 0
		if f.Dir {
			kinds++
		}
		if f.Link != "" {
			kinds++
		}
		if f.Dir && f.Data != nil || f.Link != "" && f.Data != nil || kinds > 1 {
			return nil, fmt.Errorf("ociimage: %s: a file is one of data, link or directory", p)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("ociimage: %s is given twice", p)
		}
		f.Path = p
		byPath[p] = f
	}
	for p := range byPath {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if existing, ok := byPath[d]; ok {
				if !existing.Dir {
					return nil, fmt.Errorf("ociimage: %s is inside %s, which is not a directory", p, d)
				}
				continue
			}
			byPath[d] = File{Path: d, Dir: true, Mode: 0o755}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths) // a parent sorts before its children

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := byPath[p]
		hdr := &tar.Header{
			Name: p, Mode: int64(f.Mode.Perm()), Uid: f.UID, Gid: f.GID,
			ModTime: mtime, Format: tar.FormatPAX,
		}
		switch {
		case f.Dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
		case f.Link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
			if hdr.Mode == 0 {
				hdr.Mode = 0o777
			}
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("ociimage: %s: %w", p, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, fmt.Errorf("ociimage: %s: %w", p, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("ociimage: closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}
