// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"regexp"
	"strconv"
	"strings"
)

// The structural reading of a crash. A log is a sequence of runs of the
// process (each begins with a start banner); the last run ends in a
// terminal event (one of Kafka's fatal exit points, the JVM's death, a
// distribution script's exit) followed by its exception chain. Only what
// lies in that chain is where the process really ended: a line elsewhere
// (a message that quotes client-chosen text, an error Kafka survived) can
// name a cause but never drive an automated remedy.
//
// The reading works on the log's last maxTailLines lines (the ring every
// scan keeps), which is where a crash is: a terminal event further from
// the end is not found, and automation is then withheld.

// The markers below are literals, tested with strings.Contains and prefix
// checks: the reader runs on every diagnosis, over up to maxTailLines lines.
var (
	// startBanners are printed once when a Kafka process (or its
	// container's entrypoint) starts: log4j's controller MBean
	// registration (kafka.utils.Log4jControllerRegistration up to 4.3,
	// "Registered kafka:type=kafka.Log4jController MBean"; 4.4.0's
	// org.apache.kafka.server.logger.Log4jControllerRegistration puts the
	// name in backquotes, as the fault lab's recordings show), KafkaServer's and KafkaRaftServer's start lines,
	// AppInfoParser's "Kafka version" (also printed by clients a broker
	// creates: a banner in the middle of a run only shortens the run
	// read), the KafkaConfig dump's header, and the entrypoints of
	// Bitnami, Confluent and Strimzi.
	startBanners = []string{"Log4jController MBean", "Log4jController` MBean", "starting (kafka.server.KafkaServer)", "Kafka Server starting",
		"Kafka version: ", "Kafka version : ", "KafkaConfig values:", "Welcome to the Bitnami kafka container",
		"** Starting Kafka setup **", "===> Launching kafka", "Starting Kafka with configuration:"}

	// kafkaFatalExits are Kafka's fatal exit points: kafka.Kafka's
	// "Exiting Kafka ...", the servers' "Fatal error during ... startup",
	// ProcessTerminatingFaultHandler's "Encountered fatal fault", the log
	// dir failure handler's "Shutdown broker because all log dirs ...
	// have failed", ReplicaManager's and the fetcher's halts ("Halting due
	// to unrecoverable I/O error", "Exiting because log truncation is not
	// allowed").
	kafkaFatalExits = []string{"Exiting Kafka", "Fatal error during", "Encountered fatal fault", "Halting",
		"Shutdown broker because all log dirs", "Exiting because", "Exiting due to"}

	// jvmDeathPrefixes start a line of the JVM dying or refusing to start:
	// an uncaught exception in a thread, ExitOnOutOfMemoryError /
	// CrashOnOutOfMemoryError, HotSpot's fatal error report (hs_err), the
	// launcher's errors, bad options.
	jvmDeathPrefixes = []string{`Exception in thread "`, "Terminating due to java.lang.OutOfMemoryError",
		"Aborting due to java.lang.OutOfMemoryError", "# A fatal error has been detected by the Java Runtime",
		"# There is insufficient memory for the Java Runtime", "Error: Could not find or load main class",
		"Error: Could not create the Java Virtual Machine", "Error occurred during initialization of VM",
		"Unrecognized VM option", "Error: A fatal exception has occurred"}
	// jvmDeathAnywhere may follow a prefix ("Error occurred during
	// initialization of VM" then "Could not reserve enough space ...").
	jvmDeathAnywhere = "Could not reserve enough space"

	// scriptErrors are a distribution script giving up: Bitnami's
	// "ERROR ==>", a shell's own error about a command or file (after a
	// "script: line N: " prefix), kafka-server-start.sh's usage line.
	scriptErrors = []string{"ERROR ==> ", ": No such file or directory", ": Permission denied", ": command not found", "USAGE: "}

	// levelWords are the log levels, as a record writes them.
	levelWords = []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "SEVERE"}
)

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var (
	// kafkaFrame is one of Kafka's own stack frames.
	kafkaFrame = regexp.MustCompile(`^\s*at ((?:kafka|org\.apache\.kafka)\.[\w$.]+)\((?:([\w$]+\.(?:java|scala)):(\d+)\))?`)
	// exceptionName reads the class of an exception line.
	exceptionName = regexp.MustCompile(`^\s*(?:Caused by: |Suppressed: )?((?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable|Fault)\b)`)
	// inlineException is an exception quoted inside a record's message.
	inlineException = regexp.MustCompile(`(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b.*`)
)

