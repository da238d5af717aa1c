// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

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
type runConfig = v1.ConfigFile

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
	version, err := botimage.ReadVersion(root)
	if err != nil {
		t.Fatal(err)
	}
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
	var idx v1.IndexManifest
	readJSON(t, filepath.Join(ociDir, "index.json"), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest.String() != digest {
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
	if wantCommit := "commit " + git(t, "rev-parse", "HEAD")[:12]; err != nil || !strings.Contains(string(vout), "bot "+version+" ("+wantCommit) {
		t.Errorf("/bot version: %q, %v; want %s (%s, ...)", vout, err, version, wantCommit)
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
	var idx v1.IndexManifest
	readJSON(t, filepath.Join(ociDir, "index.json"), &idx)
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest.String() != digest {
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

// TestTheMultiArchImageReadsBackWithSkopeo builds the release's image, for
// linux/amd64 and linux/arm64, from scratch and on a two-platform base (as
// `skopeo copy --all docker://gcr.io/distroless/static-debian12:nonroot
// oci-archive:` gives), and reads each back with skopeo: an OCI image index
// naming one image per platform, each with the bot built for it.
func TestTheMultiArchImageReadsBackWithSkopeo(t *testing.T) {
	root := repoRoot(t)
	requireTools(t, root)
	dir := t.TempDir()

	// A two-platform base, its files marking the platform.
	var baseImages []ociimage.Image
	for _, arch := range []string{"amd64", "arm64"} {
		baseImages = append(baseImages, ociimage.Image{
			Architecture: arch,
			Files: []ociimage.File{
				{Path: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
				{Path: "etc/os-release", Mode: 0o644, Data: []byte("ID=test-base-" + arch + "\n")},
			},
			Config: ociimage.Config{User: "nonroot", Env: []string{"PATH=/usr/bin"}},
		})
	}
	base := filepath.Join(dir, "base.tar")
	var baseBuf bytes.Buffer
	baseRef, err := ociimage.WriteIndex(&baseBuf, "example.local/static:nonroot", baseImages, false, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, baseBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"from scratch", nil},
		{"on a base", []string{"-base", base}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "multi.tar")
			var stdout, stderr bytes.Buffer
			args := append([]string{"-out", out, "-no-download", "-platforms", "linux/amd64,linux/arm64"}, tc.args...)
			if err := run(args, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			_, digest := printed(t, stdout.String())
			perArch := map[string]string{}
			for _, line := range strings.Split(stdout.String(), "\n") {
				if k, v, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(k, "linux/") {
					perArch[strings.TrimPrefix(k, "linux/")] = strings.TrimSpace(v)
				}
			}

			// skopeo reads the index the printed digest names.
			raw := skopeo(t, "inspect", "--raw", "oci-archive:"+out)
			if sum := sha256.Sum256(raw); "sha256:"+hex.EncodeToString(sum[:]) != digest {
				t.Errorf("skopeo reads an index of digest sha256:%x, the build printed %s", sum, digest)
			}
			var idx v1.IndexManifest
			if err := json.Unmarshal(raw, &idx); err != nil {
				t.Fatal(err)
			}
			if idx.MediaType != "application/vnd.oci.image.index.v1+json" || len(idx.Manifests) != 2 {
				t.Fatalf("skopeo reads %s with %d manifests, want an OCI image index of 2", idx.MediaType, len(idx.Manifests))
			}
			for _, d := range idx.Manifests {
				arch := d.Platform.Architecture
				if d.Platform.OS != "linux" || d.Digest.String() != perArch[arch] {
					t.Errorf("index entry %+v; the build printed %v", d, perArch)
				}
				// skopeo picks the platform's image, as a node of that
				// architecture pulling the index would.
				var cfg runConfig
				if err := json.Unmarshal(skopeo(t, "--override-arch", arch, "--override-os", "linux", "inspect", "--config", "oci-archive:"+out), &cfg); err != nil {
					t.Fatal(err)
				}
				if cfg.Architecture != arch || cfg.Config.User != "65532:65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/bot"}) {
					t.Errorf("%s: config %+v", arch, cfg)
				}
				files := unpackArch(t, out, arch, filepath.Join(t.TempDir(), arch))
				bot, err := elf.NewFile(bytes.NewReader(files["bot"].data))
				if err != nil {
					t.Fatalf("%s: /bot: %v", arch, err)
				}
				want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
				if bot.Machine != want {
					t.Errorf("%s image: /bot is for %v", arch, bot.Machine)
				}
				if len(tc.args) > 0 && string(files["etc/os-release"].data) != "ID=test-base-"+arch+"\n" {
					t.Errorf("%s image: os-release %q, want the %s base's", arch, files["etc/os-release"].data, arch)
				}
			}
			if len(tc.args) > 0 && !strings.Contains(stderr.String(), baseRef.Images[1].ManifestDigest) {
				t.Errorf("the build does not report the arm64 base it used: %q", stderr.String())
			}

			// A push (what hack/release.sh --push does, to a registry on
			// loopback here: go-containerregistry's) copies the whole index,
			// digests kept, and a pull of the tag by either architecture
			// gets its image.
			reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
			t.Cleanup(reg.Close)
			dest := "docker://" + strings.TrimPrefix(reg.URL, "http://") + "/kafkabot:0.0.0-test"
			skopeo(t, "copy", "--quiet", "--all", "--preserve-digests", "--dest-tls-verify=false", "oci-archive:"+out, dest)
			pushed := skopeo(t, "inspect", "--raw", "--tls-verify=false", dest)
			if sum := sha256.Sum256(pushed); "sha256:"+hex.EncodeToString(sum[:]) != digest {
				t.Errorf("the registry serves an index of digest sha256:%x, the build printed %s", sum, digest)
			}
			for arch := range perArch {
				var cfg runConfig
				if err := json.Unmarshal(skopeo(t, "--override-arch", arch, "--override-os", "linux", "inspect", "--config", "--tls-verify=false", dest), &cfg); err != nil {
					t.Fatal(err)
				}
				if cfg.Architecture != arch {
					t.Errorf("a linux/%s pull of %s gets an image for %s", arch, dest, cfg.Architecture)
				}
			}
		})
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
		{[]string{"-platforms", "linux/amd64,windows/amd64"}, "not linux/ARCH"},
		{[]string{"-platforms", "linux/arm64,linux/arm64"}, "listed twice"},
		{[]string{"-platforms", "linux/arm64", "-arch", "arm64"}, "exclude each other"},
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
	return applyLayers(t, dir)
}

// unpackArch is unpack for the image of one architecture of an index.
func unpackArch(t *testing.T, archive, arch, dir string) map[string]file {
	t.Helper()
	skopeo(t, "--override-arch", arch, "--override-os", "linux", "copy", "--quiet", "oci-archive:"+archive, "dir:"+dir)
	return applyLayers(t, dir)
}

// applyLayers applies the layers of an image skopeo copied to dir.
func applyLayers(t *testing.T, dir string) map[string]file {
	t.Helper()
	var m v1.Manifest
	readJSON(t, filepath.Join(dir, "manifest.json"), &m)
	files := map[string]file{}
	for _, l := range m.Layers {
		blob, err := os.ReadFile(filepath.Join(dir, l.Digest.Hex))
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = bytes.NewReader(blob)
		if strings.HasSuffix(string(l.MediaType), "+gzip") {
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
