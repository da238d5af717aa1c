// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

// Classes from where a message comes from. The structural reader (crash.go)
// gives the event where the process ended (or, in an excerpt without one,
// the last ERROR record with an exception chain); classifyEvent names its
// failure class from, in order of precedence:
//
//  1. an operating-system root cause in the chain (ENOSPC, EACCES, EROFS,
//     EIO, ENOMEM, EMFILE, "Map failed", bind errors...): the volume is full
//     whatever Kafka was writing when it noticed;
//  2. the catalogue (internal/diagnose/catalog): the template each exception
//     line of the chain, root cause first, was printed from, and that
//     template's class; then a named exception type under the Kafka frame
//     that threw it (exceptionFrameClasses entries with an exception), which
//     says more than the wrapping record's message; then the template of the
//     event's own message;
//  3. the catalogue's mapping of an exception class and its thrower (a
//     Kafka frame of the chain, or the record's logger) to a class;
//  4. exceptionFrameClasses below: an exception type with the top Kafka
//     frame, for origins the mapping does not hold.

// structuralClass is a class read from the structure of a crash.
type structuralClass struct {
	class string
	// basis says in words what gave the class.
	basis string
	// event is the terminal event (or last error record) it was read from.
	event *terminalEvent
	// osCause is set when an operating-system error decided the class.
	osCause bool
	// versions says which Kafka releases the throwing frame's line fits
	// ("" when no frame of the matched template's thrower has a line the
	// catalogue knows).
	versions string
}

// extraOSCauses are operating-system error texts the catalogue's list does
// not hold. "Not supported" is what the JDK's FileDispatcherImpl.lock0
// throws for ENOTSUP (a filesystem without POSIX locks: SMB, some NFS).
var extraOSCauses = []struct{ text, class, why string }{
	{"Operation not supported", "unsupported-filesystem", "ENOTSUP/EOPNOTSUPP"},
	{"Function not implemented", "unsupported-filesystem", "ENOSYS"},
	{"IOException: Not supported", "unsupported-filesystem", "ENOTSUP as FileChannel.tryLock reports it"},
}

// exceptionFrameClass maps an exception type thrown under a Kafka frame
// (or logged by a Kafka class) to a class, and says why.
type exceptionFrameClass struct {
	exception string // simple class name; "" for any
	frame     string // prefix of a Kafka frame or logger
	class     string
	why       string
}

// exceptionFrameClasses are the origins the catalogue's mapping leaves open.
var exceptionFrameClasses = append([]exceptionFrameClass{
	// kafka.Kafka.getPropsFromArgs reads the properties file named on the
	// command line (Utils.loadProps): any exception there is that file.
	{"", "kafka.Kafka$.getPropsFromArgs", "config-error", "kafka.Kafka reads the properties file given as its argument"},
	{"", "org.apache.kafka.common.utils.Utils.loadProps", "config-error", "Utils.loadProps reads the broker's properties file"},
	// ControllerApis authorizes a request before handling it; an
	// authorization exception there is the controllers' (or brokers')
	// own principal being denied.
	{"AuthorizerNotReadyException", "kafka.server.ControllerApis", "kraft-controller-authz-denied", "the controller's authorizer refused a request on the controller listener"},
	{"ClusterAuthorizationException", "kafka.server.ControllerApis", "kraft-controller-authz-denied", "the controller's authorizer refused a request on the controller listener"},
	{"ClusterAuthorizationException", "org.apache.kafka.raft", "kraft-controller-authz-denied", "the raft client was refused by a voter's authorizer"},
	// The offset checkpoint files' parser (recovery-point, replication-
	// offset, log-start-offset): a NumberFormatException there is a
	// malformed line the "Malformed line" check did not catch (a number
	// field with garbage in it). Scala up to 3.9, storage's Java after.
	{"NumberFormatException", "kafka.server.checkpoints.", "corrupt-checkpoint-file", "the offset checkpoint file's parser read a malformed number"},
	{"NumberFormatException", "org.apache.kafka.storage.internals.checkpoint.", "corrupt-checkpoint-file", "the offset checkpoint file's parser read a malformed number"},
}, remoteLogManagerOrigins()...)

