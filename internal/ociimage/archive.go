// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package ociimage

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The archive is ours: go-containerregistry writes and reads image layouts
// as directories; an "oci-archive" (what skopeo and podman exchange) is
// that directory as a tar, which this file writes reproducibly and reads
// back safely.

// writeArchive lays out an image layout in a temporary directory with fill
// and writes it to w as a tar archive: entries sorted, owned by root, all
// stamped with mtime (zero: the Unix epoch).
func writeArchive(w io.Writer, mtime time.Time, fill func(layout.Path) error) error {
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	mtime = mtime.UTC().Truncate(time.Second)
	dir, err := os.MkdirTemp("", "ociimage-layout-")
	if err != nil {
		return fmt.Errorf("ociimage: %w", err)
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("ociimage: starting the image layout: %w", err)
	}
	if err := fill(p); err != nil {
		return fmt.Errorf("ociimage: writing the image layout: %w", err)
	}
	var names []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ociimage: reading the image layout: %w", err)
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, name := range names {
		full := filepath.Join(dir, filepath.FromSlash(name))
		info, err := os.Lstat(full)
		if err != nil {
			return fmt.Errorf("ociimage: %w", err)
		}
		hdr := &tar.Header{Name: name, Mode: 0o644, ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeReg}
		switch {
		case info.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, name+"/", 0o755
		case info.Mode().IsRegular():
			hdr.Size = info.Size()
		default:
			return fmt.Errorf("ociimage: %s in the image layout is neither a file nor a directory", name)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("ociimage: writing the archive: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if err := copyFile(tw, full); err != nil {
				return fmt.Errorf("ociimage: writing the archive: %w", err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("ociimage: writing the archive: %w", err)
	}
	return nil
}

func copyFile(w io.Writer, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// extractArchive unpacks the regular files of an image-layout archive into
// dir, refusing names that leave it and names given twice; other entries
// (directories, links) are skipped: a layout holds files only.
func extractArchive(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("ociimage: base: reading the archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if name == "" || seen[name] {
			return fmt.Errorf("ociimage: base: %q appears twice in the archive", h.Name)
		}
		seen[name] = true
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("ociimage: base: %w", err)
		}
		f, err := os.OpenFile(full, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("ociimage: base: %w", err)
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("ociimage: base: reading %s: %w", name, err)
		}
	}
	if len(seen) == 0 {
		return errors.New("ociimage: base: the archive holds no files")
	}
	return nil
}
