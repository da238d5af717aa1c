// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package botimage

import (
	"archive/tar"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
)

// minimalELF returns the smallest 64-bit little-endian ELF executable
// debug/elf reads: a header and one program header, PT_LOAD or, for a
// dynamically linked binary, PT_INTERP.
func minimalELF(machine elf.Machine, interp bool) []byte {
	var b bytes.Buffer
	ident := [16]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	b.Write(ident[:])
	le := binary.LittleEndian
	put := func(v any) { _ = binary.Write(&b, le, v) }
	put(uint16(elf.ET_EXEC))
	put(uint16(machine))
	put(uint32(elf.EV_CURRENT))
	put(uint64(0x400000)) // entry
	put(uint64(64))       // program headers right after this header
	put(uint64(0))        // no section headers
	put(uint32(0))        // flags
	put(uint16(64))       // header size
	put(uint16(56))       // program header size
	put(uint16(1))        // one program header
	put(uint16(64))       // section header size
	put(uint16(0))
	put(uint16(0))
	typ := elf.PT_LOAD
	if interp {
		typ = elf.PT_INTERP
	}
	put(uint32(typ))
	put(uint32(elf.PF_R | elf.PF_X))
	for range 6 { // offset, vaddr, paddr, filesz, memsz, align
		put(uint64(0))
	}
	return b.Bytes()
}

// caBundle returns a PEM bundle of n self-signed certificates.
func caBundle(t *testing.T, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	for i := range n {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: "test CA"},
			NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
		if err != nil {
			t.Fatal(err)
		}
		if err := pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der}); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func options(t *testing.T) Options {
	return Options{
		Binary:   minimalELF(elf.EM_X86_64, false),
		CABundle: caBundle(t, 2),
		Version:  "v1.2.3-4-gabcdef0", Revision: "abcdef0123456789abcdef0123456789abcdef01",
		Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("CET", 3600)),
	}
}

// built is an image written and read back.
type built struct {
	ref     ociimage.Ref
	archive []byte
	config  v1.Config
	created string
	layers  [][]*tar.Header // per layer, its entries
	data    map[string][]byte
}

// build writes the image and reads it back with ociimage.ReadBase, which
// verifies every blob with go-containerregistry's validate.
func build(t *testing.T, o Options) built {
	t.Helper()
	img, err := Image(o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ref, err := ociimage.Write(&buf, img)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ociimage.ReadBase(bytes.NewReader(buf.Bytes()), img.Architecture, "linux")
	if err != nil {
		t.Fatal(err)
	}
	if back.ManifestDigest != ref.ManifestDigest {
		t.Fatalf("read back %s, wrote %s", back.ManifestDigest, ref.ManifestDigest)
	}
	out := built{ref: ref, archive: buf.Bytes(), data: map[string][]byte{}, config: back.Config, created: back.Created.UTC().Format(time.RFC3339)}
	for _, l := range back.Layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		var hdrs []*tar.Header
		lr := tar.NewReader(rc)
		for {
			h, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			hdrs = append(hdrs, h)
			out.data[h.Name], _ = io.ReadAll(lr)
		}
		rc.Close()
		out.layers = append(out.layers, hdrs)
	}
	return out
}

