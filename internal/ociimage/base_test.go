// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// layoutBuilder assembles image-layout archives by hand, for the shapes
// Write never produces (Docker media types, history, several platforms,
// unannotated entries) and for broken ones.
type layoutBuilder struct{ files map[string][]byte }

func newLayout() *layoutBuilder {
	return &layoutBuilder{files: map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)}}
}

func descriptorOf(mediaType types.MediaType, data []byte) v1.Descriptor {
	sum := sha256.Sum256(data)
	return v1.Descriptor{MediaType: mediaType, Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}, Size: int64(len(data))}
}

func (b *layoutBuilder) blob(mediaType types.MediaType, data []byte) v1.Descriptor {
	d := descriptorOf(mediaType, data)
	b.files["blobs/sha256/"+d.Digest.Hex] = data
	return d
}

func (b *layoutBuilder) json(t *testing.T, mediaType types.MediaType, v any) v1.Descriptor {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b.blob(mediaType, data)
}

func (b *layoutBuilder) index(t *testing.T, ds ...v1.Descriptor) {
	t.Helper()
	data, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: ds})
	if err != nil {
		t.Fatal(err)
	}
	b.files["index.json"] = data
}

func (b *layoutBuilder) tar(t *testing.T) []byte {
	t.Helper()
	names := make([]string, 0, len(b.files))
	for n := range b.files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		// "./" prefixes as some archivers write them.
		if err := tw.WriteHeader(&tar.Header{Name: "./" + n, Mode: 0o644, Size: int64(len(b.files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b.files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarOf is a layer holding one file.
func tarOf(t *testing.T, name, content string) []byte {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return layer.Bytes()
}

// gzipOf compresses data.
func gzipOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// mustLayer returns an image's i-th layer.
func mustLayer(t *testing.T, img v1.Image, i int) v1.Layer {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) <= i {
		t.Fatalf("layer %d of %d: %v", i, len(layers), err)
	}
	return layers[i]
}

func TestWriteStacksALayerOnABase(t *testing.T) {
	var baseTar bytes.Buffer
	baseRef, err := Write(&baseTar, Image{
		Name:  "base.local/base:1",
		Files: []File{{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0::/:/nologin\n")}},
		Config: Config{
			Cmd: []string{"/base"}, User: "1001", WorkingDir: "/w",
			Env:    []string{"PATH=/bin", "A=1"},
			Labels: map[string]string{"x": "base", "keep": "1"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	base, err := ReadBase(bytes.NewReader(baseTar.Bytes()), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if base.ManifestDigest != baseRef.ManifestDigest || len(base.Layers) != 1 || base.Config.User != "1001" {
		t.Fatalf("base %+v, want manifest %s, one layer, user 1001", base, baseRef.ManifestDigest)
	}

	img := Image{
		Name:  "example.local/app:v1",
		Files: []File{{Path: "app", Mode: 0o755, Data: []byte("app")}},
		Config: Config{
			Entrypoint: []string{"/app"},
			Env:        []string{"A=2", "B=3"},
			Labels:     map[string]string{"x": "app"},
		},
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Base:    base,
	}
	var out bytes.Buffer
	ref, err := Write(&out, img)
	if err != nil {
		t.Fatal(err)
	}
	built, _ := onlyImage(t, out.Bytes())
	m, err := built.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	baseDigest, _ := base.Layers[0].Digest()
	if len(m.Layers) != 2 || m.Layers[0].Digest != baseDigest || m.Layers[0].MediaType != types.OCILayer {
		t.Fatalf("layers %+v, want the base's layer then the new one", m.Layers)
	}
	cfgFile, err := built.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	baseDiffID, _ := base.Layers[0].DiffID()
	topDiffID, _ := mustLayer(t, built, 1).DiffID()
	if d := cfgFile.RootFS.DiffIDs; len(d) != 2 || d[0] != baseDiffID || d[1] != topDiffID {
		t.Errorf("diff IDs %v", d)
	}
	if raw := configJSON(t, built); string(raw["created"]) != `"2026-01-02T03:04:05Z"` {
		t.Errorf("created %s", raw["created"])
	}
	// Kept from the base: user, working dir, a label and a variable not
	// overridden; replaced: the entrypoint (dropping the base's Cmd), A, x.
	cfg := cfgFile.Config
	if cfg.User != "1001" || cfg.WorkingDir != "/w" || cfg.Entrypoint[0] != "/app" || cfg.Cmd != nil {
		t.Errorf("config %+v", cfg)
	}
	if got := strings.Join(cfg.Env, " "); got != "PATH=/bin A=2 B=3" {
		t.Errorf("env %q", got)
	}
	if cfg.Labels["x"] != "app" || cfg.Labels["keep"] != "1" || len(cfg.Labels) != 2 {
		t.Errorf("labels %v", cfg.Labels)
	}

	// The result is itself a valid base: two layers come back.
	again, err := ReadBase(bytes.NewReader(out.Bytes()), "amd64", "linux")
	if err != nil {
		t.Fatal(err)
	}
	if again.ManifestDigest != ref.ManifestDigest || len(again.Layers) != 2 {
		t.Errorf("reread %s with %d layers, want %s with 2", again.ManifestDigest, len(again.Layers), ref.ManifestDigest)
	}

	// Reproducible with a base too.
	var second bytes.Buffer
	if _, err := Write(&second, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), second.Bytes()) {
		t.Error("two writes on the same base differ")
	}
}

// dockerStyleBase is a layout as a registry copy can give: a Docker
// manifest list naming an arm64 and an amd64 image, gzip layers under
// Docker's media type, a config with history and fields Image does not
// set.
func dockerStyleBase(t *testing.T) (*layoutBuilder, []byte) {
	t.Helper()
	b := newLayout()
	layerTar := tarOf(t, "etc/os-release", "x=1")
	gz := gzipOf(t, layerTar)
	layer := b.blob(types.DockerLayer, gz)
	diffID := descriptorOf("", layerTar).Digest.String()
	var manifests []v1.Descriptor
	for _, arch := range []string{"arm64", "amd64"} {
		cfg := b.json(t, types.DockerConfigJSON, map[string]any{
			"architecture": arch, "os": "linux",
			"config": map[string]any{
				"User": "65532", "Env": []string{"PATH=/usr/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
				"ExposedPorts": map[string]any{"8080/tcp": map[string]any{}}, "StopSignal": "SIGTERM",
			},
			"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID}},
			"history": []map[string]any{{"created_by": "base layer"}, {"created_by": "ENV x", "empty_layer": true}},
		})
		m := b.json(t, types.DockerManifestSchema2, v1.Manifest{SchemaVersion: 2, MediaType: types.DockerManifestSchema2, Config: cfg, Layers: []v1.Descriptor{layer}})
		m.Platform = &v1.Platform{Architecture: arch, OS: "linux"}
		manifests = append(manifests, m)
	}
	list := b.json(t, types.DockerManifestList, v1.IndexManifest{SchemaVersion: 2, MediaType: types.DockerManifestList, Manifests: manifests})
	b.index(t, list)
	return b, gz
}

func TestReadBaseFollowsAManifestListToThePlatformsImage(t *testing.T) {
	b, gz := dockerStyleBase(t)
	base, err := ReadBase(bytes.NewReader(b.tar(t)), "amd64", "linux")
	if err != nil {
		t.Fatal(err)
	}
	if base.Architecture != "amd64" || len(base.Layers) != 1 {
		t.Fatalf("base %+v", base)
	}
	mt, _ := base.Layers[0].MediaType()
	rc, err := base.Layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if mt != types.OCILayer || !bytes.Equal(data, gz) {
		t.Errorf("base layer %s, %d bytes: want the Docker gzip layer's bytes as an OCI gzip layer", mt, len(data))
	}
	var out bytes.Buffer
	if _, err := Write(&out, Image{Name: "example.local/app:1", Files: []File{{Path: "app", Data: []byte("a")}},
		Config: Config{Entrypoint: []string{"/app"}, User: "65532:65532"}, Base: base}); err != nil {
		t.Fatal(err)
	}
	built, _ := onlyImage(t, out.Bytes())
	m, err := built.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Layers[0].MediaType != types.OCILayer || m.Layers[1].MediaType != types.OCILayer {
		t.Errorf("manifest %s, layer media types %s, %s", m.MediaType, m.Layers[0].MediaType, m.Layers[1].MediaType)
	}
	cfg, err := built.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || len(cfg.Config.Env) != 2 {
		t.Errorf("config %+v", cfg.Config)
	}
	if cfg.Config.StopSignal != "SIGTERM" || len(cfg.Config.ExposedPorts) != 1 {
		t.Errorf("fields of the base's config were lost: %+v", cfg.Config)
	}
	if len(cfg.History) != 3 || cfg.History[2].CreatedBy != "ociimage.Write" {
		t.Errorf("history %+v, want the base's two entries and one for the new layer", cfg.History)
	}

	if _, err := ReadBase(bytes.NewReader(b.tar(t)), "arm64", "linux"); err != nil {
		t.Errorf("arm64: %v", err)
	}
	// An image for one platform does not stack on a base of another.
	if _, err := Write(io.Discard, Image{Name: "x:1", Architecture: "arm64", Base: base}); err == nil ||
		!strings.Contains(err.Error(), "its base is for linux/amd64") {
		t.Errorf("arm64 image on an amd64 base: %v", err)
	}
}

func TestReadBaseRefusesWhatItCannotVerify(t *testing.T) {
	layerBytes := tarOf(t, "a", "layer bytes")
	diffID := descriptorOf("", layerBytes).Digest.String()
	simple := func(t *testing.T, mutate func(b *layoutBuilder, layer, cfg *v1.Descriptor, m *v1.Manifest)) []byte {
		b := newLayout()
		layer := b.blob(types.OCILayer, gzipOf(t, layerBytes))
		cfg := b.json(t, types.OCIConfigJSON, map[string]any{"architecture": "amd64", "os": "linux",
			"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}}})
		m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: cfg, Layers: []v1.Descriptor{layer}}
		mutate(b, &layer, &cfg, &m)
		m.Layers[0] = layer
		m.Config = cfg
		b.index(t, b.json(t, types.OCIManifestSchema1, m))
		return b.tar(t)
	}
	for _, tc := range []struct {
		name    string
		archive func(t *testing.T) []byte
		want    string
	}{
		{"not a layout", func(t *testing.T) []byte {
			b := newLayout()
			delete(b.files, "oci-layout")
			b.files["manifest.json"] = []byte("[]")
			return b.tar(t)
		}, "no oci-layout"},
		{"no index", func(t *testing.T) []byte {
			b := newLayout()
			return b.tar(t)
		}, "no index.json"},
		{"a layer altered after the fact", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, _ *v1.Descriptor, _ *v1.Manifest) {
				b.files["blobs/sha256/"+layer.Digest.Hex] = gzipOf(t, tarOf(t, "a", "LAYER bytes"))
			})
		}, "does not verify"},
		{"a size that lies", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, layer, _ *v1.Descriptor, _ *v1.Manifest) { layer.Size++ })
		}, "does not verify"},
		{"a missing layer", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, _ *v1.Descriptor, _ *v1.Manifest) {
				delete(b.files, "blobs/sha256/"+layer.Digest.Hex)
			})
		}, "does not verify"},
		{"a sha512 digest", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, layer, _ *v1.Descriptor, _ *v1.Manifest) {
				layer.Digest = v1.Hash{Algorithm: "sha512", Hex: strings.Repeat("ab", 64)}
			})
		}, "only sha256"},
		{"a foreign layer", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, layer, _ *v1.Descriptor, _ *v1.Manifest) {
				layer.MediaType = types.DockerForeignLayer
			})
		}, "only gzip-compressed tar layers"},
		{"an uncompressed layer", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, _ *v1.Descriptor, _ *v1.Manifest) {
				*layer = b.blob(types.OCIUncompressedLayer, layerBytes)
			})
		}, "--dest-compress-format gzip"},
		{"diff IDs that do not match the layers", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, cfg *v1.Descriptor, m *v1.Manifest) {
				*cfg = b.json(t, types.OCIConfigJSON, map[string]any{"architecture": "amd64", "os": "linux",
					"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID, diffID}}})
			})
		}, "does not verify"},
		{"a config that is not one", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, _, cfg *v1.Descriptor, _ *v1.Manifest) { cfg.MediaType = types.OCILayer })
		}, "is not an image config"},
		{"only another platform", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, cfg *v1.Descriptor, _ *v1.Manifest) {
				*cfg = b.json(t, types.OCIConfigJSON, map[string]any{"architecture": "arm64", "os": "linux",
					"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}}})
			})
		}, "no image for linux/amd64"},
		{"two images for the platform", func(t *testing.T) []byte {
			b := newLayout()
			var manifests []v1.Descriptor
			for _, content := range []string{"1", "2"} {
				plain := tarOf(t, "a", content)
				layer := b.blob(types.OCILayer, gzipOf(t, plain))
				cfg := b.json(t, types.OCIConfigJSON, map[string]any{"architecture": "amd64", "os": "linux",
					"rootfs": map[string]any{"type": "layers", "diff_ids": []string{descriptorOf("", plain).Digest.String()}}})
				manifests = append(manifests, b.json(t, types.OCIManifestSchema1,
					v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: cfg, Layers: []v1.Descriptor{layer}}))
			}
			b.index(t, manifests...)
			return b.tar(t)
		}, "2 images for linux/amd64"},
		{"an index chain deeper than any real one", func(t *testing.T) []byte {
			b := newLayout()
			inner := b.json(t, types.OCIImageIndex, v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex})
			for range 6 {
				inner = b.json(t, types.OCIImageIndex, v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{inner}})
			}
			b.index(t, inner)
			return b.tar(t)
		}, "nested more than 4 deep"},
		{"a truncated archive", func(t *testing.T) []byte {
			a := simple(t, func(*layoutBuilder, *v1.Descriptor, *v1.Descriptor, *v1.Manifest) {})
			return a[:700]
		}, "reading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadBase(bytes.NewReader(tc.archive(t)), "", "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMergeEnv(t *testing.T) {
	for _, tc := range []struct{ base, over, want []string }{
		{nil, nil, nil},
		{[]string{"A=1"}, nil, []string{"A=1"}},
		{nil, []string{"A=1"}, []string{"A=1"}},
		{[]string{"A=1", "B=2"}, []string{"B=3", "C=4"}, []string{"A=1", "B=3", "C=4"}},
		{[]string{"A=1", "A=2"}, []string{"A"}, []string{"A"}},
		{[]string{"PATH=/a"}, []string{"PATH=/b", "PATH=/c"}, []string{"PATH=/c"}},
	} {
		if got := mergeEnv(tc.base, tc.over); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("mergeEnv(%v, %v) = %v, want %v", tc.base, tc.over, got, tc.want)
		}
	}
}
