// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package catalog

import (
	"crypto/sha1"
	"encoding/hex"
)

// TemplateID is the stable id of a template: a hash of its kind, exception,
// thrower and text (hack/catalog uses it too).
func TemplateID(kind, exception, thrower, text string) string {
	h := sha1.Sum([]byte(kind + "\x00" + exception + "\x00" + thrower + "\x00" + text))
	return hex.EncodeToString(h[:6])
}

// HandTemplate is a template written by hand from the program that prints
// it (the JVM, the C library's error texts), with its class and provenance.
// hack/catalog adds them to the data; Load gives them Class.
type HandTemplate struct {
	Release   string // release name it is filed under ("openjdk", "glibc")
	Product   string // jvm or os
	Text      string
	Kind      string
	Exception string
	Thrower   string
	Fatal     bool
	Class     string // "" when the text alone does not decide a class
	Wanted    string // a class the taxonomy lacks that this template would need (reported, not used)
	Defers    bool   // a summary line whose class is the line before's or after's
	Why       string
	Source    Provenance
}

// HandReleases names the releases of the hand lists (Name, Product, what was read).
var HandReleases = []Release{
	{Name: "openjdk", Product: "jvm", Artifacts: []string{"github.com/openjdk/jdk (jdk8u, 11, 17, 21 and master files named in each template)"}},
	{Name: "glibc", Product: "os", Artifacts: []string{"glibc string/strerror texts (misc/errlist)"}},
}

func jdk(file string) Provenance {
	return Provenance{Repo: "openjdk/jdk", Version: "jdk-17..21 (jdk8u where noted)", File: file}
}

func glibc() Provenance {
	return Provenance{Repo: "glibc", Version: "2.x", File: "stdio-common/errlist.h (strerror texts, as Java's IOException messages carry them)"}
}

// uncaughtHandlerText is what the JVM prints when a thread's
// uncaught-exception handler itself throws (often an OutOfMemoryError).
const uncaughtHandlerText = "Exception: {} thrown from the UncaughtExceptionHandler in thread \"{}\""

const (
	oome     = "java.lang.OutOfMemoryError"
	universe = "src/hotspot/share/memory/universe.cpp"
	vmError  = "src/hotspot/share/utilities/vmError.cpp"
	args     = "src/hotspot/share/runtime/arguments.cpp"
	javaCpp  = "src/hotspot/share/runtime/java.cpp"
	launcher = "src/java.base/share/classes/sun/launcher/resources/launcher.properties"
	javaC    = "src/java.base/share/native/libjli/java.c"
)

