// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// The layer is ours: go-containerregistry builds layers from tar streams or
// directories, not from files held in memory with numeric owners and fixed
// times, which is what a reproducible image needs.

// cleanPath validates and normalises a layer path.
func cleanPath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return "", fmt.Errorf("ociimage: path %q must be relative and slash-separated", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("ociimage: path %q leaves the image root", p)
		}
	}
	c := path.Clean(p)
	if c == "." {
		return "", fmt.Errorf("ociimage: path %q names the image root", p)
	}
	return c, nil
}

// layerTar builds the layer: every file, plus the parent directories not
// given, sorted so that parents come first and output is reproducible.
func layerTar(files []File, mtime time.Time) ([]byte, error) {
	byPath := map[string]File{}
	for _, f := range files {
		p, err := cleanPath(f.Path)
		if err != nil {
			return nil, err
		}
		kinds := 0
		if f.Dir {
			kinds++
		}
		if f.Link != "" {
			kinds++
		}
		if f.Dir && f.Data != nil || f.Link != "" && f.Data != nil || kinds > 1 {
			return nil, fmt.Errorf("ociimage: %s: a file is one of data, link or directory", p)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("ociimage: %s is given twice", p)
		}
		f.Path = p
		byPath[p] = f
	}
	for p := range byPath {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if existing, ok := byPath[d]; ok {
				if !existing.Dir {
					return nil, fmt.Errorf("ociimage: %s is inside %s, which is not a directory", p, d)
				}
				continue
			}
			byPath[d] = File{Path: d, Dir: true, Mode: 0o755}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths) // a parent sorts before its children

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := byPath[p]
		hdr := &tar.Header{
			Name: p, Mode: int64(f.Mode.Perm()), Uid: f.UID, Gid: f.GID,
			ModTime: mtime, Format: tar.FormatPAX,
		}
		switch {
		case f.Dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
		case f.Link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
			if hdr.Mode == 0 {
				hdr.Mode = 0o777
			}
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("ociimage: %s: %w", p, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, fmt.Errorf("ociimage: %s: %w", p, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("ociimage: closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}
