// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ShellChoice says which shell runs the debug pod's repair script.
type ShellChoice string

// The shells the demo can run the repair script under.
const (
	// ShellAuto uses busybox when it is on PATH, else the system /bin/sh.
	ShellAuto ShellChoice = "auto"
	// ShellBusybox requires busybox (the shell of the images the bot runs).
	ShellBusybox ShellChoice = "busybox"
	// ShellSystem uses /bin/sh and the host's tools (dash and coreutils on
	// Debian): the script is POSIX and tested under dash too.
	ShellSystem ShellChoice = "sh"
)

// Shell is the shell the kubelet stand-in runs debug pods with.
type Shell struct {
	// Busybox is the binary given to kubesim: busybox itself, or a stand-in
	// that maps busybox's "sh" and applets to the host's /bin/sh and tools.
	Busybox string
	// Description says in words what runs the script.
	Description string
}

// scriptTools are the commands the repair script and kubesim's runner
// use (repair.sh names its tools in its header).
var scriptTools = []string{"awk", "cat", "date", "find", "hostname", "id", "ls", "mkdir", "mv", "od", "readlink", "sleep", "stat", "tr"}

// FindShell resolves choice to a Shell. For the system shell it writes a
// busybox stand-in into dir (which the caller removes).
func FindShell(choice ShellChoice, dir string) (Shell, error) {
	switch choice {
	case ShellAuto, "":
		if bb, err := exec.LookPath("busybox"); err == nil {
			return Shell{Busybox: bb, Description: "busybox sh (" + bb + ")"}, nil
		}
		return systemShell(dir, "busybox is not on PATH")
	case ShellBusybox:
		bb, err := exec.LookPath("busybox")
		if err != nil {
			return Shell{}, fmt.Errorf("--shell busybox: busybox is not installed (apt-get install busybox): %w", err)
		}
		return Shell{Busybox: bb, Description: "busybox sh (" + bb + ")"}, nil
	case ShellSystem:
		return systemShell(dir, "asked for with --shell sh")
	}
	return Shell{}, fmt.Errorf("unknown shell %q: want auto, busybox or sh", choice)
}

// systemShell writes a small executable that answers kubesim as busybox
// would: `--list` names the applets, `sh ARGS` runs /bin/sh, and a call
// through an applet link runs the host's tool of that name.
func systemShell(dir, why string) (Shell, error) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		return Shell{}, fmt.Errorf("no busybox and no /bin/sh: %w", err)
	}
	var cases, names strings.Builder
	names.WriteString("sh")
	for _, tool := range scriptTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			continue // the script reports a missing tool itself
		}
		fmt.Fprintf(&cases, "%s) exec %s \"$@\" ;;\n", tool, shellQuote(p))
		names.WriteString(" " + tool)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Shell{}, fmt.Errorf("creating the shell stand-in's dir: %w", err)
	}
	stub := filepath.Join(dir, "busybox")
	script := "#!/bin/sh\n" +
		"# Stand-in for busybox written by `bot demo`: the host's /bin/sh and tools.\n" +
		"applet=${0##*/}\n" +
		"if [ \"$applet\" = busybox ]; then applet=$1; shift; fi\n" +
		"case $applet in\n" +
		"--list) for a in " + names.String() + "; do echo \"$a\"; done ;;\n" +
		"sh) exec /bin/sh \"$@\" ;;\n" +
		cases.String() +
		"*) echo \"busybox stand-in: $applet: applet not found\" >&2; exit 127 ;;\n" +
		"esac\n"
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		return Shell{}, fmt.Errorf("writing the shell stand-in: %w", err)
	}
	return Shell{Busybox: stub, Description: fmt.Sprintf("the system /bin/sh (%s) with the host's tools, %s", sh, why)}, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
