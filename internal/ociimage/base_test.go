package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"
	"time"
)

// layoutBuilder assembles image-layout archives by hand, for the shapes
// Write never produces (Docker media types, gzip layers, history, several
// platforms) and for broken ones.
type layoutBuilder struct{ files map[string][]byte }

func newLayout() *layoutBuilder {
	return &layoutBuilder{files: map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)}}
}

func (b *layoutBuilder) blob(mediaType string, data []byte) Descriptor {
	d := descriptor(mediaType, data)
	b.files["blobs/sha256/"+hexOf(d.Digest)] = data
	return d
}

func (b *layoutBuilder) json(t *testing.T, mediaType string, v any) Descriptor {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b.blob(mediaType, data)
}

func (b *layoutBuilder) index(t *testing.T, ds ...Descriptor) {
	t.Helper()
	data, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: ds})
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

// image returns the manifest and config of the one image an archive's
// index names, every blob checked.
func image(t *testing.T, archive []byte) (map[string][]byte, Manifest, map[string]json.RawMessage, Config) {
	t.Helper()
	files := readArchive(t, archive)
	var idx Index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(blob(t, files, idx.Manifests[0]), &m); err != nil {
		t.Fatal(err)
	}
	cfgJSON := blob(t, files, m.Config)
	var raw map[string]json.RawMessage
	var cfg struct {
		Config Config `json:"config"`
	}
	if err := json.Unmarshal(cfgJSON, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		blob(t, files, l)
	}
	return files, m, raw, cfg.Config
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
	files, m, raw, cfg := image(t, out.Bytes())
	if bd := base.Layers[0].Descriptor; len(m.Layers) != 2 || m.Layers[0].Digest != bd.Digest || m.Layers[0].MediaType != bd.MediaType || m.Layers[0].Size != bd.Size {
		t.Fatalf("layers %+v, want the base's layer then the new one", m.Layers)
	}
	if !bytes.Equal(files["blobs/sha256/"+hexOf(m.Layers[0].Digest)], base.Layers[0].data) {
		t.Error("the base layer's bytes changed")
	}
	var rootfs struct {
		DiffIDs []string `json:"diff_ids"`
	}
	if err := json.Unmarshal(raw["rootfs"], &rootfs); err != nil {
		t.Fatal(err)
	}
	if len(rootfs.DiffIDs) != 2 || rootfs.DiffIDs[0] != base.Layers[0].DiffID || rootfs.DiffIDs[1] != m.Layers[1].Digest {
		t.Errorf("diff IDs %v", rootfs.DiffIDs)
	}
	if string(raw["created"]) != `"2026-01-02T03:04:05Z"` {
		t.Errorf("created %s", raw["created"])
	}
	// Kept from the base: user, working dir, a label and a variable not
	// overridden; replaced: the entrypoint (dropping the base's Cmd), A, x.
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
// Docker's media type, a config with history and fields Write does not
// model.
func dockerStyleBase(t *testing.T) (*layoutBuilder, []byte) {
	t.Helper()
	b := newLayout()
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: "etc/os-release", Mode: 0o644, Size: 3, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("x=1")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(layerTar.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	layer := b.blob(mediaTypeDockerLayerGzip, gz.Bytes())
	diffID := descriptor("", layerTar.Bytes()).Digest
	manifests := []Descriptor{}
	for _, arch := range []string{"arm64", "amd64"} {
		cfg := b.json(t, mediaTypeDockerConfig, map[string]any{
			"architecture": arch, "os": "linux",
			"config": map[string]any{
				"User": "65532", "Env": []string{"PATH=/usr/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
				"ExposedPorts": map[string]any{"8080/tcp": map[string]any{}}, "StopSignal": "SIGTERM",
			},
			"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID}},
			"history": []map[string]any{{"created_by": "base layer"}, {"created_by": "ENV x", "empty_layer": true}},
		})
		m := b.json(t, mediaTypeDockerManifest, Manifest{SchemaVersion: 2, MediaType: mediaTypeDockerManifest, Config: cfg, Layers: []Descriptor{layer}})
		m.Platform = &Platform{Architecture: arch, OS: "linux"}
		manifests = append(manifests, m)
	}
	list := b.json(t, mediaTypeDockerManifestList, Index{SchemaVersion: 2, MediaType: mediaTypeDockerManifestList, Manifests: manifests})
	b.index(t, list)
	return b, gz.Bytes()
}

func TestReadBaseFollowsAManifestListToThePlatformsImage(t *testing.T) {
	b, gz := dockerStyleBase(t)
	base, err := ReadBase(bytes.NewReader(b.tar(t)), "amd64", "linux")
	if err != nil {
		t.Fatal(err)
	}
	if base.Architecture != "amd64" || len(base.Layers) != 1 || base.Layers[0].Descriptor.MediaType != MediaTypeLayerGzip ||
		!bytes.Equal(base.Layers[0].data, gz) {
		t.Fatalf("base %+v", base)
	}
	var out bytes.Buffer
	if _, err := Write(&out, Image{Name: "example.local/app:1", Files: []File{{Path: "app", Data: []byte("a")}},
		Config: Config{Entrypoint: []string{"/app"}, User: "65532:65532"}, Base: base}); err != nil {
		t.Fatal(err)
	}
	_, m, raw, cfg := image(t, out.Bytes())
	if m.Layers[0].MediaType != MediaTypeLayerGzip || m.Layers[1].MediaType != MediaTypeLayer {
		t.Errorf("layer media types %s, %s", m.Layers[0].MediaType, m.Layers[1].MediaType)
	}
	if cfg.User != "65532:65532" || len(cfg.Env) != 2 {
		t.Errorf("config %+v", cfg)
	}
	var run map[string]json.RawMessage
	if err := json.Unmarshal(raw["config"], &run); err != nil {
		t.Fatal(err)
	}
	if string(run["StopSignal"]) != `"SIGTERM"` || !strings.Contains(string(run["ExposedPorts"]), "8080/tcp") {
		t.Errorf("fields of the base's config were lost: %s", raw["config"])
	}
	var history []map[string]any
	if err := json.Unmarshal(raw["history"], &history); err != nil {
		t.Fatal(err)
	}
	if len(history) != 3 || history[2]["created_by"] != "ociimage.Write" {
		t.Errorf("history %v, want the base's two entries and one for the new layer", history)
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
	simple := func(t *testing.T, mutate func(b *layoutBuilder, layer, cfg *Descriptor, m *Manifest)) []byte {
		b := newLayout()
		layer := b.blob(MediaTypeLayer, []byte("layer bytes"))
		cfg := b.json(t, MediaTypeConfig, map[string]any{"architecture": "amd64", "os": "linux",
			"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layer.Digest}}})
		m := Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Config: cfg, Layers: []Descriptor{layer}}
		mutate(b, &layer, &cfg, &m)
		m.Layers[0] = layer
		m.Config = cfg
		b.index(t, b.json(t, MediaTypeManifest, m))
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
			return simple(t, func(b *layoutBuilder, layer, _ *Descriptor, _ *Manifest) {
				b.files["blobs/sha256/"+hexOf(layer.Digest)] = []byte("LAYER bytes")
			})
		}, "does not match its descriptor"},
		{"a size that lies", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, layer, _ *Descriptor, _ *Manifest) { layer.Size++ })
		}, "does not match its descriptor"},
		{"a missing layer", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, _ *Descriptor, _ *Manifest) {
				delete(b.files, "blobs/sha256/"+hexOf(layer.Digest))
			})
		}, "missing from the archive"},
		{"a sha512 digest", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, layer, _ *Descriptor, _ *Manifest) {
				layer.Digest = "sha512:" + strings.Repeat("ab", 64)
			})
		}, "only sha256"},
		{"a foreign layer", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, layer, _ *Descriptor, _ *Manifest) {
				layer.MediaType = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"
			})
		}, "only (gzip or zstd compressed) tar layers"},
		{"diff IDs that do not match the layers", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, cfg *Descriptor, m *Manifest) {
				*cfg = b.json(t, MediaTypeConfig, map[string]any{"architecture": "amd64", "os": "linux",
					"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layer.Digest, layer.Digest}}})
			})
		}, "lists 2 layer diff IDs"},
		{"a config that is not one", func(t *testing.T) []byte {
			return simple(t, func(_ *layoutBuilder, _, cfg *Descriptor, _ *Manifest) { cfg.MediaType = MediaTypeLayer })
		}, "is not an image config"},
		{"only another platform", func(t *testing.T) []byte {
			return simple(t, func(b *layoutBuilder, layer, cfg *Descriptor, _ *Manifest) {
				*cfg = b.json(t, MediaTypeConfig, map[string]any{"architecture": "arm64", "os": "linux",
					"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layer.Digest}}})
			})
		}, "no image for linux/amd64"},
		{"two images for the platform", func(t *testing.T) []byte {
			var one, two bytes.Buffer
			if _, err := Write(&one, Image{Name: "a:1", Files: []File{{Path: "a", Data: []byte("1")}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := Write(&two, Image{Name: "b:1", Files: []File{{Path: "b", Data: []byte("2")}}}); err != nil {
				t.Fatal(err)
			}
			b := newLayout()
			var manifests []Descriptor
			for _, arch := range [][]byte{one.Bytes(), two.Bytes()} {
				files := readArchive(t, arch)
				for n, data := range files {
					if strings.HasPrefix(n, "blobs/") {
						b.files[n] = data
					}
				}
				var idx Index
				if err := json.Unmarshal(files["index.json"], &idx); err != nil {
					t.Fatal(err)
				}
				manifests = append(manifests, idx.Manifests...)
			}
			b.index(t, manifests...)
			return b.tar(t)
		}, "2 images for linux/amd64"},
		{"an index that names itself", func(t *testing.T) []byte {
			// A blob cannot contain its own digest, but a chain of
			// indexes deeper than any real one must end too.
			b := newLayout()
			inner := b.json(t, MediaTypeIndex, Index{SchemaVersion: 2, MediaType: MediaTypeIndex})
			for range 6 {
				inner = b.json(t, MediaTypeIndex, Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{inner}})
			}
			b.index(t, inner)
			return b.tar(t)
		}, "nested more than 4 deep"},
		{"a truncated archive", func(t *testing.T) []byte {
			a := simple(t, func(*layoutBuilder, *Descriptor, *Descriptor, *Manifest) {})
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