// terminalEvent is one fatal exit point of the last run, with its chain.
type terminalEvent struct {
	// line and end are the 1-based numbers of the terminal line and the
	// last line of its chain.
	line, end int
	// kind is "kafka", "jvm" or "script".
	kind string
	// text is the record's line; joined adds the lines its message wrapped onto.
	text, joined string
	// chain holds the exception lines after it, thrown first, then each
	// "Caused by:" in order; rootCause is the last of them ("" for none).
	chain     []string
	rootCause string
	// frames are the first Kafka frames of the chain (at most 3), and
	// sites their source file and line where the frame names them.
	frames []string
	sites  []frameSite
	// jdkOrigin is the first frame of the chain in a JDK class that names
	// the component a failure comes from (jdkOriginClasses), "" for none.
	jdkOrigin string
}

// frameSite is a stack frame's method with the file and line it names
// ("at a.b.C.m(C.java:141)").
type frameSite struct {
	frame, file string
	line        int
}

// crashReading is what the structural reader found at a log's end.
type crashReading struct {
	// runStart is the line number of the last start banner (0: none in the tail).
	runStart int
	// events are the terminal events of the last run, in log order.
	events []terminalEvent
	// lastError is the last ERROR (or FATAL) record of the run with an
	// exception chain: what an excerpt without a terminal event shows. It
	// names a class, never an automated remedy.
	lastError *terminalEvent
	// dirFailures are the run's ERROR records of Kafka's
	// LogDirFailureChannel, in log order: maybeAddOfflineLogDir is where
	// every log dir goes offline, and it logs why (see dirfailure.go).
	dirFailures []terminalEvent
	// excerpt is the first line of a log that holds no record before it
	// (a pasted exception or message, without time or level): what an
	// excerpt shows when it has neither a terminal event nor an error
	// record. It names a class, never an automated remedy.
	excerpt *terminalEvent
}

// faultHandlerLogger is the logger of Kafka's non-fatal fault handler
// (metadata loading and publishing faults on a broker): it logs the fault
// and the component carries on with what it has.
const faultHandlerLogger = "org.apache.kafka.server.fault.LoggingFaultHandler"

// sameFaultCascade reports whether next is a later fault of the same kind
// ("Encountered metadata loading fault: ...") that the LoggingFaultHandler
// reported after ev: the component ran on after ev with a partial state
// (a MetadataLoader that could not load its snapshot initialises its
// publishers on an empty image and fails again), so the first fault is
// the cause and the later ones its consequences.
func (ev *terminalEvent) sameFaultCascade(next *terminalEvent) bool {
	if ev == nil {
		return false
	}
	msg, logger := messageOf(ev.joined)
	nextMsg, nextLogger := messageOf(next.joined)
	kind, _, ok := strings.Cut(msg, ": ")
	return ok && logger == faultHandlerLogger && nextLogger == faultHandlerLogger && strings.HasPrefix(nextMsg, kind+": ")
}

// cause returns the event whose chain explains the crash: the terminal
// event, else the last error record with a chain.
func (c *crashReading) cause() *terminalEvent {
	if t := c.terminal(); t != nil && len(t.chain) > 0 {
		return t
	}
	if c.lastError != nil {
		return c.lastError
	}
	if t := c.terminal(); t != nil {
		return t
	}
	return c.excerpt
}

// terminal returns the event where the process ended: the last one with an
// exception chain, else the last one (nil when the run has none).
func (c *crashReading) terminal() *terminalEvent {
	for i := len(c.events) - 1; i >= 0; i-- {
		if len(c.events[i].chain) > 0 {
			return &c.events[i]
		}
	}
	if len(c.events) > 0 {
		return &c.events[len(c.events)-1]
	}
	return nil
}