// remoteLogManagerOrigins: RemoteLogManager loads and configures the
// tiered-storage plugins at start, so an exception under these methods is
// the plugins' class names or configuration (its runtime copy and fetch
// errors are not). The class is kafka.log.remote.RemoteLogManager up to
// 4.0 and org.apache.kafka.server.log.remote.storage.RemoteLogManager
// after (the fault lab's 4.4.0 recording); createDelegate, which loads a
// plugin class by its configured name for both factories, comes first in
// the chain, so the top three Kafka frames may not reach the factory.
func remoteLogManagerOrigins() []exceptionFrameClass {
	methods := []struct{ name, why string }{
		{"createRemoteStorageManager", "RemoteLogManager instantiates the configured RemoteStorageManager class"},
		{"createRemoteLogMetadataManager", "RemoteLogManager instantiates the configured RemoteLogMetadataManager class"},
		{"createDelegate", "RemoteLogManager loads the configured plugin class by name"},
		{"configureRSM", "RemoteLogManager configures the RemoteStorageManager plugin"},
		{"configureRLMM", "RemoteLogManager configures the RemoteLogMetadataManager plugin"},
		{"startup", "RemoteLogManager starts the tiered-storage plugins"},
	}
	var out []exceptionFrameClass
	for _, pkg := range []string{"kafka.log.remote.", "org.apache.kafka.server.log.remote.storage."} {
		for _, m := range methods {
			out = append(out, exceptionFrameClass{"", pkg + "RemoteLogManager." + m.name, "tiered-storage-config-error", m.why})
		}
	}
	return out
}

// jdkOriginClasses map a JDK class in an exception's frames to the class
// of what it reads, for failures whose chain holds no Kafka frame (the JDK
// throws while Kafka's own frames are below the part a log shows). Each
// entry says why.
var jdkOriginClasses = []struct {
	frame, class, why string
}{
	// The JDK's JAAS login configuration (java.security.auth.login.config,
	// which Kafka's JaasContext asks for) is parsed by ConfigFile: a missing
	// or unreadable file, or a syntax error in it, is thrown from there.
	{"sun.security.provider.ConfigFile", "sasl-config-error", "the JDK reads the JAAS login configuration file (java.security.auth.login.config)"},
	{"javax.security.auth.login.Configuration", "sasl-config-error", "the JDK loads the JAAS login configuration"},
}

// jdkOriginFrame returns the class and method of a stack frame line when
// its class is one of jdkOriginClasses, else "".
func jdkOriginFrame(line string) string {
	f := strings.TrimPrefix(strings.TrimLeft(line, " \t"), "at ")
	if i := strings.IndexByte(f, '/'); i >= 0 && i < strings.IndexByte(f, '(') {
		f = f[i+1:] // "java.base/sun.security..." (module prefix)
	}
	f, _, _ = strings.Cut(f, "(")
	for _, o := range jdkOriginClasses {
		if strings.HasPrefix(f, o.frame) {
			return f
		}
	}
	return ""
}

var (
	catalogOnce sync.Once
	kafkaCat    *catalog.Catalog
)

// kafkaCatalog returns the embedded catalogue (nil if it cannot be read,
// which the catalogue's own tests rule out: the other steps still work).
func kafkaCatalog() *catalog.Catalog {
	catalogOnce.Do(func() {
		if c, err := catalog.Load(); err == nil {
			kafkaCat = c
		}
	})
	return kafkaCat
}

// loggerSuffix is the "(logger)" at the end of a Kafka log line, with an
// optional "[thread]" after it (Strimzi's layout).
var loggerSuffix = regexp.MustCompile(`\(([\w$.]+)\)(?: \[[^\]]*\])?\s*$`)

// recordPrefix is a record's time and level in front of its message.
// Bitnami's entrypoint writes "kafka 08:30:57.87 ERROR ==> message".
var recordPrefix = regexp.MustCompile(`^(?:\[[^\]]*\] |\d{4}-\d\d-\d\d[ T][\d:,.]+ |[\w-]+ \d\d:\d\d:\d\d\.\d+ )?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|SEVERE)\s+(?:==> )?`)

// messageOf returns a record's message without its time, level and logger,
// and its logger ("" when the line names none).
func messageOf(line string) (msg, logger string) {
	msg = recordPrefix.ReplaceAllString(line, "")
	if m := loggerSuffix.FindStringSubmatchIndex(msg); m != nil {
		logger = msg[m[2]:m[3]]
		msg = msg[:m[0]]
	}
	return strings.TrimSpace(msg), logger
}

