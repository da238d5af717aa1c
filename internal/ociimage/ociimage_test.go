package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// readArchive returns every regular file of an image-layout tar by name.
func readArchive(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[h.Name] = data
		}
	}
}

// blob returns the blob a descriptor names, checking its digest and size.
func blob(t *testing.T, files map[string][]byte, d Descriptor) []byte {
	t.Helper()
	data, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
	if !ok {
		t.Fatalf("blob %s is missing", d.Digest)
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != d.Digest || int64(len(data)) != d.Size {
		t.Fatalf("blob %s: digest %s size %d, descriptor says size %d", d.Digest, got, len(data), d.Size)
	}
	return data
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
	files := readArchive(t, buf.Bytes())
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", files["oci-layout"])
	}
	var idx Index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != ref.ManifestDigest {
		t.Fatalf("index %+v does not point at manifest %s", idx, ref.ManifestDigest)
	}
	if a := idx.Manifests[0].Annotations; a[AnnotationImageName] != img.Name || a[AnnotationRefName] != "v1" {
		t.Errorf("index annotations %v", a)
	}
	var m Manifest
	if err := json.Unmarshal(blob(t, files, idx.Manifests[0]), &m); err != nil {
		t.Fatal(err)
	}
	if m.Config.Digest != ref.ConfigDigest || len(m.Layers) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	var cfg imageConfig
	if err := json.Unmarshal(blob(t, files, m.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "1001" || cfg.Config.Entrypoint[0] != "/bin/sh" || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("config %+v", cfg)
	}
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != m.Layers[0].Digest {
		t.Errorf("diff IDs %v, layer %s", cfg.RootFS.DiffIDs, m.Layers[0].Digest)
	}

	// The layer: parents first, owners and modes as given, the symlink kept.
	tr := tar.NewReader(bytes.NewReader(blob(t, files, m.Layers[0])))
	var names []string
	headers := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
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
		var idx Index
		if err := json.Unmarshal(readArchive(t, buf.Bytes())["index.json"], &idx); err != nil {
			t.Fatal(err)
		}
		if len(idx.Manifests) != 2 {
			t.Fatalf("%s: %d index entries, want the tag and the digest", tc.name, len(idx.Manifests))
		}
		if got, want := idx.Manifests[1].Annotations[AnnotationImageName], tc.repo+"@"+ref.ManifestDigest; got != want ||
			idx.Manifests[1].Digest != ref.ManifestDigest {
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

func TestGzipLayerKeepsTheUncompressedDiffID(t *testing.T) {
	img := Image{Name: "example.local/a:1", Files: []File{{Path: "a", Mode: 0o644, Data: bytes.Repeat([]byte("abc"), 1000)}}}
	var plain bytes.Buffer
	if _, err := Write(&plain, img); err != nil {
		t.Fatal(err)
	}
	_, pm, _, _ := image(t, plain.Bytes())
	img.Gzip = true
	var one, two bytes.Buffer
	ref, err := Write(&one, img)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(&two, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Error("two compressed writes differ")
	}
	files, m, raw, _ := image(t, one.Bytes())
	if m.Layers[0].MediaType != MediaTypeLayerGzip || m.Layers[0].Size >= pm.Layers[0].Size {
		t.Errorf("layer %+v, want a gzip layer smaller than the plain one (%d bytes)", m.Layers[0], pm.Layers[0].Size)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(t, files, m.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	unpacked, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unpacked, blob(t, readArchive(t, plain.Bytes()), pm.Layers[0])) {
		t.Error("the compressed layer does not unpack to the plain layer")
	}
	// The diff ID names the uncompressed layer, as runtimes check it.
	var rootfs struct {
		DiffIDs []string `json:"diff_ids"`
	}
	if err := json.Unmarshal(raw["rootfs"], &rootfs); err != nil {
		t.Fatal(err)
	}
	if len(rootfs.DiffIDs) != 1 || rootfs.DiffIDs[0] != pm.Layers[0].Digest {
		t.Errorf("diff IDs %v, want the plain layer's digest %s", rootfs.DiffIDs, pm.Layers[0].Digest)
	}
	if zr.Header.Name != "" || !zr.Header.ModTime.IsZero() {
		t.Errorf("gzip header carries a name %q or a time %v", zr.Header.Name, zr.Header.ModTime)
	}
	// The compressed image stacks on as a base too.
	base, err := ReadBase(bytes.NewReader(one.Bytes()), "", "")
	if err != nil || base.ManifestDigest != ref.ManifestDigest || base.Layers[0].DiffID != pm.Layers[0].Digest {
		t.Errorf("ReadBase: %+v, %v", base, err)
	}
}
