// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// readBack unpacks an archive and opens it as an image layout with
// go-containerregistry, returning the layout's index.json.
func readBack(t *testing.T, archive []byte) (v1.ImageIndex, *v1.IndexManifest) {
	t.Helper()
	dir := t.TempDir()
	if err := extractArchive(bytes.NewReader(archive), dir); err != nil {
		t.Fatal(err)
	}
	var lv struct {
		Version string `json:"imageLayoutVersion"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "oci-layout")); err != nil || json.Unmarshal(b, &lv) != nil || lv.Version != "1.0.0" {
		t.Errorf("oci-layout = %q, %v", b, err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return idx, m
}

// onlyImage returns the one image an archive's index.json names, validated.
func onlyImage(t *testing.T, archive []byte) (v1.Image, v1.Descriptor) {
	t.Helper()
	idx, m := readBack(t, archive)
	if len(m.Manifests) == 0 {
		t.Fatal("the index names no image")
	}
	d := m.Manifests[0]
	img, err := idx.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("the image does not validate: %v", err)
	}
	return img, d
}

// layerHeaders lists a layer's entries (uncompressed) with their contents.
func layerHeaders(t *testing.T, l v1.Layer) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var hdrs []*tar.Header
	data := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hdrs, data
		}
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, h)
		data[h.Name], _ = io.ReadAll(tr)
	}
}

func TestWriteProducesAValidImageLayout(t *testing.T) {
	img := Image{
		Name: "example.local/app:v1",
		Files: []File{
			{Path: "bin/busybox", Mode: 0o755, Data: []byte("#!busybox")},
			{Path: "bin/sh", Link: "busybox"},
			{Path: "data", Dir: true, Mode: 0o775, UID: 1001, GID: 1001},
			{Path: "etc/empty", Mode: 0o644, Data: []byte{}},
		},
		Config: Config{Entrypoint: []string{"/bin/sh"}, User: "1001", Env: []string{"PATH=/bin"}},
	}
	var buf bytes.Buffer
	ref, err := Write(&buf, img)
	if err != nil {
		t.Fatal(err)
	}
	_, idx := readBack(t, buf.Bytes())
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest.String() != ref.ManifestDigest {
		t.Fatalf("index %+v does not point at manifest %s", idx, ref.ManifestDigest)
	}
	d := idx.Manifests[0]
	if a := d.Annotations; a[AnnotationImageName] != img.Name || a[AnnotationRefName] != "v1" {
		t.Errorf("index annotations %v", a)
	}
	if d.MediaType != types.OCIManifestSchema1 || d.Platform == nil || d.Platform.Architecture != "amd64" || d.Platform.OS != "linux" {
		t.Errorf("index entry %+v: want an OCI manifest for linux/amd64", d)
	}
	built, _ := onlyImage(t, buf.Bytes())
	cfgName, err := built.ConfigName()
	if err != nil || cfgName.String() != ref.ConfigDigest {
		t.Errorf("config digest %s (%v), Write said %s", cfgName, err, ref.ConfigDigest)
	}
	cfg, err := built.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "1001" || cfg.Config.Entrypoint[0] != "/bin/sh" || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("config %+v", cfg)
	}
	layers, err := built.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %v, %v", layers, err)
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s", mt)
	}

	// The layer: parents first, owners and modes as given, the symlink kept.
	hdrs, _ := layerHeaders(t, layers[0])
	var names []string
	headers := map[string]*tar.Header{}
	for _, h := range hdrs {
		names = append(names, h.Name)
		headers[h.Name] = h
	}
	want := []string{"bin/", "bin/busybox", "bin/sh", "data/", "etc/", "etc/empty"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("layer entries %v, want %v", names, want)
	}
	if h := headers["data/"]; h == nil || h.Uid != 1001 || h.Gid != 1001 || h.Mode != 0o775 {
		t.Errorf("data/ header %+v", h)
	}
	if h := headers["bin/sh"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("bin/sh header %+v", h)
	}
	if h := headers["bin/busybox"]; h == nil || h.Mode != 0o755 || h.Size != int64(len("#!busybox")) {
		t.Errorf("bin/busybox header %+v", h)
	}
}

func TestAlsoByDigestNamesTheManifestDigest(t *testing.T) {
	for _, tc := range []struct{ name, repo string }{
		{"example.local/app:v1", "example.local/app"},
		{"localhost:5000/app:v1", "localhost:5000/app"},
		{"localhost:5000/app", "localhost:5000/app"},
	} {
		var buf bytes.Buffer
		ref, err := Write(&buf, Image{Name: tc.name, AlsoByDigest: true, Files: []File{{Path: "a", Data: []byte("a")}}})
		if err != nil {
			t.Fatal(err)
		}
		_, idx := readBack(t, buf.Bytes())
		if len(idx.Manifests) != 2 {
			t.Fatalf("%s: %d index entries, want the tag and the digest", tc.name, len(idx.Manifests))
		}
		if got, want := idx.Manifests[1].Annotations[AnnotationImageName], tc.repo+"@"+ref.ManifestDigest; got != want ||
			idx.Manifests[1].Digest.String() != ref.ManifestDigest {
			t.Errorf("%s: second entry names %q (digest %s), want %q", tc.name, got, idx.Manifests[1].Digest, want)
		}
	}
}

func TestWriteIsReproducible(t *testing.T) {
	img := func() Image {
		return Image{Name: "example.local/a:1", Files: []File{
			{Path: "b", Mode: 0o644, Data: []byte("b")}, {Path: "a/x", Mode: 0o600, Data: []byte("x")},
		}}
	}
	var one, two bytes.Buffer
	r1, err := Write(&one, img())
	if err != nil {
		t.Fatal(err)
	}
	// The same files in another order give the same bytes.
	other := img()
	other.Files[0], other.Files[1] = other.Files[1], other.Files[0]
	r2, err := Write(&two, other)
	if err != nil {
		t.Fatal(err)
	}
	if r1 != r2 || !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Errorf("two writes of the same image differ: %+v vs %+v", r1, r2)
	}
	changed := img()
	changed.Files[0].Data = []byte("c")
	r3, err := Write(io.Discard, changed)
	if err != nil {
		t.Fatal(err)
	}
	if r3.ManifestDigest == r1.ManifestDigest {
		t.Error("changing a file did not change the manifest digest")
	}
}

func TestWriteRejectsBadImages(t *testing.T) {
	for _, tc := range []struct {
		name string
		img  Image
		want string
	}{
		{"no name", Image{Files: []File{{Path: "a", Data: []byte{}}}}, "no name"},
		{"absolute path", Image{Name: "x:1", Files: []File{{Path: "/etc/passwd", Data: []byte{}}}}, "relative"},
		{"dot-dot", Image{Name: "x:1", Files: []File{{Path: "a/../../etc", Data: []byte{}}}}, "leaves the image root"},
		{"root", Image{Name: "x:1", Files: []File{{Path: ".", Dir: true}}}, "image root"},
		{"duplicate", Image{Name: "x:1", Files: []File{{Path: "a", Data: []byte{}}, {Path: "./a", Data: []byte{}}}}, "twice"},
		{"data and link", Image{Name: "x:1", Files: []File{{Path: "a", Data: []byte{}, Link: "b"}}}, "one of"},
		{"file as parent", Image{Name: "x:1", Files: []File{{Path: "a", Data: []byte{}}, {Path: "a/b", Data: []byte{}}}}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Write(io.Discard, tc.img)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTheLayerIsGzipWithTheUncompressedDiffID(t *testing.T) {
	img := Image{Name: "example.local/a:1", Files: []File{{Path: "a", Mode: 0o644, Data: bytes.Repeat([]byte("abc"), 1000)}}}
	plain, err := layerTar(img.Files, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	plainDigest := descriptorOf("", plain).Digest
	var one bytes.Buffer
	ref, err := Write(&one, img)
	if err != nil {
		t.Fatal(err)
	}
	zimg, _ := onlyImage(t, one.Bytes())
	zl, err := zimg.Layers()
	if err != nil {
		t.Fatal(err)
	}
	mt, _ := zl[0].MediaType()
	size, _ := zl[0].Size()
	if mt != types.OCILayer || size >= int64(len(plain)) {
		t.Errorf("layer %s of %d bytes, want a gzip layer smaller than the plain one (%d bytes)", mt, size, len(plain))
	}
	// The diff ID names the uncompressed layer, as runtimes check it.
	if diffID, _ := zl[0].DiffID(); diffID != plainDigest {
		t.Errorf("diff ID %s, want the plain layer's digest %s", diffID, plainDigest)
	}
	rc, err := zl[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	unpacked, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unpacked, plain) {
		t.Error("the compressed layer does not unpack to the layer's tar")
	}
	if zr.Header.Name != "" || !zr.Header.ModTime.IsZero() {
		t.Errorf("gzip header carries a name %q or a time %v", zr.Header.Name, zr.Header.ModTime)
	}
	// The image stacks on as a base too.
	base, err := ReadBase(bytes.NewReader(one.Bytes()), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := base.Layers[0].DiffID(); base.ManifestDigest != ref.ManifestDigest || d != plainDigest {
		t.Errorf("ReadBase: %+v", base)
	}
}

func TestWriteIndexHoldsOneImagePerPlatform(t *testing.T) {
	images := func() []Image {
		var out []Image
		for _, arch := range []string{"amd64", "arm64"} {
			out = append(out, Image{Architecture: arch, Files: []File{{Path: "app", Mode: 0o755, Data: []byte("app for " + arch)}},
				Config: Config{Entrypoint: []string{"/app"}, User: "65532:65532"}})
		}
		return out
	}
	var buf bytes.Buffer
	ref, err := WriteIndex(&buf, "example.local/app:1.0.0", images(), true, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Images) != 2 || ref.Images[0].ManifestDigest == ref.Images[1].ManifestDigest {
		t.Fatalf("images %+v, want two different ones", ref.Images)
	}
	layoutIdx, top := readBack(t, buf.Bytes())
	if len(top.Manifests) != 2 || top.Manifests[0].Digest.String() != ref.IndexDigest || top.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json %+v, want the image index %s (by tag, then by digest)", top.Manifests, ref.IndexDigest)
	}
	if got := top.Manifests[1].Annotations[AnnotationImageName]; got != "example.local/app@"+ref.IndexDigest {
		t.Errorf("second entry names %q", got)
	}
	idx, err := layoutIdx.ImageIndex(top.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the index does not validate: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for i, arch := range []string{"amd64", "arm64"} {
		d := im.Manifests[i]
		if d.Platform == nil || d.Platform.Architecture != arch || d.Platform.OS != "linux" || d.Digest.String() != ref.Images[i].ManifestDigest {
			t.Errorf("entry %d: %+v, want %s for linux/%s", i, d, ref.Images[i].ManifestDigest, arch)
		}
		// Each platform's image reads back as a base for that platform.
		base, err := ReadBase(bytes.NewReader(buf.Bytes()), arch, "linux")
		if err != nil {
			t.Fatal(err)
		}
		if base.ManifestDigest != ref.Images[i].ManifestDigest || base.Architecture != arch {
			t.Errorf("ReadBase %s: %s %s", arch, base.ManifestDigest, base.Architecture)
		}
	}

	var again bytes.Buffer
	if _, err := WriteIndex(&again, "example.local/app:1.0.0", images(), true, time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two writes of the same index differ")
	}
	twice := append(images(), images()[0])
	if _, err := WriteIndex(io.Discard, "example.local/app:1", twice, false, time.Time{}); err == nil || !strings.Contains(err.Error(), "two images for linux/amd64") {
		t.Errorf("two amd64 images: %v", err)
	}
	if _, err := WriteIndex(io.Discard, "example.local/app:1", nil, false, time.Time{}); err == nil {
		t.Error("an empty index was written")
	}
}

// configJSON returns an image's raw config as a map, for fields v1.Config
// does not name.
func configJSON(t *testing.T, img v1.Image) map[string]json.RawMessage {
	t.Helper()
	b, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}