// HandList is the JVM's fatal outputs and the operating system's error texts.
var HandList = []HandTemplate{
	// OutOfMemoryError kinds (the message after "java.lang.OutOfMemoryError: ").
	{Text: "Java heap space", Exception: oome, Class: "heap-oom", Why: "the heap is exhausted", Source: jdk(universe)},
	{Text: "GC overhead limit exceeded", Exception: oome, Class: "heap-oom", Why: "the GC frees too little heap (parallel GC)", Source: jdk(universe)},
	{Text: "Requested array size exceeds VM limit", Exception: oome, Class: "heap-oom", Why: "an array larger than the heap can hold", Source: jdk(universe)},
	{Text: "Java heap space: failed reallocation of scalar replaced objects", Exception: oome, Class: "heap-oom", Why: "deoptimization could not reallocate on the heap", Source: jdk(universe)},
	{Text: "Metaspace", Exception: oome, Class: "", Wanted: "metaspace-oom", Why: "metaspace exhausted: no class in the taxonomy (reported as unmapped)", Source: jdk(universe)},
	{Text: "Compressed class space", Exception: oome, Class: "", Wanted: "metaspace-oom", Why: "compressed class space exhausted: no class in the taxonomy (reported as unmapped)", Source: jdk(universe)},
	{Text: "Direct buffer memory", Exception: oome, Class: "direct-memory-oom", Why: "Bits.reserveMemory (JDK 8..16) ran past -XX:MaxDirectMemorySize", Source: jdk("src/java.base/share/classes/java/nio/Bits.java")},
	{Text: "Cannot reserve {} bytes of direct buffer memory (allocated: {}, limit: {})", Exception: oome, Class: "direct-memory-oom", Why: "Bits.reserveMemory (JDK 17+) ran past -XX:MaxDirectMemorySize", Source: jdk("src/java.base/share/classes/java/nio/Bits.java")},
	{Text: "unable to create native thread: possibly out of memory or process/resource limits reached", Exception: oome, Class: "", Wanted: "thread-limit", Why: "thread creation failed (pids limit, ulimit -u or memory): no class in the taxonomy (reported as unmapped)", Source: jdk("src/hotspot/share/prims/jvm.cpp")},
	{Text: "unable to create new native thread", Exception: oome, Class: "", Wanted: "thread-limit", Why: "JDK 8's text of the thread-creation failure: no class in the taxonomy (reported as unmapped)", Source: Provenance{Repo: "openjdk/jdk8u", Version: "jdk8u", File: "hotspot/src/share/vm/prims/jvm.cpp"}},
	{Text: "Map failed", Exception: oome, Class: "mmap-limit", Why: "FileChannelImpl.map: mmap failed (vm.max_map_count), first as OutOfMemoryError", Source: jdk("src/java.base/share/classes/sun/nio/ch/FileChannelImpl.java")},
	{Text: "Map failed", Exception: "java.io.IOException", Class: "mmap-limit", Why: "FileChannelImpl.map: mmap failed again after a GC (vm.max_map_count)", Source: jdk("src/java.base/share/classes/sun/nio/ch/FileChannelImpl.java")},

	{Text: uncaughtHandlerText, Kind: KindJVM, Class: "", Defers: true, Why: "the JVM reports an exception its uncaught-exception handler threw; the exception named decides (OutOfMemoryError is refined to heap-oom)", Source: jdk("src/hotspot/share/runtime/javaThread.cpp (thread.cpp before JDK 21)")},

	// hs_err and VM initialization.
	{Text: "A fatal error has been detected by the Java Runtime Environment:", Kind: KindJVM, Class: "", Wanted: "jvm-crash", Why: "hs_err header: the crash kind follows (SIGSEGV, SIGBUS...); not a class by itself", Source: jdk(vmError)},
	{Text: "There is insufficient memory for the Java Runtime Environment to continue.", Kind: KindJVM, Class: "jvm-native-memory-insufficient", Why: "hs_err for a failed native allocation", Source: jdk(vmError)},
	{Text: "Native memory allocation (mmap) failed to map {} bytes for {}", Kind: KindJVM, Class: "jvm-native-memory-insufficient", Why: "hs_err: mmap of native memory failed", Source: jdk(vmError)},
	{Text: "Native memory allocation (malloc) failed to allocate {} bytes for {}", Kind: KindJVM, Class: "jvm-native-memory-insufficient", Why: "hs_err: malloc failed", Source: jdk(vmError)},
	{Text: "os::commit_memory({}, {}, {}) failed; error='{}' (errno={})", Kind: KindJVM, Class: "jvm-native-memory-insufficient", Why: "the OS refused to commit reserved memory (errno 12 ENOMEM)", Source: jdk("src/hotspot/os/linux/os_linux.cpp")},
	{Text: "An error report file with more information is saved as:", Kind: KindJVM, Class: "", Defers: true, Why: "hs_err trailer; not a class by itself", Source: jdk(vmError)},
	{Text: "Error occurred during initialization of VM", Kind: KindJVM, Class: "", Defers: true, Why: "VM start failed; the next line says why", Source: jdk(javaCpp)},
	{Text: "Could not reserve enough space for object heap", Kind: KindJVM, Class: "jvm-native-memory-insufficient", Why: "the heap (-Xmx) could not be reserved (JDK 8 text)", Source: Provenance{Repo: "openjdk/jdk8u", Version: "jdk8u", File: "hotspot/src/share/vm/memory/universe.cpp"}},
	{Text: "Could not reserve enough space for {}KB object heap", Kind: KindJVM, Class: "jvm-native-memory-insufficient", Why: "the heap (-Xmx) could not be reserved", Source: jdk(universe)},
	{Text: "Too small maximum heap", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "-Xmx below the VM's minimum", Source: jdk("src/hotspot/share/gc/shared/gcArguments.cpp")},
	{Text: "Initial heap size set to a larger value than the maximum heap size", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "-Xms larger than -Xmx", Source: jdk("src/hotspot/share/gc/shared/gcArguments.cpp")},
	{Text: "Incompatible minimum and maximum heap sizes specified", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "-Xms/-Xmx contradict each other", Source: jdk("src/hotspot/share/gc/shared/gcArguments.cpp")},
	{Text: "Unrecognized VM option '{}'", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "a -XX option this JVM does not know", Source: jdk(args)},
	{Text: "Improperly specified VM option '{}'", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "a malformed -XX option", Source: jdk(args)},
	{Text: "Missing +/- setting for VM option '{}'", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "a boolean -XX option without + or -", Source: jdk(args)},
	{Text: "VM option '{}' is experimental and must be enabled via -XX:+UnlockExperimentalVMOptions.", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "an experimental -XX option without the unlock flag", Source: jdk(args)},
	{Text: "VM option '{}' is diagnostic and must be enabled via -XX:+UnlockDiagnosticVMOptions.", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "a diagnostic -XX option without the unlock flag", Source: jdk(args)},
	{Text: "Invalid maximum heap size: {}", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "a malformed -Xmx", Source: jdk(args)},
	{Text: "Invalid initial heap size: {}", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "a malformed -Xms", Source: jdk(args)},
	{Text: "Invalid -Xlog option '{}', see error log for details.", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "the -Xlog parser rejected the option", Source: jdk("src/hotspot/share/logging/logConfiguration.cpp")},
	{Text: "Unrecognized option: {}", Kind: KindJVM, Class: "jvm-option-unsupported", Why: "an option the launcher or VM does not know", Source: jdk(args)},
	{Text: "Could not create the Java Virtual Machine.", Kind: KindJVM, Class: "", Defers: true, Why: "the launcher's summary after any VM start failure; the line before says why", Source: jdk(javaC)},
	{Text: "A fatal exception has occurred. Program will exit.", Kind: KindJVM, Class: "", Defers: true, Why: "the launcher's summary after an exception in VM start; the line before says why", Source: jdk(javaC)},
	{Text: "Could not find or load main class {}", Kind: KindJVM, Class: "kafka-classpath-broken", Why: "the launcher cannot load the main class (java.launcher.cls.error1)", Source: jdk(launcher)},
	{Text: "Unable to initialize main class {}", Kind: KindJVM, Class: "kafka-classpath-broken", Why: "the main class failed to initialize (java.launcher.cls.error7)", Source: jdk(launcher)},
	{Text: "LinkageError occurred while loading main class {}", Kind: KindJVM, Class: "kafka-classpath-broken", Why: "the main class could not be linked (java.launcher.cls.error6)", Source: jdk(launcher)},
	{Text: "{} has been compiled by a more recent version of the Java Runtime (class file version {}), this version of the Java Runtime only recognizes class file versions up to {}", Exception: "java.lang.UnsupportedClassVersionError", Kind: KindJVM, Class: "kafka-classpath-broken", Why: "the image's Java is older than the one Kafka was built for", Source: jdk("src/hotspot/share/classfile/classFileParser.cpp")},

	// The C library's error texts (strerror), as IOException and
	// FileNotFoundException messages carry them.
	{Text: "No space left on device", Exception: "java.io.IOException", Class: "disk-full", Why: "ENOSPC", Source: glibc()},
	{Text: "Disk quota exceeded", Exception: "java.io.IOException", Class: "disk-full", Why: "EDQUOT", Source: glibc()},
	{Text: "Read-only file system", Exception: "java.io.IOException", Class: "data-dir-read-only", Why: "EROFS: remounted read-only by the kernel after I/O errors, or mounted read-only by mistake", Source: glibc()},
	{Text: "Input/output error", Exception: "java.io.IOException", Class: "storage-io-error", Why: "EIO", Source: glibc()},
	{Text: "Permission denied", Exception: "java.io.IOException", Class: "data-dir-permission-denied", Why: "EACCES", Source: glibc()},
	{Text: "Operation not permitted", Exception: "java.io.IOException", Class: "data-dir-permission-denied", Why: "EPERM", Source: glibc()},
	{Text: "Too many open files", Exception: "java.io.IOException", Class: "fd-limit", Why: "EMFILE", Source: glibc()},
	{Text: "Cannot allocate memory", Exception: "java.io.IOException", Class: "jvm-native-memory-insufficient", Why: "ENOMEM", Source: glibc()},
	{Text: "Address already in use", Exception: "java.net.BindException", Class: "port-in-use", Why: "EADDRINUSE", Source: glibc()},
	{Text: "Cannot assign requested address", Exception: "java.net.BindException", Class: "listener-bind-address-invalid", Why: "EADDRNOTAVAIL", Source: glibc()},
	{Text: "Stale file handle", Exception: "java.io.IOException", Class: "unsupported-filesystem", Why: "ESTALE: an NFS handle went stale", Source: glibc()},
	{Text: "Invalid argument", Exception: "java.io.IOException", Class: "unsupported-filesystem", Why: "EINVAL from mmap, lock or truncate on SMB/NFS-like or desktop bind-mounted volumes", Source: glibc()},
	{Text: "{} (No such file or directory)", Exception: "java.io.FileNotFoundException", Class: "", Why: "ENOENT: which file decides (meta.properties, a config file...); not a class by itself", Source: glibc()},
}

