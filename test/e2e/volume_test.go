// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// metadataDir is the partition the seed repair moves, relative to the volume root.
const metadataDir = "data/__cluster_metadata-0"

// newBrokerVolume lays out a host directory like a Bitnami Kafka broker's
// volume (mounted at /bitnami/kafka, log dir /bitnami/kafka/data) for node
// nodeID, in a parent directory of its own (kubesim mounts a claim by
// renaming its directory next to it). It returns the volume's directory.
func newBrokerVolume(t *testing.T, nodeID string) string {
	t.Helper()
	vol := filepath.Join(t.TempDir(), "pv-data-broker")
	const clusterID = "p8fFEbKGQ22B6M_Da_vCBw"
	files := map[string][]byte{
		"data/meta.properties": []byte("#\n#Mon Apr 28 08:00:00 UTC 2025\nnode.id=" + nodeID +
			"\ndirectory.id=0U9tWjkzT3yJwTqN-YmQ1g\nversion=1\ncluster.id=" + clusterID + "\n"),
		"data/.lock":                                                nil,
		"data/bootstrap.checkpoint":                                 pseudoRandom("bootstrap", 96),
		"data/cleaner-offset-checkpoint":                            []byte("0\n0\n"),
		"data/log-start-offset-checkpoint":                          []byte("0\n2\norders 0 0\n__consumer_offsets 0 0\n"),
		"data/recovery-point-offset-checkpoint":                     []byte("0\n2\norders 0 1187\n__consumer_offsets 0 42\n"),
		"data/replication-offset-checkpoint":                        []byte("0\n2\norders 0 1187\n__consumer_offsets 0 42\n"),
		metadataDir + "/00000000000057054787.log":                   pseudoRandom("metadata-log", 8192),
		metadataDir + "/00000000000057054787.index":                 pseudoRandom("metadata-index", 512),
		metadataDir + "/00000000000057054787.timeindex":             pseudoRandom("metadata-timeindex", 768),
		metadataDir + "/00000000000057054787-0000000012.checkpoint": pseudoRandom("metadata-snapshot", 2048),
		metadataDir + "/leader-epoch-checkpoint":                    []byte("0\n1\n12 57054787\n"),
		metadataDir + "/partition.metadata":                         []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n"),
		metadataDir + "/quorum-state":                               []byte(`{"leaderId":1,"leaderEpoch":12,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":0},{"voterId":1},{"voterId":2}],"data_version":0}` + "\n"),
		"data/orders-0/00000000000000000000.log":                    pseudoRandom("orders-log", 16384),
		"data/orders-0/00000000000000000000.index":                  pseudoRandom("orders-index", 1024),
		"data/orders-0/00000000000000000000.timeindex":              pseudoRandom("orders-timeindex", 1536),
		"data/orders-0/leader-epoch-checkpoint":                     []byte("0\n1\n3 0\n"),
		"data/orders-0/partition.metadata":                          []byte("version: 0\ntopic_id: 9Jc0mZ0sQ1e1Qd3Xb8wM2A\n"),
		"data/__consumer_offsets-0/00000000000000000000.log":        pseudoRandom("offsets-log", 4096),
		"data/__consumer_offsets-0/00000000000000000000.index":      pseudoRandom("offsets-index", 256),
		"data/__consumer_offsets-0/leader-epoch-checkpoint":         []byte("0\n1\n3 0\n"),
		"data/__consumer_offsets-0/partition.metadata":              []byte("version: 0\ntopic_id: pZl3q5gKQmWb1oA7Rr0F9w\n"),
	}
	for rel, data := range files {
		path := filepath.Join(vol, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o775); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o664); err != nil {
			t.Fatal(err)
		}
	}
	return vol
}

// pseudoRandom is n deterministic bytes that differ per seed, standing in
// for segment contents.
func pseudoRandom(seed string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	block := sha256.Sum256([]byte(seed))
	for len(out) < n {
		out = append(out, block[:]...)
		block = sha256.Sum256(block[:])
	}
	return out[:n]
}

// tree maps every entry under a directory, by slash-separated relative
// path, to what it is: "dir", "symlink -> target", or "file <mode>
// <sha256>".
type tree map[string]string

// readTree hashes the whole tree under root.
func readTree(t *testing.T, root string) tree {
	t.Helper()
	out := tree{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel] = "dir"
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			out[rel] = "symlink -> " + target
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %v %s", info.Mode().Perm(), hex.EncodeToString(sum[:]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the volume %s: %v", root, err)
	}
	return out
}

// diff lists how got differs from want, one line per entry.
func (want tree) diff(got tree) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			out = append(out, "missing: "+k)
		} else if g != want[k] {
			out = append(out, fmt.Sprintf("changed: %s: %s, was %s", k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			out = append(out, "added: "+k)
		}
	}
	return out
}

// backupFolders returns the kafkabot backup folders at the volume root.
func backupFolders(t *testing.T, vol string) []string {
	t.Helper()
	entries, err := os.ReadDir(vol)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kafkabot-backup-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// checkMetadataLogMoved checks that the volume is exactly before with
// __cluster_metadata-0 moved, byte for byte, into one backup folder at the
// volume root (outside the log dir data/) that also holds the script's
// README.txt. It returns the backup folder's name.
func checkMetadataLogMoved(t *testing.T, vol string, before tree) string {
	t.Helper()
	backups := backupFolders(t, vol)
	if len(backups) != 1 {
		t.Fatalf("want exactly one backup folder at the volume root, found %q", backups)
	}
	backup := backups[0]
	want := tree{}
	for k, v := range before {
		if k == metadataDir || strings.HasPrefix(k, metadataDir+"/") {
			k = backup + "/" + k
		}
		want[k] = v
	}
	want[backup] = "dir"
	want[backup+"/data"] = "dir"
	got := readTree(t, vol)
	readme, ok := got[backup+"/README.txt"]
	if !ok || !strings.HasPrefix(readme, "file ") {
		t.Errorf("no README.txt in the backup folder %s", backup)
	}
	delete(got, backup+"/README.txt")
	if d := want.diff(got); len(d) > 0 {
		t.Errorf("the volume is not the original with only %s moved to %s/%s:\n%s", metadataDir, backup, metadataDir, strings.Join(d, "\n"))
	}
	return backup
}

// readmeMoves counts the move records in a backup folder's README.txt (the
// script appends one per move it makes).
func readmeMoves(t *testing.T, vol, backup string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vol, backup, "README.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "kafkabot repair backup")
}
