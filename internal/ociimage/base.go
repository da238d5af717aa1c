package ociimage

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// Media types a base image may use besides the OCI ones Write emits. Docker's
// schema 2 types are what `skopeo copy --format v2s2` or an old registry give;
// their blobs are the same bytes under another name.
const (
	mediaTypeDockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaTypeDockerConfig       = "application/vnd.docker.container.image.v1+json"
	mediaTypeDockerLayerGzip    = "application/vnd.docker.image.rootfs.diff.tar.gzip"
)

// maxMetadataBlob bounds index, manifest and config blobs: real ones are a
// few KiB; anything larger is not an image this package should trust.
const maxMetadataBlob = 4 << 20

// Base is an image read from an OCI image-layout tarball by ReadBase, for
// Write to stack a layer on (Image.Base). It is held in memory.
type Base struct {
	// ManifestDigest is the base manifest's digest, to report what was used.
	ManifestDigest string
	// Architecture and OS are the base's platform.
	Architecture, OS string
	// Config is the base's runtime configuration (user, environment...).
	Config Config
	// Layers are the base's layers, bottom first.
	Layers []BaseLayer

	// rawConfig is the whole config blob, so that Write keeps the fields
	// this package does not model (ExposedPorts, StopSignal, history...).
	rawConfig map[string]json.RawMessage
}

// BaseLayer is one layer of a base image, copied into the new image as is.
type BaseLayer struct {
	// Descriptor is the layer as the new manifest lists it (Docker media
	// types translated to their OCI equivalents).
	Descriptor Descriptor
	// DiffID is the digest of the uncompressed layer, from the base config.
	DiffID string
	data   []byte
}

// ReadBase reads an OCI image-layout tar archive (what `skopeo copy
// docker://... oci-archive:FILE` writes) and returns the one image in it for
// the platform arch/goos (empty: amd64/linux). Every blob it uses is checked
// against its digest and size; an archive holding several images for the
// platform, none, or anything it cannot verify is an error, never a guess.
func ReadBase(r io.Reader, arch, goos string) (*Base, error) {
	if arch == "" {
		arch = "amd64"
	}
	if goos == "" {
		goos = "linux"
	}
	files, err := readLayout(r)
	if err != nil {
		return nil, err
	}
	layout, ok := files["oci-layout"]
	if !ok {
		return nil, errors.New("ociimage: base: no oci-layout file: not an OCI image layout archive (a `docker save` archive converts with `skopeo copy docker-archive:IN oci-archive:OUT`)")
	}
	var lv struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(layout, &lv); err != nil || lv.Version != "1.0.0" {
		return nil, fmt.Errorf("ociimage: base: oci-layout %q: want imageLayoutVersion 1.0.0", layout)
	}
	indexJSON, ok := files["index.json"]
	if !ok {
		return nil, errors.New("ociimage: base: no index.json")
	}
	bl := baseLayout{files: files, arch: arch, os: goos}
	if err := bl.walkIndex(indexJSON, 0); err != nil {
		return nil, err
	}
	switch len(bl.found) {
	case 0:
		return nil, fmt.Errorf("ociimage: base: no image for %s/%s in the archive", goos, arch)
	case 1:
	default:
		sort.Strings(bl.found)
		return nil, fmt.Errorf("ociimage: base: %d images for %s/%s in the archive (%s); copy exactly one with skopeo",
			len(bl.found), goos, arch, strings.Join(bl.found, ", "))
	}
	return bl.base, nil
}

// readLayout returns the regular files of an archive by cleaned name.
func readLayout(r io.Reader) (map[string][]byte, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ociimage: base: reading the archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("ociimage: base: %s appears twice in the archive", name)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("ociimage: base: reading %s: %w", name, err)
		}
		files[name] = data
	}
	if len(files) == 0 {
		return nil, errors.New("ociimage: base: the archive holds no files")
	}
	return files, nil
}

// baseLayout resolves an index to the manifests of one platform.
type baseLayout struct {
	files    map[string][]byte
	arch, os string
	found    []string // digests of matching manifests
	base     *Base
}

