// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"fmt"
	"path"
	"strings"
)

// How Kafka ends on a checkpoint file it cannot parse at start-up, read in
// its code (kafka_2.13, kafka-storage and kafka-server-common sources of
// 3.7.2, 3.9.2, 4.0.2 and 4.3.0; the 4.4.0 recording of the fault lab's
// torn-recovery-checkpoint shows the same lines):
//
//  1. CheckpointFile's reader throws a plain java.io.IOException for a
//     line it cannot parse ("Malformed line in checkpoint file [P]: ...",
//     "Expected [n] entries in checkpoint file [P] ...").
//  2. CheckpointFileWithFailureHandler.read catches it and calls
//     LogDirFailureChannel.maybeAddOfflineLogDir, which logs "Error while
//     reading checkpoint file P" at ERROR with the IOException and queues
//     the log dir as offline; it then throws a KafkaStorageException.
//  3. LogManager.loadLogs catches that and only WARNs ("..., resetting the
//     recovery checkpoint to 0"): the WARN alone is not the crash.
//  4. ReplicaManager's LogDirFailureHandler takes the queued dir and
//     LogManager.handleLogDirFailure, with no live log dir left, logs
//     "Shutdown broker because all log dirs in D1, D2 have failed" (FATAL
//     on 3.x, ERROR from the Java LogManager of 4.4.0) and halts: that
//     line, with no exception after it, is the terminal event.
//
// So the file is not in the terminal event's chain, yet the run ties the
// two together: checkpointTie checks that tie, and only an unambiguous one
// lets move-checkpoint-file be offered.
//
// A parse error that is not an IOException (a NumberFormatException from
// an offset such as "12@#") never reaches the LogDirFailureChannel: Kafka
// WARNs, recovers every segment and runs on, and there is nothing to tie.

const (
	// allLogDirsFailed opens LogManager.handleLogDirFailure's message; the
	// log dirs follow, joined by ", ", then allLogDirsFailedEnd.
	allLogDirsFailed    = "Shutdown broker because all log dirs in "
	allLogDirsFailedEnd = " have failed"
	// dirFailureLogger is the logger of LogDirFailureChannel (package
	// org.apache.kafka.storage.internals.log from 3.5, kafka.server before).
	dirFailureLogger = "LogDirFailureChannel"
	// checkpointReadFailure opens CheckpointFileWithFailureHandler.read's
	// message; the checkpoint file's absolute path follows.
	checkpointReadFailure = "Error while reading checkpoint file "
	// checkpointParseError is the exception CheckpointFile's reader
	// throws for a line it cannot parse (an OS error is a subclass with a
	// name of its own, such as java.nio.file.AccessDeniedException).
	checkpointParseError = "java.io.IOException"
)

// isDirFailure reports whether a record is LogDirFailureChannel's.
func isDirFailure(ev *terminalEvent) bool {
	_, logger := messageOf(ev.joined)
	return logger == dirFailureLogger || strings.HasSuffix(logger, "."+dirFailureLogger)
}

// failedLogDirs returns the log dirs a "Shutdown broker because all log
// dirs in ... have failed" event names, or false when ev is not one.
func failedLogDirs(ev *terminalEvent) ([]string, bool) {
	msg, _ := messageOf(ev.joined)
	_, rest, ok := strings.Cut(msg, allLogDirsFailed)
	if !ok || ev.kind != "kafka" {
		return nil, false
	}
	dirs, ok := strings.CutSuffix(rest, allLogDirsFailedEnd)
	if !ok {
		return nil, false
	}
	return strings.Split(dirs, ", "), true
}

// cleanAbsolute reports whether p is an absolute path with nothing to
// resolve: no "..", ".", empty element or trailing slash.
func cleanAbsolute(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "/"
}

// checkpointTie is the evidence that ties a log dir failure halt to one
// checkpoint file.
type checkpointTie struct {
	// dir is the failed log dir and file the checkpoint file in it.
	dir, file string
	// failure is the LogDirFailureChannel record that names the file and
	// halt the terminal event.
	failure, halt *terminalEvent
}

// checkpointTie reads whether the run's terminal event is the log dir
// failure halt caused by checkpoint file `file` (a name relative to the
// log dir, as the rule read it). It returns the tie, or why there is none
// ("" and a nil tie when the terminal event is not that halt at all).
//
// The tie holds only when: the halt names exactly one log dir D (a clean
// absolute path); the run, before the halt, holds LogDirFailureChannel
// records and every one of them is "Error while reading checkpoint file
// D/file", with a java.io.IOException naming D/file as its root cause;
// the line the rule read the file from (targetLine) lies in the run.
func (c *crashReading) checkpointTie(file string, targetLine int) (*checkpointTie, string) {
	term := c.terminal()
	if term == nil {
		return nil, ""
	}
	dirs, ok := failedLogDirs(term)
	if !ok {
		return nil, ""
	}
	if len(dirs) != 1 {
		return nil, fmt.Sprintf("the broker halted because all of its %d log dirs failed (%s); one checkpoint file explains at most one of them, "+
			"so a person decides.", len(dirs), strings.Join(dirs, ", "))
	}
	dir := dirs[0]
	if !cleanAbsolute(dir) {
		return nil, fmt.Sprintf("the failed log dir %q is not a clean absolute path.", dir)
	}
	if targetLine <= c.runStart {
		return nil, "the line that names the checkpoint file is from an earlier run of the process than the halt."
	}
	var tie *checkpointTie
	for i := range c.dirFailures {
		f := &c.dirFailures[i]
		if f.line > term.line {
			continue
		}
		msg, _ := messageOf(f.joined)
		p, ok := strings.CutPrefix(msg, checkpointReadFailure)
		if !ok {
			return nil, fmt.Sprintf("the log dir also failed for another reason (line %d: %s), so moving the checkpoint file may not bring it back.",
				f.line, shorten(msg, 160))
		}
		if !cleanAbsolute(p) || path.Dir(p) != dir || path.Base(p) != file {
			return nil, fmt.Sprintf("the log dir failure on line %d names %s, not the file %s of the failed log dir %s.", f.line, shorten(p, 160), file, dir)
		}
		if exceptionClass(f.rootCause) != checkpointParseError || !strings.Contains(f.rootCause, p) {
			return nil, fmt.Sprintf("the log dir failure on line %d is not a parse error of %s (its cause: %s).", f.line, p, shorten(f.rootCause, 160))
		}
		if tie == nil {
			tie = &checkpointTie{dir: dir, file: file, failure: f, halt: term}
		}
	}
	if tie == nil {
		return nil, "no LogDirFailureChannel error in the last run, before the halt, says why the log dir failed."
	}
	return tie, ""
}

// note says in a sentence how the tie was read, for the finding's explanation.
func (t *checkpointTie) note() string {
	return fmt.Sprintf("The broker halted because its only log dir %s failed (line %d), and the log dir failure before it in the same run "+
		"is the parse error of %s in that dir (line %d): Kafka takes a log dir offline when it cannot read a checkpoint file, so moving "+
		"the file is what brings the dir back.", t.dir, t.halt.line, t.file, t.failure.line)
}