func TestImageFromScratchHasTheRuntimeShape(t *testing.T) {
	o := options(t)
	b := build(t, o)
	c := b.config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/bot"}) || !slices.Equal(c.Cmd, []string{"serve"}) {
		t.Errorf("user %q entrypoint %q cmd %q, want 65532:65532 [/bot] [serve]", c.User, c.Entrypoint, c.Cmd)
	}
	if b.ref.Name != "ghcr.io/kafka-chatops/kafkabot:v1.2.3-4-gabcdef0" {
		t.Errorf("name %s", b.ref.Name)
	}
	wantLabels := map[string]string{
		LabelTitle: "kafkabot", LabelVersion: o.Version, LabelRevision: o.Revision,
		LabelSource: "https://github.com/kafka-chatops/kafkabot", LabelCreated: "2026-11-30T11:00:00Z",
	}
	if !mapsEqual(c.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", c.Labels, wantLabels)
	}
	if b.created != "2026-11-30T11:00:00Z" {
		t.Errorf("config created %s, want the commit time in UTC", b.created)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("env %v", c.Env)
	}

	if len(b.layers) != 1 {
		t.Fatalf("%d layers, want 1", len(b.layers))
	}
	var names []string
	for _, h := range b.layers[0] {
		names = append(names, h.Name)
		// Nothing the bot's user could change, but its home.
		if h.Uid != 0 && h.Name != "home/nonroot/" {
			t.Errorf("%s is owned by %d", h.Name, h.Uid)
		}
		if base := filepath.Base(h.Name); slices.Contains([]string{"sh", "bash", "ash", "dash", "busybox"}, base) {
			t.Errorf("the image holds a shell: %s", h.Name)
		}
	}
	want := []string{"bot", "etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "home/", "home/nonroot/"}
	if !slices.Equal(names, want) {
		t.Errorf("layer entries %v, want exactly %v (no shell, no /bin)", names, want)
	}
	for _, h := range b.layers[0] {
		switch h.Name {
		case "bot":
			if h.Mode != 0o755 || !bytes.Equal(b.data["bot"], o.Binary) {
				t.Errorf("bot: mode %o, %d bytes", h.Mode, len(b.data["bot"]))
			}
		case "home/nonroot/":
			if h.Uid != UID || h.Gid != GID || h.Mode != 0o700 {
				t.Errorf("home: %d:%d %o", h.Uid, h.Gid, h.Mode)
			}
		}
	}
	if !bytes.Equal(b.data["etc/ssl/certs/ca-certificates.crt"], o.CABundle) {
		t.Error("the CA bundle is not the one given")
	}
	if !strings.Contains(string(b.data["etc/passwd"]), "nonroot:x:65532:65532:") ||
		!strings.Contains(string(b.data["etc/group"]), "nonroot:x:65532:") {
		t.Errorf("passwd %q group %q do not name 65532", b.data["etc/passwd"], b.data["etc/group"])
	}
}

func TestImageIsReproducible(t *testing.T) {
	o := options(t)
	one, two := build(t, o), build(t, o)
	if one.ref != two.ref || !bytes.Equal(one.archive, two.archive) {
		t.Errorf("two builds differ: %+v, %+v", one.ref, two.ref)
	}
	for name, change := range map[string]func(*Options){
		"revision": func(o *Options) { o.Revision = "0000000000000000000000000000000000000000" },
		"time":     func(o *Options) { o.Created = o.Created.Add(time.Second) },
		"binary":   func(o *Options) { o.Binary = append(slices.Clone(o.Binary), 0) },
	} {
		other := o
		change(&other)
		if build(t, other).ref.ManifestDigest == one.ref.ManifestDigest {
			t.Errorf("changing the %s kept the digest", name)
		}
	}
}

