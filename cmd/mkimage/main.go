// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command mkimage builds the bot's container image from this checkout as an
// OCI image-layout tarball, without Docker or a registry, and prints its
// reference and digest. hack/build-image.sh runs it:
//
//	bash hack/build-image.sh [-out FILE] [-base FILE] [-name REF] [-platforms linux/amd64,linux/arm64] ...
//
// The image (internal/ociimage/botimage, assembled with
// go-containerregistry): the static bot (hack/build-bot.sh) at /bot,
// Debian's CA bundle (built from the ca-certificates package, fetched once
// with apt-get download into -deb-cache), user 65532:65532 with a minimal
// /etc/passwd and /etc/group, no shell, entrypoint /bot, command serve,
// org.opencontainers.image.{version,revision,source,created} labels. -base
// FILE stacks the bot on an OCI image-layout tarball instead (e.g.
// distroless/static:nonroot copied with skopeo, for one platform or all),
// keeping its files, CA bundle and environment.
//
// -platforms builds one image per platform (the bot cross-compiled for each,
// on the base's image for that platform) and writes them as one
// multi-architecture image: an OCI image index, whose digest it prints.
//
// Reproducible: version (the VERSION file), revision (HEAD) and creation
// time (HEAD's commit time, or SOURCE_DATE_EPOCH) come from the commit, so
// two builds of a commit give the same digest.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
	"github.com/kafka-chatops/kafkabot/internal/ociimage/botimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "mkimage: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("out", "bin/kafkabot-image.tar", "the OCI image-layout tarball to write")
	name := fl.String("name", "", "the image reference to record (default "+botimage.DefaultRepository+":VERSION)")
	base := fl.String("base", "", "an OCI image-layout tarball to build on (default: from scratch)")
	debCache := fl.String("deb-cache", ".cache/debs", "where the ca-certificates package is cached")
	noDownload := fl.Bool("no-download", false, "fail instead of downloading a missing package")
	version := fl.String("version", os.Getenv("VERSION"), "the version label and tag (default $VERSION, else the VERSION file's)")
	revision := fl.String("revision", "", "the revision label (default git rev-parse HEAD)")
	source := fl.String("source", botimage.DefaultSource, "the source label")
	created := fl.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "creation time, Unix seconds (default $SOURCE_DATE_EPOCH, else HEAD's commit time)")
	arch := fl.String("arch", "", "the image's architecture (default amd64, or the base's)")
	platforms := fl.String("platforms", "", "comma-separated linux/ARCH list: one image per platform, written as one multi-architecture image (an OCI image index)")
	alsoByDigest := fl.Bool("also-by-digest", false, "also name the image REPO@DIGEST in the archive, for ctr images import when pods refer to it by digest (skopeo then needs oci-archive:FILE:TAG)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: bash hack/build-image.sh [flags]\n\nBuilds the bot's image as an OCI tarball and prints its reference and digest.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags only; see -help)", fl.Args())
	}
	archs, err := parsePlatforms(*platforms)
	if err != nil {
		return err
	}
	if len(archs) > 0 && *arch != "" {
		return errors.New("-arch and -platforms exclude each other")
	}
	multi := len(archs) > 0
	if !multi {
		archs = []string{*arch}
	}

	tree := botimage.TreeOptions{
		Root: ".", DebCache: *debCache, NoDownload: *noDownload,
		Version: *version, Revision: *revision, WithoutCABundle: *base != "",
	}
	if *created != "" {
		sec, err := strconv.ParseInt(*created, 10, 64)
		if err != nil || sec < 0 {
			return fmt.Errorf("-created / SOURCE_DATE_EPOCH %q: want Unix seconds", *created)
		}
		tree.Created = time.Unix(sec, 0)
	}
	var baseArchive []byte
	if *base != "" {
		if baseArchive, err = os.ReadFile(*base); err != nil {
			return fmt.Errorf("the base image: %w", err)
		}
	}

	var images []ociimage.Image
	var labels botimage.Options
	for _, a := range archs {
		var baseImage *ociimage.Base
		if baseArchive != nil {
			baseImage, err = ociimage.ReadBase(bytes.NewReader(baseArchive), a, "linux")
			if err != nil {
				return fmt.Errorf("the base image %s: %w", *base, err)
			}
			fmt.Fprintf(stderr, "mkimage: base %s: linux/%s %s, %d layers, user %q\n", *base, baseImage.Architecture, baseImage.ManifestDigest, len(baseImage.Layers), baseImage.Config.User)
			if a == "" {
				a = baseImage.Architecture
			}
		}
		tree.Architecture = a
		opts, err := botimage.FromTree(tree)
		if err != nil {
			return err
		}
		// The first platform's build settles the version, revision and
		// time for the others.
		tree.Version, tree.Revision, tree.Created = opts.Version, opts.Revision, opts.Created
		opts.Name, opts.Source, opts.Base, opts.AlsoByDigest = *name, *source, baseImage, *alsoByDigest
		img, err := botimage.Image(opts)
		if err != nil {
			return err
		}
		images = append(images, img)
		labels = opts
	}

	var buf bytes.Buffer
	var summary string
	if multi {
		ref, err := ociimage.WriteIndex(&buf, images[0].Name, images, *alsoByDigest, labels.Created)
		if err != nil {
			return err
		}
		summary = fmt.Sprintf("image:  %s\ndigest: %s\n", ref.Name, ref.IndexDigest)
		for i, r := range ref.Images {
			summary += fmt.Sprintf("linux/%s: %s\n", images[i].Architecture, r.ManifestDigest)
		}
	} else {
		ref, err := ociimage.Write(&buf, images[0])
		if err != nil {
			return err
		}
		summary = fmt.Sprintf("image:  %s\ndigest: %s\n", ref.Name, ref.ManifestDigest)
	}
	if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%sfile:   %s (%d KiB)\n", summary, *out, buf.Len()/1024)
	return nil
}

// parsePlatforms turns "linux/amd64,linux/arm64" into architectures.
func parsePlatforms(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var archs []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		goos, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos != "linux" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("-platforms: %q is not linux/ARCH (e.g. linux/arm64)", p)
		}
		if seen[arch] {
			return nil, fmt.Errorf("-platforms: %s is listed twice", p)
		}
		seen[arch] = true
		archs = append(archs, arch)
	}
	return archs, nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it, so that an interrupted build never leaves a truncated image behind.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	return os.Rename(tmp.Name(), path)
}