// inChain reports whether line n lies in a terminal event's line or chain.
func (c *crashReading) inChain(n int) bool {
	for _, ev := range c.events {
		if n >= ev.line && n <= ev.end {
			return true
		}
	}
	return false
}

// causes returns the distinct root-cause exception classes of the run's
// terminal events.
func (c *crashReading) causes() []string {
	var out []string
	for _, ev := range c.events {
		if ev.rootCause == "" {
			continue
		}
		name := exceptionClass(ev.rootCause)
		if !containsString(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// exceptionClass returns the class name of an exception line.
func exceptionClass(line string) string {
	if m := exceptionName.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return strings.TrimSpace(line)
}

// isRecordStart reports whether a line begins a log record (rather than
// continuing one: a stack frame, a cause, a wrapped message). Records start
// with "[2024-...", "2024-01-01 ...", a time, a level word (structured logs
// after normalizing, or an excerpt), "kafka 10:00:00.00 INFO" (Bitnami),
// "===>" (Confluent), or are the JVM's own lines.
func isRecordStart(line string) bool {
	if len(line) == 0 {
		return false
	}
	c := line[0]
	switch {
	case c == '[':
		return len(line) > 1 && isDigit(line[1])
	case isDigit(c):
		return len(line) > 8 && (line[4] == '-' || line[2] == ':') && isDigit(line[1])
	case c == ' ' || c == '\t':
		return false
	}
	// "Could not reserve enough space ..." follows "Error occurred during
	// initialization of VM" on a line of its own: it is the JVM's reason,
	// not a wrapped part of the line before.
	if hasAnyPrefix(line, levelWords) || hasAnyPrefix(line, jvmDeathPrefixes) || strings.HasPrefix(line, jvmDeathAnywhere) ||
		strings.HasPrefix(line, "===> ") || strings.HasPrefix(line, "Error: ") || strings.HasPrefix(line, "# ") {
		return true
	}
	// "kafka 10:00:00.00 INFO ==> ..." (Bitnami's entrypoint).
	if i := strings.IndexByte(line, ' '); i > 0 && i < 40 && len(line) > i+9 && isDigit(line[i+1]) && line[i+3] == ':' {
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// recordLevel returns the level of a record line: the first level word in
// its head ("" when it has none).
func recordLevel(line string) string {
	head := line[:min(len(line), 96)]
	best, level := len(head), ""
	for _, w := range levelWords {
		for off := 0; off < best; {
			i := strings.Index(head[off:], w)
			if i < 0 {
				break
			}
			i += off
			end := i + len(w)
			if (i == 0 || !isWordByte(head[i-1])) && (end == len(head) || !isWordByte(head[end])) {
				if i < best {
					best, level = i, w
				}
				break
			}
			off = end
		}
	}
	return level
}

func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// terminalKind says whether a record line is a terminal event, and of
// which kind ("kafka", "jvm", "script"; "" when it is not). A Kafka fatal
// exit counts only as the record's own message at ERROR or FATAL level (or
// without a level, as in excerpts), never quoted inside another record's
// message.
func terminalKind(line string) string {
	switch {
	case hasAnyPrefix(line, jvmDeathPrefixes) || strings.Contains(line, jvmDeathAnywhere):
		return "jvm"
	case containsAny(line, scriptErrors) && scriptLine(line):
		return "script"
	}
	level := recordLevel(line)
	if level != "" && level != "ERROR" && level != "FATAL" && level != "SEVERE" {
		return ""
	}
	if level == "FATAL" || containsAny(line, kafkaFatalExits) {
		return "kafka"
	}
	return ""
}

// scriptLine reports whether a line holding a script error is the
// script's own: Bitnami's "ERROR ==>", the usage line, or a shell's
// "path: ..." prefix.
func scriptLine(line string) bool {
	if strings.Contains(line, "ERROR ==> ") || strings.HasPrefix(line, "USAGE: ") {
		return true
	}
	first, _, _ := strings.Cut(line, " ")
	return strings.HasSuffix(first, ":") && (strings.Contains(first, "/") || strings.Contains(first, ".sh"))
}

// isFrame reports whether a line is a stack frame.
func isFrame(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " \t"), "at ")
}

// isExceptionLine reports whether a continuation line is an exception or
// its cause.
func isExceptionLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(t, "Caused by:") {
		return true
	}
	if len(t) == 0 || t[0] < 'a' || t[0] > 'z' || !(strings.Contains(t, "Exception") || strings.Contains(t, "Error")) {
		return false
	}
	return exceptionLinePattern.MatchString(t)
}

// readCrash reads the structure of the log's tail.
func (t *logTail) readCrash() crashReading {
	lines, nums := t.numbered()
	var c crashReading
	from := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if containsAny(lines[i], startBanners) {
			from, c.runStart = i, nums[i]
			break
		}
	}
	sawRecord := false
	for i := from; i < len(lines); i++ {
		line := lines[i]
		kind, level := "", ""
		if isRecordStart(line) || strings.Contains(line, jvmDeathAnywhere) || containsAny(line, scriptErrors) {
			kind = terminalKind(line)
			level = recordLevel(line)
			sawRecord = true
		} else if !sawRecord && c.excerpt == nil && strings.TrimSpace(line) != "" && line[0] != ' ' && line[0] != '\t' {
			// The first line of an excerpt, before any record.
			ev, j := readEvent(lines, nums, i, "")
			c.excerpt = &ev
			sawRecord = true
			i = j - 1
			continue
		}
		isError := level == "ERROR" || level == "FATAL" || level == "SEVERE"
		if kind == "" && !isError {
			continue
		}
		ev, j := readEvent(lines, nums, i, kind)
		if kind != "" {
			c.events = append(c.events, ev)
		}
		if isError && isDirFailure(&ev) {
			c.dirFailures = append(c.dirFailures, ev)
		}
		if isError && len(ev.chain) > 0 && !c.lastError.sameFaultCascade(&ev) {
			last := ev
			c.lastError = &last
		}
		i = j - 1
	}
	return c
}

// readEvent reads the record at lines[i] and its continuation lines (a
// wrapped message, exception lines, frames). It returns the event and the
// index of the next record.
func readEvent(lines []string, nums []int, i int, kind string) (terminalEvent, int) {
	line := lines[i]
	ev := terminalEvent{line: nums[i], end: nums[i], kind: kind}
	text := strings.TrimSpace(line)
	j := i + 1
	for ; j < len(lines) && !isRecordStart(lines[j]); j++ {
		l := lines[j]
		ev.end = nums[j]
		switch {
		case isFrame(l):
			if len(ev.frames) < 3 && strings.Contains(l, "kafka.") {
				if m := kafkaFrame.FindStringSubmatch(l); m != nil {
					ev.frames = append(ev.frames, m[1])
					if n, err := strconv.Atoi(m[3]); err == nil {
						ev.sites = append(ev.sites, frameSite{frame: m[1], file: m[2], line: n})
					}
				}
			}
			if ev.jdkOrigin == "" && strings.Contains(l, "security") {
				ev.jdkOrigin = jdkOriginFrame(l)
			}
		case isExceptionLine(l):
			ev.chain = append(ev.chain, validUTF8(strings.TrimSpace(l)))
		case len(ev.chain) == 0 && len(text) < MaxLineBytes:
			// The message wrapped onto this line.
			text += strings.TrimRight(l, " \t")
		}
	}
	ev.text, ev.joined = validUTF8(strings.TrimSpace(line)), validUTF8(text)
	// An exception on the record's own line ("...: java.io.IOException: ...").
	if len(ev.chain) == 0 && (strings.Contains(line, "Exception") || strings.Contains(line, "Error")) {
		if m := inlineException.FindString(line); m != "" {
			ev.chain = append(ev.chain, validUTF8(strings.TrimSpace(m)))
		}
	}
	if n := len(ev.chain); n > 0 {
		ev.rootCause = strings.TrimPrefix(ev.chain[n-1], "Caused by: ")
	}
	return ev, j
}