func TestImageOnABaseAddsTheBotOnly(t *testing.T) {
	var baseTar bytes.Buffer
	if _, err := ociimage.Write(&baseTar, ociimage.Image{
		Name: "example.local/static:nonroot",
		Files: []ociimage.File{
			{Path: "etc/passwd", Mode: 0o644, Data: []byte("nonroot:x:65532:65532::/home/nonroot:/sbin/nologin\n")},
			{Path: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: caBundle(t, 1)},
		},
		Config: ociimage.Config{User: "nonroot", WorkingDir: "/home/nonroot", Env: []string{"PATH=/usr/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}},
	}); err != nil {
		t.Fatal(err)
	}
	base, err := ociimage.ReadBase(bytes.NewReader(baseTar.Bytes()), "", "")
	if err != nil {
		t.Fatal(err)
	}
	o := options(t)
	if _, err := Image(o); err != nil {
		t.Fatal(err)
	}
	o.Base = base
	if _, err := Image(o); err == nil || !strings.Contains(err.Error(), "brings its own") {
		t.Errorf("a CA bundle on a base: %v", err)
	}
	o.CABundle = nil
	b := build(t, o)
	if len(b.layers) != 2 || len(b.layers[1]) != 1 || b.layers[1][0].Name != "bot" {
		t.Fatalf("layers %v, want the base's then one holding bot only", b.layers)
	}
	c := b.config
	// The user is the Dockerfile's numeric one (runAsNonRoot cannot verify
	// a name); the base's environment and working directory stay.
	if c.User != User || c.WorkingDir != "/home/nonroot" || !slices.Equal(c.Env, []string{"PATH=/usr/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}) ||
		!slices.Equal(c.Entrypoint, Entrypoint) || c.Labels[LabelVersion] != o.Version {
		t.Errorf("config %+v", c)
	}
}

func TestImageRefusesWhatWouldNotRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, o *Options)
		want   string
	}{
		{"a dynamically linked bot", func(_ *testing.T, o *Options) { o.Binary = minimalELF(elf.EM_X86_64, true) }, "dynamically linked"},
		{"a bot for arm64", func(_ *testing.T, o *Options) { o.Binary = minimalELF(elf.EM_AARCH64, false) }, "is for EM_AARCH64"},
		{"a script", func(_ *testing.T, o *Options) { o.Binary = []byte("#!/bin/sh\necho hi\n") }, "not an ELF"},
		{"no bot", func(_ *testing.T, o *Options) { o.Binary = nil }, "empty"},
		{"no CA bundle", func(_ *testing.T, o *Options) { o.CABundle = nil }, "no certificate"},
		{"a key in the CA bundle", func(t *testing.T, o *Options) {
			o.CABundle = append(o.CABundle, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}})...)
		}, `"PRIVATE KEY"`},
		{"garbage after the certificates", func(_ *testing.T, o *Options) { o.CABundle = append(o.CABundle, "junk"...) }, "not PEM"},
		{"no version", func(_ *testing.T, o *Options) { o.Version = "" }, "version"},
		{"no revision", func(_ *testing.T, o *Options) { o.Revision = "" }, "revision"},
		{"no time", func(_ *testing.T, o *Options) { o.Created = time.Time{} }, "creation time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t)
			tc.change(t, &o)
			_, err := Image(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTag(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":                  "v1.2.3",
		"v1.2.3-4-gabcdef0-dirty": "v1.2.3-4-gabcdef0-dirty",
		"release/v1+build":        "release-v1-build",
		"-x":                      "v-x",
		"":                        "v",
		strings.Repeat("a", 200):  strings.Repeat("a", 128),
	} {
		if got := Tag(in); got != want {
			t.Errorf("Tag(%q) = %q, want %q", in, got, want)
		}
	}
}

// dockerfileStage returns the instructions of the Dockerfile's last stage,
// continuation lines joined.
func dockerfileStage(t *testing.T) [][2]string {
	t.Helper()
	b, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		instr, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		if strings.EqualFold(instr, "FROM") {
			out = nil
		}
		out = append(out, [2]string{strings.ToUpper(instr), strings.TrimSpace(args)})
	}
	return out
}

