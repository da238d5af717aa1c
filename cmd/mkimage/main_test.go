package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
	"github.com/kafka-chatops/kafkabot/internal/ociimage/botimage"
)

// These tests check the product image with skopeo, a tool that shares no
// code with ours: what it reads, copies and verifies is what a registry or
// a runtime will get. skopeo (Debian's package) and the cached
// ca-certificates package are installed by hack/test.sh; without them the
// tests skip locally and fail in CI.

// repoRoot makes the test run from the repository's root, as the command does.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	return root
}

func require(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI: %s (hack/test.sh installs it)", why)
	}
	t.Skipf("%s (hack/test.sh installs it)", why)
}

func requireTools(t *testing.T, root string) {
	t.Helper()
	_, err := exec.LookPath("skopeo")
	require(t, err == nil, "skopeo is not installed")
	_, err = exec.LookPath("dpkg-deb")
	require(t, err == nil, "dpkg-deb is not installed")
	debs, _ := filepath.Glob(filepath.Join(root, ".cache", "debs", botimage.CAPackage+"_*.deb"))
	require(t, len(debs) > 0, "no ca-certificates package in .cache/debs (bash hack/build-image.sh fetches it)")
}

func skopeo(t *testing.T, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("skopeo", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skopeo %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// printed parses the command's output: image, digest, file.
func printed(t *testing.T, out string) (ref, digest string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "image":
			ref = strings.TrimSpace(v)
		case "digest":
			digest = strings.TrimSpace(v)
		}
	}
	if ref == "" || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("output %q: want image: and digest: lines", out)
	}
	return ref, digest
}

