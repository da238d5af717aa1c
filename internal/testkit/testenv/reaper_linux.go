// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// reaper guarantees that etcd and kube-apiserver die with the test binary.
// envtest starts them in their own process groups, so neither Ctrl-C on the
// terminal nor a test binary killed by `go test -timeout` reaches them, and
// Stop never runs in those cases. The reaper is a tiny shell, in its own
// process group, blocked reading a pipe whose only writer is the test
// binary: when the binary exits for any reason the read returns and the
// shell kills the control plane's process groups.
type reaper struct {
	cmd  *exec.Cmd
	pipe *os.File
	// groups are the process groups it kills.
	groups []int
}

// reaperScript kills the process groups given as arguments once stdin
// closes: SIGTERM, then SIGKILL for whatever is left after 3 s. (No "--"
// before the negative ids: dash's kill takes it for a pid and gives up.)
const reaperScript = `read _ ; for g in "$@"; do kill -TERM "-$g" 2>/dev/null; done; ` +
	`sleep 3; for g in "$@"; do kill -KILL "-$g" 2>/dev/null; done; exit 0`

// startReaper arms a reaper for the control-plane processes this process
// has started, except the process groups in earlier (another control
// plane's, which has its own reaper: firing this one must not stop it). It
// returns nil (and reports why on stderr) if it cannot: the normal Stop
// path does not depend on it.
func startReaper(earlier []int) *reaper {
	groups, err := controlPlaneGroups(os.Getpid())
	groups = slices.DeleteFunc(groups, func(g int) bool { return slices.Contains(earlier, g) })
	if err != nil || len(groups) == 0 {
		fmt.Fprintf(os.Stderr, "testenv: no reaper for the control plane (found %d processes): %v\n", len(groups), err)
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: no reaper for the control plane: %v\n", err)
		return nil
	}
	args := []string{"-c", reaperScript, "testenv-reaper"}
	for _, g := range groups {
		args = append(args, strconv.Itoa(g))
	}
	cmd := exec.Command("/bin/sh", args...)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		fmt.Fprintf(os.Stderr, "testenv: no reaper for the control plane: %v\n", err)
		return nil
	}
	r.Close() // the child holds its own copy
	return &reaper{cmd: cmd, pipe: w, groups: groups}
}

// disarm stops the reaper without letting it act: the control plane was
// stopped cleanly.
func (r *reaper) disarm() {
	if r == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.pipe.Close()
}

// fire makes the reaper kill the control plane now and waits for it.
func (r *reaper) fire() {
	if r == nil {
		return
	}
	r.pipe.Close()
	_ = r.cmd.Wait()
}

// controlPlaneGroups returns the process groups of the etcd and
// kube-apiserver processes whose parent is pid.
func controlPlaneGroups(pid int) ([]int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var groups []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process exited meanwhile
		}
		comm, ppid, pgrp, ok := parseStat(string(data))
		if !ok || ppid != pid || (comm != "etcd" && comm != "kube-apiserver") {
			continue
		}
		if !slices.Contains(groups, pgrp) {
			groups = append(groups, pgrp)
		}
	}
	return groups, nil
}

// parseStat reads the command name, parent pid and process group from a
// /proc/PID/stat line: "pid (comm) state ppid pgrp ...". comm may itself
// contain spaces and parentheses, so it ends at the last ')'.
func parseStat(line string) (comm string, ppid, pgrp int, ok bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	fields := strings.Fields(line[end+1:])
	if len(fields) < 3 {
		return "", 0, 0, false
	}
	ppid, err1 := strconv.Atoi(fields[1])
	pgrp, err2 := strconv.Atoi(fields[2])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return line[open+1 : end], ppid, pgrp, true
}
