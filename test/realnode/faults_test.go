// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The faults the real-Kafka scenarios plant on a stopped broker's log dir,
// each the way an incident leaves the disk. Every file they write belongs to
// the broker's uid, as Kafka's own files do.

// Record batch v2 layout (Kafka's DefaultRecordBatch): the offsets of the
// header fields, and the size of the header before the records.
const (
	batchBaseOffset      = 0
	batchLength          = 8
	batchMagic           = 16
	batchCRC             = 17
	batchAttributes      = 21
	batchLastOffsetDelta = 23
	batchRecordsCount    = 57
	batchHeaderSize      = 61
)

// splitMetadataBatch makes a broker's local metadata log end in the middle
// of one of the quorum leader's record batches, the state the seed
// incident's numbers show ("First offset F is less than the next offset
// N"): in the last segment of __cluster_metadata-0 it finds the last batch
// of two or more records, cuts the log there and writes that batch back
// with its first record only (lastOffsetDelta 0, one record, its CRC-32C
// recomputed), so the log ends at F+1 while the leader's batch covers F and
// more. The segment's index files and any snapshot or producer snapshot
// past the new end are removed (Kafka rebuilds indexes). It returns F and
// the new log end offset.
func splitMetadataBatch(logDir string) (first, next int64, err error) {
	dir := filepath.Join(logDir, "__cluster_metadata-0")
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		return 0, 0, fmt.Errorf("no segment in %s: %v", dir, err)
	}
	sort.Strings(segs)
	seg := segs[len(segs)-1]
	data, err := os.ReadFile(seg)
	if err != nil {
		return 0, 0, err
	}
	pos, at := 0, -1
	for pos+batchHeaderSize <= len(data) {
		size := 12 + int(binary.BigEndian.Uint32(data[pos+batchLength:]))
		if pos+size > len(data) {
			break
		}
		attrs := binary.BigEndian.Uint16(data[pos+batchAttributes:])
		count := binary.BigEndian.Uint32(data[pos+batchRecordsCount:])
		if data[pos+batchMagic] == 2 && attrs&0x20 == 0 && attrs&0x07 == 0 && count >= 2 {
			at = pos
		}
		pos += size
	}
	if at < 0 {
		return 0, 0, fmt.Errorf("%s has no uncompressed batch of two or more records", seg)
	}
	batch := data[at : at+12+int(binary.BigEndian.Uint32(data[at+batchLength:]))]
	// The first record: a varint length, then that many bytes.
	recLen, n := binary.Varint(batch[batchHeaderSize:])
	if n <= 0 {
		return 0, 0, fmt.Errorf("bad record length at offset %d of %s", at, seg)
	}
	rec := batch[batchHeaderSize : batchHeaderSize+n+int(recLen)]
	out := make([]byte, batchHeaderSize, batchHeaderSize+len(rec))
	copy(out, batch[:batchHeaderSize])
	out = append(out, rec...)
	binary.BigEndian.PutUint32(out[batchLength:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[batchLastOffsetDelta:], 0)
	binary.BigEndian.PutUint32(out[batchRecordsCount:], 1)
	// Records of one metadata batch share its append time: the header's
	// maxTimestamp stays right.
	crc := crc32.Checksum(out[batchAttributes:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(out[batchCRC:], crc)
	first = int64(binary.BigEndian.Uint64(batch[batchBaseOffset:]))
	next = first + 1

	if err := os.WriteFile(seg, append(data[:at:at], out...), 0o644); err != nil {
		return 0, 0, err
	}
	base := strings.TrimSuffix(seg, ".log")
	for _, ext := range []string{".index", ".timeindex"} {
		if err := os.Remove(base + ext); err != nil && !os.IsNotExist(err) {
			return 0, 0, err
		}
	}
	// Snapshots (<end offset>-<epoch>.checkpoint) and producer snapshots
	// (<offset>.snapshot) past the new end would not match the log.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range entries {
		name := e.Name()
		var off string
		switch {
		case strings.HasSuffix(name, ".checkpoint"):
			off, _, _ = strings.Cut(name, "-")
		case strings.HasSuffix(name, ".snapshot"):
			off = strings.TrimSuffix(name, ".snapshot")
		default:
			continue
		}
		if o, err := strconv.ParseInt(off, 10, 64); err == nil && o > next {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return 0, 0, err
			}
		}
	}
	return first, next, chownTree(dir)
}

// plantForeignDir puts a directory that is not a topic partition into the
// log dir, as another application or a hand-made backup would.
func plantForeignDir(logDir, name string) error {
	dir := filepath.Join(logDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not Kafka's\n"), 0o644); err != nil {
		return err
	}
	return chownTree(dir)
}

// breakCheckpoint rewrites a broker-level checkpoint file with a torn last
// line (a partition entry missing its offset), as a write cut short leaves it.
func breakCheckpoint(logDir, name string) error {
	path := filepath.Join(logDir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 3 {
		return fmt.Errorf("%s has no entries to tear:\n%s", path, b)
	}
	last := strings.Fields(lines[len(lines)-1])
	lines[len(lines)-1] = strings.Join(last[:len(last)-1], " ")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.Chown(path, kafkaUID, kafkaUID)
}

// chownTree gives everything under dir to the broker's uid.
func chownTree(dir string) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, kafkaUID, kafkaUID)
	})
}

// setNodeID rewrites the node.id of the log dir's meta.properties, the
// rest of the file as Kafka wrote it: the volume now says it is another
// node's.
func setNodeID(logDir string, id int) error {
	path := filepath.Join(logDir, "meta.properties")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	line := regexp.MustCompile(`(?m)^node\.id=\d+$`)
	if !line.Match(b) {
		return fmt.Errorf("%s has no node.id line:\n%s", path, b)
	}
	return os.WriteFile(path, line.ReplaceAll(b, []byte("node.id="+strconv.Itoa(id))), 0o644)
}