// runConfig is what `skopeo inspect --config` shows of a config.
type runConfig struct {
	Config ociimage.Config `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

func TestTheProductImageIsReproducibleAndReadsBackWithSkopeo(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	dir := t.TempDir()

	// The first build: hack/test.sh's (KAFKABOT_IMAGE, with the digest it
	// printed), or one here.
	first, firstOut := os.Getenv("KAFKABOT_IMAGE"), os.Getenv("KAFKABOT_IMAGE_OUTPUT")
	if first == "" {
		first = filepath.Join(dir, "first.tar")
		var out bytes.Buffer
		if err := run([]string{"-out", first, "-no-download"}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		firstOut = out.String()
	}
	ref, digest := printed(t, firstOut)

	// The second: the documented command, from the same commit.
	second := filepath.Join(dir, "second.tar")
	cmd := exec.Command("bash", "hack/build-image.sh", second, "-no-download")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-image.sh: %v\n%s", err, stderr.String())
	}
	ref2, digest2 := printed(t, string(out))
	if ref2 != ref || digest2 != digest {
		t.Errorf("two builds of one commit: %s %s, then %s %s", ref, digest, ref2, digest2)
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of one commit wrote different archives")
	}

	// skopeo finds the manifest the digest names.
	manifest := skopeo(t, "inspect", "--raw", "oci-archive:"+second)
	if sum := sha256.Sum256(manifest); "sha256:"+hex.EncodeToString(sum[:]) != digest {
		t.Errorf("skopeo reads a manifest of digest sha256:%x, the build printed %s", sum, digest)
	}
	var cfg runConfig
	if err := json.Unmarshal(skopeo(t, "inspect", "--config", "oci-archive:"+second), &cfg); err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	version := git(t, "describe", "--tags", "--always", "--dirty")
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/bot"}) || !slices.Equal(c.Cmd, []string{"serve"}) {
		t.Errorf("config %+v: want user 65532:65532, entrypoint /bot, command serve", c)
	}
	if c.Labels[botimage.LabelVersion] != version || c.Labels[botimage.LabelRevision] != git(t, "rev-parse", "HEAD") ||
		c.Labels[botimage.LabelSource] != botimage.DefaultSource || c.Labels[botimage.LabelCreated] == "" {
		t.Errorf("labels %v: want version %s, HEAD's revision, the source", c.Labels, version)
	}
	if ref != botimage.DefaultRepository+":"+botimage.Tag(version) {
		t.Errorf("reference %s", ref)
	}

	// A copy that must keep digests (what a push with --preserve-digests
	// does) keeps the one printed: the layers are already compressed.
	ociDir := filepath.Join(dir, "oci")
	skopeo(t, "copy", "--quiet", "--preserve-digests", "oci-archive:"+second, "oci:"+ociDir+":t")
	var idx ociimage.Index
	readJSON(t, filepath.Join(ociDir, "index.json"), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != digest {
		t.Errorf("after skopeo copy the index names %+v, want %s", idx.Manifests, digest)
	}

	// The files, as skopeo copies them out, verified against their digests.
	files := unpack(t, skopeo, second, filepath.Join(dir, "dir"))
	bot, ok := files["bot"]
	if !ok || bot.mode&0o111 == 0 {
		t.Fatalf("no executable /bot in the image (%v)", keys(files))
	}
	for name := range files {
		if strings.HasPrefix(name, "bin/") || strings.HasPrefix(name, "usr/") || filepath.Base(name) == "sh" {
			t.Errorf("the image holds %s; it has no shell and no other programs", name)
		}
	}
	pool := x509.NewCertPool()
	if ca := files["etc/ssl/certs/ca-certificates.crt"]; !pool.AppendCertsFromPEM(ca.data) || strings.Count(string(ca.data), "BEGIN CERTIFICATE") < 100 {
		t.Errorf("the CA bundle is missing or holds fewer than 100 certificates")
	}
	if !strings.Contains(string(files["etc/passwd"].data), ":65532:65532:") {
		t.Errorf("/etc/passwd %q names no user 65532", files["etc/passwd"].data)
	}
	// The entrypoint is the bot of this commit: it runs here (static) and
	// reports the labelled version.
	botPath := filepath.Join(dir, "bot")
	if err := os.WriteFile(botPath, bot.data, 0o755); err != nil {
		t.Fatal(err)
	}
	vout, err := exec.Command(botPath, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(vout), version) {
		t.Errorf("/bot version: %q, %v; want %s", vout, err, version)
	}
}

func TestTheBaseOptionStacksTheBotOnABase(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	dir := t.TempDir()

	// A base as `skopeo copy docker://...distroless/static:nonroot
	// oci-archive:` gives, made here: its own users, CA bundle and
	// environment, a compressed layer, a named user.
	base := filepath.Join(dir, "base.tar")
	f, err := os.Create(base)
	if err != nil {
		t.Fatal(err)
	}
	baseRef, err := ociimage.Write(f, ociimage.Image{
		Name: "example.local/static:nonroot",
		Files: []ociimage.File{
			{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
			{Path: "etc/os-release", Mode: 0o644, Data: []byte("ID=test-base\n")},
		},
		Config: ociimage.Config{User: "nonroot", WorkingDir: "/home/nonroot", Env: []string{"PATH=/usr/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}},
		Gzip:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "on-base.tar")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-out", out, "-base", base, "-no-download"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), baseRef.ManifestDigest) {
		t.Errorf("the build does not report the base it used: %q", stderr.String())
	}
	_, digest := printed(t, stdout.String())

	var cfg runConfig
	if err := json.Unmarshal(skopeo(t, "inspect", "--config", "oci-archive:"+out), &cfg); err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if c.User != "65532:65532" || c.WorkingDir != "/home/nonroot" || !slices.Contains(c.Env, "PATH=/usr/bin") ||
		!slices.Equal(c.Entrypoint, []string{"/bot"}) || c.Labels[botimage.LabelSource] != botimage.DefaultSource {
		t.Errorf("config %+v", c)
	}
	if len(cfg.RootFS.DiffIDs) != 2 {
		t.Errorf("%d layers, want the base's and the bot's", len(cfg.RootFS.DiffIDs))
	}
	ociDir := filepath.Join(dir, "oci")
	skopeo(t, "copy", "--quiet", "--preserve-digests", "oci-archive:"+out, "oci:"+ociDir+":t")
	var idx ociimage.Index
	readJSON(t, filepath.Join(ociDir, "index.json"), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != digest {
		t.Errorf("after skopeo copy the index names %+v, want %s", idx.Manifests, digest)
	}
	files := unpack(t, skopeo, out, filepath.Join(dir, "dir"))
	if string(files["etc/os-release"].data) != "ID=test-base\n" || files["bot"].data == nil {
		t.Errorf("the image's files %v: want the base's and /bot", keys(files))
	}
	if _, ok := files["etc/ssl/certs/ca-certificates.crt"]; ok {
		t.Error("a CA bundle was added on top of the base's")
	}

	// A base that is not an image layout is refused with its name.
	bad := filepath.Join(dir, "bad.tar")
	if err := os.WriteFile(bad, []byte("not a tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run([]string{"-out", filepath.Join(dir, "x.tar"), "-base", bad, "-no-download"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a bad base: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "x.tar")); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a failed build left an output behind: %v", statErr)
	}
}

func TestRunRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"out.tar"}, "unexpected arguments"},
		{[]string{"-created", "yesterday"}, "want Unix seconds"},
		{[]string{"-created", "-5"}, "want Unix seconds"},
		{[]string{"-base", "/nonexistent/base.tar"}, "/nonexistent/base.tar"},
	} {
		err := run(tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q): %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

type file struct {
	mode int64
	data []byte
}

// unpack copies the image with `skopeo copy oci-archive: dir:` (which
// checks every blob) and applies its layers in order.
func unpack(t *testing.T, skopeo func(*testing.T, ...string) []byte, archive, dir string) map[string]file {
	t.Helper()
	skopeo(t, "copy", "--quiet", "oci-archive:"+archive, "dir:"+dir)
	var m ociimage.Manifest
	readJSON(t, filepath.Join(dir, "manifest.json"), &m)
	files := map[string]file{}
	for _, l := range m.Layers {
		blob, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(l.Digest, "sha256:")))
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = bytes.NewReader(blob)
		if strings.HasSuffix(l.MediaType, "+gzip") {
			if r, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				files[strings.TrimPrefix(h.Name, "./")] = file{mode: h.Mode, data: data}
			}
		}
	}
	return files
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func keys(m map[string]file) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