// The forms Java gives an errno text: FileNotFoundException "path (text)" and
// java.nio.file.FileSystemException "path: text".
func init() {
	var forms []HandTemplate
	for _, h := range HandList {
		if h.Source.Repo != "glibc" || h.Exception != "java.io.IOException" {
			continue
		}
		a, b := h, h
		a.Text, a.Exception, a.Why = "{} ("+h.Text+")", "java.io.FileNotFoundException", h.Why+" opening a file"
		b.Text, b.Exception, b.Why = "{}: "+h.Text, "java.nio.file.FileSystemException", h.Why+" in a java.nio.file operation"
		forms = append(forms, a, b)
	}
	HandList = append(HandList, forms...)
	for i := range HandList {
		h := &HandList[i]
		if h.Kind == "" {
			h.Kind = KindOS
			if h.Exception == oome {
				h.Kind = KindJVM
			}
		}
		if h.Thrower == "" {
			h.Thrower = h.Source.Repo + ":" + h.Source.File
		}
		if h.Release == "" {
			h.Release, h.Product = "openjdk", "jvm"
			if h.Source.Repo == "glibc" {
				h.Release, h.Product = "glibc", "os"
			}
		}
		h.Fatal = h.Kind == KindJVM
		handClasses[TemplateID(h.Kind, h.Exception, h.Thrower, h.Text)] = handClass{h.Class, h.Why, h.Wanted, h.Defers}
	}
}
