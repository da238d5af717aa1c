// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package botimage assembles the bot's container image: the one the product
// ships (cmd/mkimage, hack/build-image.sh) and the one the real-node tests
// run (test/realnode/cmd/mkimages), so that both are the same bytes for the
// same tree.
//
// Without a base the image is built from scratch: the static bot at /bot,
// Debian's CA bundle, a minimal /etc/passwd and /etc/group naming the
// non-root user 65532 "nonroot", and nothing else: no shell, no package
// manager. With a base (e.g. distroless/static:nonroot, which brings its
// own CA bundle and users) the new layer holds /bot only. Either way the
// runtime shape is the Dockerfile's: user 65532:65532, entrypoint /bot,
// command serve, and the org.opencontainers.image.* labels.
package botimage

import (
	"bytes"
	"debug/elf"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
)

// The image's runtime shape (the Dockerfile declares the same; a test
// compares them).
const (
	// UID and GID run the bot: distroless' "nonroot", numeric so that
	// runAsNonRoot can verify it.
	UID, GID = 65532, 65532
	// User is the config's User.
	User = "65532:65532"
	// BinaryPath is where the bot is.
	BinaryPath = "/bot"
	// CABundlePath is where Go's crypto/x509 looks first on Linux.
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
	// DefaultRepository names the image when no name is given.
	DefaultRepository = "ghcr.io/kafka-chatops/kafkabot"
	// DefaultSource is the org.opencontainers.image.source label's value.
	DefaultSource = "https://github.com/kafka-chatops/kafkabot"
)

// Labels the image carries (OCI annotation keys, as config labels).
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Entrypoint and Cmd of the image: `bot serve` unless the pod says otherwise.
var (
	Entrypoint = []string{BinaryPath}
	Cmd        = []string{"serve"}
)

// passwd and group name the two users the image knows; nologin shells, as
// there is no shell at all.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// Options describe one build of the image.
type Options struct {
	// Name is the image reference recorded in the archive; empty:
	// DefaultRepository tagged with Version.
	Name string
	// Binary is the static bot (hack/build-bot.sh's output).
	Binary []byte
	// CABundle is the PEM bundle installed at CABundlePath. Required
	// without a Base; must be empty with one (the base brings its own, and
	// a second would hide it).
	CABundle []byte
	// Version, Revision and Source fill the labels; Version and Revision
	// are required, Source defaults to DefaultSource.
	Version, Revision, Source string
	// Created stamps the files, the config and the created label: the
	// commit's time, so that two builds of a commit are the same bytes.
	Created time.Time
	// Base, when set, is the image the bot's layer goes on.
	Base *ociimage.Base
	// Architecture defaults to amd64 (or the base's); the binary must be
	// built for it.
	Architecture string
	// AlsoByDigest: see ociimage.Image.
	AlsoByDigest bool
}

// Image returns the image for o, checked: a static binary for the image's
// architecture, a CA bundle of certificates, the labels filled.
func Image(o Options) (ociimage.Image, error) {
	if o.Version == "" || o.Revision == "" {
		return ociimage.Image{}, errors.New("botimage: the version and the revision are required (they label the image)")
	}
	if o.Created.IsZero() {
		return ociimage.Image{}, errors.New("botimage: the creation time is required (the commit's time keeps builds reproducible)")
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	if o.Name == "" {
		o.Name = DefaultRepository + ":" + Tag(o.Version)
	}
	arch := o.Architecture
	if arch == "" && o.Base != nil {
		arch = o.Base.Architecture
	}
	if arch == "" {
		arch = "amd64"
	}
	if err := checkStatic(o.Binary, arch); err != nil {
		return ociimage.Image{}, err
	}
	created := o.Created.UTC()
	img := ociimage.Image{
		Name:         o.Name,
		Created:      created,
		Architecture: arch,
		Base:         o.Base,
		AlsoByDigest: o.AlsoByDigest,
		Files: []ociimage.File{
			// Root-owned and not writable by the bot's user.
			{Path: strings.TrimPrefix(BinaryPath, "/"), Mode: 0o755, Data: o.Binary},
		},
		Config: ociimage.Config{
			Entrypoint: Entrypoint,
			Cmd:        Cmd,
			User:       User,
			Labels: map[string]string{
				LabelTitle:    "kafkabot",
				LabelVersion:  o.Version,
				LabelRevision: o.Revision,
				LabelSource:   o.Source,
				LabelCreated:  created.Format(time.RFC3339),
			},
		},
	}
	if o.Base != nil {
		if len(o.CABundle) > 0 {
			return ociimage.Image{}, errors.New("botimage: a CA bundle is only added to an image built from scratch; the base image brings its own")
		}
		return img, nil
	}
	n, err := countCertificates(o.CABundle)
	if err != nil {
		return ociimage.Image{}, err
	}
	if n == 0 {
		return ociimage.Image{}, errors.New("botimage: the CA bundle holds no certificate: the bot could not verify Slack's or the API server's TLS certificates")
	}
	img.Config.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"SSL_CERT_FILE=" + CABundlePath,
	}
	img.Config.WorkingDir = "/"
	img.Files = append(img.Files,
		ociimage.File{Path: strings.TrimPrefix(CABundlePath, "/"), Mode: 0o644, Data: o.CABundle},
		ociimage.File{Path: "etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		ociimage.File{Path: "etc/group", Mode: 0o644, Data: []byte(group)},
		ociimage.File{Path: "home/nonroot", Dir: true, Mode: 0o700, UID: UID, GID: GID},
	)
	return img, nil
}

// Tag turns a version (the VERSION file's) into a valid image tag:
// characters outside [A-Za-z0-9_.-] become '-', at most 128 characters.
func Tag(version string) string {
	t := tagInvalid.ReplaceAllString(version, "-")
	if t == "" || t[0] == '.' || t[0] == '-' {
		t = "v" + t
	}
	if len(t) > 128 {
		t = t[:128]
	}
	return t
}

var tagInvalid = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// elfMachine maps image architectures to ELF machines.
var elfMachine = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "386": elf.EM_386, "arm": elf.EM_ARM,
	"ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
}

// checkStatic refuses what would not start in the image: a binary that
// needs a dynamic loader (the image has none) or is built for another
// architecture.
func checkStatic(bin []byte, arch string) error {
	if len(bin) == 0 {
		return errors.New("botimage: the bot binary is empty")
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("botimage: the bot binary is not an ELF executable: %w", err)
	}
	defer f.Close()
	if want, ok := elfMachine[arch]; !ok {
		return fmt.Errorf("botimage: unsupported architecture %q", arch)
	} else if f.Machine != want {
		return fmt.Errorf("botimage: the bot binary is for %v, the image for %s", f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("botimage: the bot binary is dynamically linked (it needs a loader the image does not have); build it with hack/build-bot.sh (CGO_ENABLED=0)")
		}
	}
	return nil
}

// countCertificates counts the PEM certificates of a bundle, refusing
// anything else in it.
func countCertificates(bundle []byte) (int, error) {
	n := 0
	rest := bundle
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return 0, fmt.Errorf("botimage: the CA bundle holds a %q PEM block; only certificates belong there", b.Type)
		}
		n++
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return 0, fmt.Errorf("botimage: the CA bundle has %d bytes that are not PEM after certificate %d", len(bytes.TrimSpace(rest)), n)
	}
	return n, nil
}