// frameClass returns the class of a frame's method ("kafka.Kafka$.main" ->
// "kafka.Kafka$").
func frameClass(frame string) string {
	if i := strings.LastIndexByte(frame, '.'); i > 0 {
		return frame[:i]
	}
	return frame
}

// classifyCrash names the class of a crash: that of the event its chain
// explains (crash.cause), else, when that event's chain names none, that of
// the nearest earlier fatal event of the run with a chain. A startup
// failure is often followed by fatal events that are its consequences and
// say nothing of it: on 3.7.2, BrokerServer's "Fatal error during broker
// startup" (the real cause) is followed by "Fatal error during broker
// shutdown" and "Exiting Kafka" quoting a NullPointerException of the
// aborted shutdown itself (BrokerServer.shutdown with no lifecycleManager
// yet), which no origin maps to a class.
func classifyCrash(c *crashReading) structuralClass {
	cause := c.cause()
	if cls := classifyEvent(cause); cls.class != "" {
		return cls
	}
	for i := len(c.events) - 1; i >= 0; i-- {
		ev := &c.events[i]
		if len(ev.chain) == 0 || ev.line == cause.lineOrZero() {
			continue
		}
		if cls := classifyEvent(ev); cls.class != "" {
			return cls
		}
	}
	return structuralClass{}
}

// lineOrZero is the event's line number (0 for no event).
func (ev *terminalEvent) lineOrZero() int {
	if ev == nil {
		return 0
	}
	return ev.line
}

// classifyEvent names the class of an event's root cause, or "".
func classifyEvent(ev *terminalEvent) structuralClass {
	if ev == nil {
		return structuralClass{}
	}
	found := func(class, basis string) structuralClass {
		return structuralClass{class: class, basis: basis, event: ev}
	}
	// The chain from the root cause up, then the event's own line.
	texts := make([]string, 0, len(ev.chain)+1)
	for i := len(ev.chain) - 1; i >= 0; i-- {
		texts = append(texts, ev.chain[i])
	}
	msg, logger := messageOf(ev.joined)
	texts = append(texts, msg)

	// 1. Operating-system root causes.
	for _, t := range texts {
		if class, text := catalog.OSCause(t); class != "" {
			f := found(class, "operating-system error "+text)
			f.osCause = true
			return f
		}
		for _, c := range extraOSCauses {
			if strings.Contains(t, c.text) {
				f := found(c.class, "operating-system error "+c.why)
				f.osCause = true
				return f
			}
		}
	}
	// 2. The catalogue's templates, the chain's own lines first.
	cat := kafkaCatalog()
	if cat != nil {
		for _, t := range texts[:len(texts)-1] {
			if m, ok := cat.Match(t); ok && m.Class != "" {
				f := found(m.Class, "catalogue template "+m.Template.ID+" ("+m.Template.Thrower+")")
				f.versions = versionHint(m.Template, ev.sites)
				return f
			}
		}
	}
	throwers := append(make([]string, 0, len(ev.frames)+1), ev.frames...)
	if logger != "" {
		throwers = append(throwers, logger)
	}
	// A named exception type under the frame that threw it says more than
	// the wrapping record's own message: "Error applying topics delta" (a
	// metadata publishing fault) over a NumberFormatException thrown by the
	// checkpoint parser is the checkpoint, not the metadata log.
	for _, e := range exceptionFrameClasses {
		if e.exception == "" {
			continue
		}
		for i := len(ev.chain) - 1; i >= 0; i-- {
			if simpleExceptionName(exceptionClass(ev.chain[i])) != e.exception {
				continue
			}
			for _, th := range ev.frames {
				if strings.HasPrefix(th, e.frame) {
					return found(e.class, "exception "+exceptionClass(ev.chain[i])+" under "+th+": "+e.why)
				}
			}
		}
	}
	if cat != nil {
		if m, ok := cat.Match(texts[len(texts)-1]); ok && m.Class != "" {
			return found(m.Class, "catalogue template "+m.Template.ID+" ("+m.Template.Thrower+")")
		}
	}
	// 3 and 4. Exception type with its thrower: a Kafka frame or the logger.
	for i := len(ev.chain) - 1; i >= 0; i-- {
		exc := exceptionClass(ev.chain[i])
		for _, th := range throwers {
			if cat != nil {
				if class := cat.ClassFor(exc, frameClass(th)); class != "" {
					return found(class, "exception "+exc+" thrown by "+frameClass(th))
				}
			}
		}
	}
	for _, e := range exceptionFrameClasses {
		for i := len(ev.chain) - 1; i >= 0; i-- {
			if e.exception != "" && simpleExceptionName(exceptionClass(ev.chain[i])) != e.exception {
				continue
			}
			for _, th := range throwers {
				if strings.HasPrefix(th, e.frame) {
					return found(e.class, "exception "+exceptionClass(ev.chain[i])+" under "+th+": "+e.why)
				}
			}
		}
	}
	if ev.jdkOrigin != "" {
		for _, o := range jdkOriginClasses {
			if strings.HasPrefix(ev.jdkOrigin, o.frame) {
				return found(o.class, "exception "+exceptionClass(ev.chain[0])+" under "+ev.jdkOrigin+": "+o.why)
			}
		}
	}
	return structuralClass{}
}

