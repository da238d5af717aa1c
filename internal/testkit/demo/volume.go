// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// VolumeTree lists a claim's host directory for the terminal: a directory
// holding only files (a partition, the moved metadata log) is one line
// with its file count and size; other directories are opened; files are
// listed with their size. Paths are relative to root, '/' separated.
func VolumeTree(root string) ([]string, error) {
	var lines []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		indent := strings.Repeat("  ", depth)
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if !e.IsDir() {
				info, err := e.Info()
				if err != nil {
					return fmt.Errorf("reading %s: %w", path, err)
				}
				lines = append(lines, fmt.Sprintf("%s%-40s %s", indent, e.Name(), humanSize(info.Size())))
				continue
			}
			files, size, leaf, err := dirStats(path)
			if err != nil {
				return err
			}
			if leaf {
				lines = append(lines, fmt.Sprintf("%s%-40s %d files, %s", indent, e.Name()+"/", files, humanSize(size)))
				continue
			}
			lines = append(lines, indent+e.Name()+"/")
			if err := walk(path, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return lines, nil
}

// dirStats counts the regular files under dir and their bytes, and says
// whether dir holds no sub-directories.
func dirStats(dir string) (files int, size int64, leaf bool, err error) {
	leaf = true
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir {
				leaf = false
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		size += info.Size()
		return nil
	})
	if err != nil {
		return 0, 0, false, fmt.Errorf("measuring %s: %w", dir, err)
	}
	return files, size, leaf, nil
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// FindBackup returns the path, relative to the volume root, of the
// backup of target that the repair made (kafkabot-backup-*/<log dir>/target),
// or "" when there is none.
func FindBackup(volumeRoot, logDir, target string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(volumeRoot, "kafkabot-backup-*", logDir, target))
	if err != nil {
		return "", fmt.Errorf("looking for the backup in %s: %w", volumeRoot, err)
	}
	if len(matches) != 1 {
		return "", nil
	}
	rel, err := filepath.Rel(volumeRoot, matches[0])
	if err != nil {
		return "", fmt.Errorf("looking for the backup in %s: %w", volumeRoot, err)
	}
	return filepath.ToSlash(rel), nil
}