// blob returns the verified blob a descriptor names.
func (l *baseLayout) blob(d Descriptor, limit int64) ([]byte, error) {
	alg, hexDigest, ok := strings.Cut(d.Digest, ":")
	if !ok || alg != "sha256" || len(hexDigest) != 64 {
		return nil, fmt.Errorf("ociimage: base: digest %q: only sha256 digests are supported", d.Digest)
	}
	if limit > 0 && d.Size > limit {
		return nil, fmt.Errorf("ociimage: base: %s blob %s is %d bytes, more than the %d allowed", d.MediaType, d.Digest, d.Size, limit)
	}
	data, ok := l.files["blobs/sha256/"+hexDigest]
	if !ok {
		return nil, fmt.Errorf("ociimage: base: blob %s (%s) is missing from the archive", d.Digest, d.MediaType)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != hexDigest || int64(len(data)) != d.Size {
		return nil, fmt.Errorf("ociimage: base: blob %s does not match its descriptor (sha256:%s, %d bytes; descriptor says %d bytes)",
			d.Digest, got, len(data), d.Size)
	}
	return data, nil
}

func (l *baseLayout) walkIndex(indexJSON []byte, depth int) error {
	if depth > 4 {
		return errors.New("ociimage: base: image indexes nested more than 4 deep")
	}
	var idx Index
	if err := json.Unmarshal(indexJSON, &idx); err != nil {
		return fmt.Errorf("ociimage: base: decoding an index: %w", err)
	}
	for _, d := range idx.Manifests {
		if p := d.Platform; p != nil && (p.Architecture != l.arch || p.OS != l.os) {
			continue
		}
		switch d.MediaType {
		case MediaTypeIndex, mediaTypeDockerManifestList:
			b, err := l.blob(d, maxMetadataBlob)
			if err != nil {
				return err
			}
			if err := l.walkIndex(b, depth+1); err != nil {
				return err
			}
		case MediaTypeManifest, mediaTypeDockerManifest:
			if err := l.manifest(d); err != nil {
				return err
			}
		default:
			return fmt.Errorf("ociimage: base: index entry %s has media type %q, not an image manifest or index", d.Digest, d.MediaType)
		}
	}
	return nil
}

// manifest records the image a manifest describes when its platform matches.
func (l *baseLayout) manifest(d Descriptor) error {
	for _, f := range l.found {
		if f == d.Digest {
			return nil // the same image under a second name
		}
	}
	b, err := l.blob(d, maxMetadataBlob)
	if err != nil {
		return err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("ociimage: base: decoding manifest %s: %w", d.Digest, err)
	}
	if m.Config.MediaType != MediaTypeConfig && m.Config.MediaType != mediaTypeDockerConfig {
		return fmt.Errorf("ociimage: base: manifest %s: config media type %q is not an image config", d.Digest, m.Config.MediaType)
	}
	cfgJSON, err := l.blob(m.Config, maxMetadataBlob)
	if err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(cfgJSON, &raw); err != nil {
		return fmt.Errorf("ociimage: base: decoding config %s: %w", m.Config.Digest, err)
	}
	var cfg imageConfig
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return fmt.Errorf("ociimage: base: decoding config %s: %w", m.Config.Digest, err)
	}
	if cfg.Architecture != l.arch || cfg.OS != l.os {
		return nil // an unannotated entry for another platform
	}
	if cfg.RootFS.Type != "layers" || len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		return fmt.Errorf("ociimage: base: config %s lists %d layer diff IDs (rootfs type %q) for the manifest's %d layers",
			m.Config.Digest, len(cfg.RootFS.DiffIDs), cfg.RootFS.Type, len(m.Layers))
	}
	base := &Base{ManifestDigest: d.Digest, Architecture: cfg.Architecture, OS: cfg.OS, Config: cfg.Config, rawConfig: raw}
	for i, ld := range m.Layers {
		switch ld.MediaType {
		case MediaTypeLayer, MediaTypeLayerGzip, MediaTypeLayerZstd:
		case mediaTypeDockerLayerGzip:
			ld.MediaType = MediaTypeLayerGzip
		default:
			return fmt.Errorf("ociimage: base: layer %s has media type %q; only (gzip or zstd compressed) tar layers are supported",
				ld.Digest, ld.MediaType)
		}
		data, err := l.blob(ld, 0)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(cfg.RootFS.DiffIDs[i], "sha256:") {
			return fmt.Errorf("ociimage: base: layer diff ID %q is not a sha256 digest", cfg.RootFS.DiffIDs[i])
		}
		base.Layers = append(base.Layers, BaseLayer{
			Descriptor: Descriptor{MediaType: ld.MediaType, Digest: ld.Digest, Size: ld.Size},
			DiffID:     cfg.RootFS.DiffIDs[i],
			data:       data,
		})
	}
	l.found = append(l.found, d.Digest)
	l.base = base
	return nil
}

// config returns the configuration blob of an image made of the base plus
// one layer whose diff ID is diffID, with over applied as Image.Base says.
func (b *Base) config(over Config, created time.Time, diffID string) ([]byte, error) {
	top := make(map[string]any, len(b.rawConfig))
	for k, v := range b.rawConfig {
		top[k] = v
	}
	run := map[string]json.RawMessage{}
	if c, ok := b.rawConfig["config"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &run); err != nil {
			return nil, fmt.Errorf("the base's runtime config: %w", err)
		}
	}
	set := func(key string, v any) {
		j, _ := json.Marshal(v) // strings, slices and maps of strings always encode
		run[key] = j
	}
	if len(over.Entrypoint) > 0 {
		set("Entrypoint", over.Entrypoint)
		delete(run, "Cmd")
	}
	if len(over.Cmd) > 0 {
		set("Cmd", over.Cmd)
	}
	if over.User != "" {
		set("User", over.User)
	}
	if over.WorkingDir != "" {
		set("WorkingDir", over.WorkingDir)
	}
	if env := mergeEnv(b.Config.Env, over.Env); len(env) > 0 {
		set("Env", env)
	}
	if len(b.Config.Labels)+len(over.Labels) > 0 {
		labels := map[string]string{}
		for k, v := range b.Config.Labels {
			labels[k] = v
		}
		for k, v := range over.Labels {
			labels[k] = v
		}
		set("Labels", labels)
	}
	top["config"] = run
	top["created"] = created.Format(time.RFC3339)
	diffIDs := make([]string, 0, len(b.Layers)+1)
	for _, l := range b.Layers {
		diffIDs = append(diffIDs, l.DiffID)
	}
	top["rootfs"] = map[string]any{"type": "layers", "diff_ids": append(diffIDs, diffID)}
	if h, ok := b.rawConfig["history"]; ok {
		// The history lists every layer (and empty steps): tools that pair
		// history entries with layers need one for the new layer too.
		var history []json.RawMessage
		if err := json.Unmarshal(h, &history); err != nil {
			return nil, fmt.Errorf("the base's history: %w", err)
		}
		entry, _ := json.Marshal(map[string]string{"created": created.Format(time.RFC3339), "created_by": "ociimage.Write"})
		top["history"] = append(history, entry)
	}
	return json.Marshal(top)
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
