// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package botimage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// CAPackage is the Debian package the CA bundle comes from.
const CAPackage = "ca-certificates"

// TreeOptions say how FromTree builds the image's inputs from a checkout.
type TreeOptions struct {
	// Root is the repository's root directory.
	Root string
	// DebCache holds downloaded Debian packages (the CA certificates).
	DebCache string
	// NoDownload refuses to run apt-get download when DebCache lacks the
	// package (tests: nothing downloads at test time).
	NoDownload bool
	// Version overrides the VERSION file's; Revision and Created override
	// git's: HEAD's hash and HEAD's commit time (SOURCE_DATE_EPOCH's
	// convention). Revision and Created are required outside a git
	// checkout.
	Version, Revision string
	Created           time.Time
	// Architecture is the bot's GOARCH (default amd64): the bot is
	// cross-compiled for it.
	Architecture string
	// WithoutCABundle leaves the bundle out (an image on a base).
	WithoutCABundle bool
}

// FromTree builds the bot with hack/build-bot.sh (static, version stamped)
// and gathers the labels and the CA bundle: everything Image needs but
// the name and the base.
func FromTree(o TreeOptions) (Options, error) {
	var opts Options
	var err error
	if opts.Version = o.Version; opts.Version == "" {
		if opts.Version, err = ReadVersion(o.Root); err != nil {
			return Options{}, err
		}
	}
	if opts.Revision = o.Revision; opts.Revision == "" {
		if opts.Revision, err = git(o.Root, "rev-parse", "HEAD"); err != nil {
			return Options{}, fmt.Errorf("botimage: the revision: %w", err)
		}
	}
	if opts.Created = o.Created; opts.Created.IsZero() {
		ct, err := git(o.Root, "log", "-1", "--format=%ct", "HEAD")
		if err != nil {
			return Options{}, fmt.Errorf("botimage: the commit time (set SOURCE_DATE_EPOCH outside a git checkout): %w", err)
		}
		sec, err := strconv.ParseInt(ct, 10, 64)
		if err != nil {
			return Options{}, fmt.Errorf("botimage: the commit time %q: %w", ct, err)
		}
		opts.Created = time.Unix(sec, 0).UTC()
	}

	work, err := os.MkdirTemp("", "botimage-")
	if err != nil {
		return Options{}, err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bot")
	opts.Architecture = o.Architecture
	if opts.Architecture == "" {
		opts.Architecture = "amd64"
	}
	cmd := exec.Command("bash", "hack/build-bot.sh", bin)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "VERSION="+opts.Version, "COMMIT="+opts.Revision, "GOOS=linux", "GOARCH="+opts.Architecture)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Options{}, fmt.Errorf("botimage: hack/build-bot.sh: %w\n%s", err, out)
	}
	if opts.Binary, err = os.ReadFile(bin); err != nil {
		return Options{}, fmt.Errorf("botimage: reading the built bot: %w", err)
	}
	if o.WithoutCABundle {
		return opts, nil
	}
	deb, err := FetchDeb(o.DebCache, CAPackage, !o.NoDownload)
	if err != nil {
		return Options{}, err
	}
	if opts.CABundle, err = CABundleFromDeb(deb); err != nil {
		return Options{}, err
	}
	return opts, nil
}

// VersionFile is the repository's one source of the release's version.
const VersionFile = "VERSION"

// ReadVersion returns the version in root's VERSION file: a semantic
// version (MAJOR.MINOR.PATCH, optionally -PRERELEASE), without a "v".
func ReadVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, VersionFile))
	if err != nil {
		return "", fmt.Errorf("botimage: the version: %w", err)
	}
	v := strings.TrimSpace(string(b))
	if !semver.MatchString(v) {
		return "", fmt.Errorf("botimage: %s holds %q, not a semantic version such as 1.2.3 (no leading v)", VersionFile, v)
	}
	return v, nil
}

// semver matches MAJOR.MINOR.PATCH with an optional pre-release.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// git runs git in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// FetchDeb returns the package's .deb in cache, downloading it there with
// `apt-get download` when there is none and download is true. With
// several versions cached it takes the last by name; delete the cache to
// take a newer one (a cached package keeps builds reproducible).
func FetchDeb(cache, pkg string, download bool) (string, error) {
	if cache == "" {
		return "", errors.New("botimage: no package cache directory")
	}
	pattern := filepath.Join(cache, pkg+"_*.deb")
	debs, _ := filepath.Glob(pattern)
	if len(debs) == 0 {
		if !download {
			return "", fmt.Errorf("botimage: no %s package in %s and downloading is off (bash hack/build-image.sh fetches it)", pkg, cache)
		}
		if err := os.MkdirAll(cache, 0o755); err != nil {
			return "", fmt.Errorf("botimage: %w", err)
		}
		// Downloaded beside the cache and renamed into it, so that a
		// concurrent build never reads a half-written package.
		tmp, err := os.MkdirTemp(cache, ".download-")
		if err != nil {
			return "", fmt.Errorf("botimage: %w", err)
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command("apt-get", "download", pkg)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("botimage: apt-get download %s: %w\n%s", pkg, err, out)
		}
		got, _ := filepath.Glob(filepath.Join(tmp, pkg+"_*.deb"))
		if len(got) != 1 {
			return "", fmt.Errorf("botimage: apt-get download %s left %d packages", pkg, len(got))
		}
		if err := os.Rename(got[0], filepath.Join(cache, filepath.Base(got[0]))); err != nil {
			return "", fmt.Errorf("botimage: %w", err)
		}
		if debs, _ = filepath.Glob(pattern); len(debs) == 0 {
			return "", fmt.Errorf("botimage: apt-get download left no %s in %s", filepath.Base(pattern), cache)
		}
	}
	sort.Strings(debs)
	return debs[len(debs)-1], nil
}

// CABundleFromDeb builds the bundle Debian's update-ca-certificates writes
// to /etc/ssl/certs/ca-certificates.crt with the package's defaults (every
// Mozilla certificate trusted): the package's
// usr/share/ca-certificates/mozilla/*.crt in name order, each ending in a
// newline. Built from the package, not copied from this machine's
// /etc/ssl, so that no locally added CA ends up in the image.
func CABundleFromDeb(deb string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "ca-deb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command("dpkg-deb", "-x", deb, dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("botimage: dpkg-deb -x %s: %w\n%s", deb, err, out)
	}
	mozilla := filepath.Join(dir, "usr", "share", "ca-certificates", "mozilla")
	entries, err := os.ReadDir(mozilla)
	if err != nil {
		return nil, fmt.Errorf("botimage: %s has no Mozilla certificates: %w", deb, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type()&fs.ModeType == 0 && strings.HasSuffix(e.Name(), ".crt") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var bundle bytes.Buffer
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(mozilla, n))
		if err != nil {
			return nil, fmt.Errorf("botimage: %w", err)
		}
		bundle.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			bundle.WriteByte('\n')
		}
	}
	if n, err := countCertificates(bundle.Bytes()); err != nil {
		return nil, fmt.Errorf("%w (from %s)", err, deb)
	} else if n != len(names) {
		return nil, fmt.Errorf("botimage: %s: %d certificate files gave %d certificates", deb, len(names), n)
	}
	return bundle.Bytes(), nil
}