// versionHint reads the Kafka release from a stack frame: the first frame
// in the template's throwing class whose line is where some releases of
// the catalogue start that throw, and the releases whose line is not known
// (they may fit as well). "" when none fits.
func versionHint(t *catalog.Template, sites []frameSite) string {
	for _, s := range sites {
		if c := frameClass(s.frame); c != t.Thrower && !strings.HasPrefix(c, t.Thrower+"$") {
			continue
		}
		rel := t.ReleasesAt(s.line)
		if len(rel) == 0 {
			continue
		}
		hint := fmt.Sprintf("the frame %s(%s:%d) is where Kafka %s throws this message (%d of the %d releases the catalogue holds it for",
			s.frame, s.file, s.line, strings.Join(rel, ", "), len(rel), len(t.Versions))
		if unknown := t.ReleasesWithoutLine(); len(unknown) > 0 {
			// Read from class files without the site's line: they may fit too.
			hint += "; its line in Kafka " + strings.Join(unknown, ", ") + " is not known"
		}
		return hint + ")"
	}
	return ""
}

func simpleExceptionName(qualified string) string {
	return qualified[strings.LastIndexByte(qualified, '.')+1:]
}

// structuralFinding builds the finding of a class read from the structure
// of the crash, with the manual remedy of the class's rule (never an
// automated one: no pattern of the rule matched, so no value of the line
// names its target). ok is false when no rule has the class, or its rule
// triages values read from the line.
func (sc *scan) structuralFinding(cls structuralClass) (Finding, bool) {
	var rule *compiledRule
	for _, r := range sc.e.rules {
		if r.ClassID() == cls.class && (rule == nil || r.ID == cls.class) {
			rule = r
		}
	}
	if rule == nil || rule.Triage != "" {
		// A class whose diagnosis depends on values of the line (the
		// offsets a triage compares) is named only by its rule's own
		// patterns, which read them. A rule with an automated remedy gives
		// its manual steps here: the automation needs the target its
		// patterns read.
		return Finding{}, false
	}
	ev := cls.event
	evidence := []string{ev.text}
	for i, c := range ev.chain {
		if i < maxChainLines-1 || i == len(ev.chain)-1 {
			evidence = append(evidence, c)
		}
	}
	explanation := strings.TrimSpace(rule.Explanation) + "\n\nRecognised from the structure of the crash, not from a pattern of the rule: " +
		cls.basis + ", in the exception chain of the line where the process ended (or of the last error in the log)."
	if cls.versions != "" {
		explanation += "\n\nKafka version (a hint from the stack trace): " + cls.versions + "."
	}
	return Finding{
		Rule:        rule.ID,
		Class:       cls.class,
		Title:       rule.Title,
		Severity:    rule.Severity,
		Confidence:  min(rule.Confidence, 0.7),
		Risk:        rule.Risk,
		Evidence:    evidence,
		Explanation: explanation,
		Remedy:      Remedy{Action: rule.Remedy.Label, Steps: append([]string(nil), rule.Remedy.Steps...)},
		VersionHint: cls.versions,
	}, true
}