func TestDockerfileShipsTheSameRuntimeShape(t *testing.T) {
	stage := dockerfileStage(t)
	args := map[string]bool{}
	labels := map[string]string{}
	var user, copyDest string
	var entrypoint, cmd []string
	for _, in := range stage {
		switch in[0] {
		case "ARG":
			name, _, _ := strings.Cut(in[1], "=")
			args[name] = true
		case "USER":
			user = in[1]
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in[1]), &entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT %s is not the exec (JSON) form: %v", in[1], err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(in[1]), &cmd); err != nil {
				t.Fatalf("CMD %s is not the exec (JSON) form: %v", in[1], err)
			}
		case "COPY":
			f := strings.Fields(in[1])
			copyDest = f[len(f)-1]
		case "LABEL":
			for _, kv := range strings.Fields(in[1]) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("LABEL %q: want key=value pairs", in[1])
				}
				labels[k] = strings.Trim(v, `"`)
			}
		}
	}
	if user != User || !slices.Equal(entrypoint, Entrypoint) || !slices.Equal(cmd, Cmd) || copyDest != BinaryPath {
		t.Errorf("Dockerfile: USER %q ENTRYPOINT %q CMD %q COPY to %q; the OCI build: %q %q %q %q",
			user, entrypoint, cmd, copyDest, User, Entrypoint, Cmd, BinaryPath)
	}
	o := options(t)
	img, err := Image(o)
	if err != nil {
		t.Fatal(err)
	}
	// The same label keys; fixed values equal, per-build ones from ARGs.
	fromBuild := map[string]string{LabelVersion: "${VERSION}", LabelRevision: "${REVISION}", LabelCreated: "${CREATED}"}
	for k, v := range img.Config.Labels {
		got, ok := labels[k]
		switch {
		case !ok:
			t.Errorf("the Dockerfile has no LABEL %s", k)
		case fromBuild[k] != "":
			if got != fromBuild[k] || !args[strings.Trim(got, "${}")] {
				t.Errorf("LABEL %s=%s, want %s from an ARG of the stage", k, got, fromBuild[k])
			}
		case got != v:
			t.Errorf("LABEL %s=%q, the OCI build says %q", k, got, v)
		}
	}
	for k := range labels {
		if _, ok := img.Config.Labels[k]; !ok {
			t.Errorf("the Dockerfile's LABEL %s is not in the OCI build", k)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// requireTool returns the tool's path; a missing tool skips the test
// locally and fails it in CI.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

func TestCABundleFromDebIsTheMozillaCertificatesInOrder(t *testing.T) {
	requireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "pkg")
	moz := filepath.Join(root, "usr", "share", "ca-certificates", "mozilla")
	if err := os.MkdirAll(moz, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: ca-certificates\nVersion: 1\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: test\n"
	certs := caBundle(t, 3)
	var blocks [][]byte
	for rest := certs; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		blocks = append(blocks, pem.EncodeToMemory(b))
	}
	for path, data := range map[string][]byte{
		filepath.Join(root, "DEBIAN", "control"): []byte(control),
		filepath.Join(moz, "B_Root.crt"):         bytes.TrimSuffix(blocks[1], []byte("\n")), // no final newline
		filepath.Join(moz, "A_Root.crt"):         blocks[0],
		filepath.Join(moz, "C_Root.crt"):         blocks[2],
		filepath.Join(moz, "README"):             []byte("not a certificate"),
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deb := filepath.Join(dir, "ca-certificates_1_all.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "-b", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -b: %v\n%s", err, out)
	}
	got, err := CABundleFromDeb(deb)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(blocks, nil); !bytes.Equal(got, want) {
		t.Errorf("bundle:\n%s\nwant A, B, C each ending in a newline:\n%s", got, want)
	}

	// FetchDeb finds it in its cache, and never downloads when told not to.
	if p, err := FetchDeb(dir, CAPackage, false); err != nil || p != deb {
		t.Errorf("FetchDeb = %q, %v; want %s", p, err, deb)
	}
	if _, err := FetchDeb(t.TempDir(), CAPackage, false); err == nil || !strings.Contains(err.Error(), "downloading is off") {
		t.Errorf("FetchDeb on an empty cache without download: %v", err)
	}

	// A package without the certificates is refused, not an empty bundle.
	if err := os.RemoveAll(filepath.Join(root, "usr")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "-b", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -b: %v\n%s", err, out)
	}
	if _, err := CABundleFromDeb(deb); err == nil || !strings.Contains(err.Error(), "no Mozilla certificates") {
		t.Errorf("a package without certificates: %v", err)
	}
}
