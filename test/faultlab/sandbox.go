// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sandbox is a private network and mount namespace for one recipe: only a
// loopback interface (so every port is free, every address but 127.0.0.0/8
// is unreachable and a name lookup reaches no resolver), and mounts that
// no process outside sees and that vanish with the namespace. A holder
// process (sleep) keeps the namespaces alive; every command of the recipe
// enters them with nsenter. Creating one needs root.
type Sandbox struct {
	holder *exec.Cmd
	done   chan struct{}
}

// NewSandbox starts the holder of a new network and mount namespace.
func NewSandbox() (*Sandbox, error) {
	cmd := exec.Command("unshare", "--net", "--mount", "--propagation", "private", "--",
		"sh", "-c", "ip link set lo up && echo ready && exec sleep 86400")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: starting unshare: %w", err)
	}
	sb := &Sandbox{holder: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(sb.done) }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		sb.Close()
		return nil, fmt.Errorf("sandbox: namespace holder did not come up (%q, %v): %s", line, err, strings.TrimSpace(stderr.String()))
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return sb, nil
}

// Command is argv run inside the sandbox's namespaces, in dir.
func (sb *Sandbox) Command(dir string, argv ...string) *exec.Cmd {
	args := append([]string{"--target", strconv.Itoa(sb.holder.Process.Pid), "--net", "--mount", "--wd=" + dir, "--"}, argv...)
	cmd := exec.Command("nsenter", args...)
	cmd.Dir = dir
	return cmd
}

// Close stops the holder by its PID; the namespaces and their mounts go
// away once the last process in them has ended.
func (sb *Sandbox) Close() {
	if sb == nil || sb.holder.Process == nil {
		return
	}
	_ = sb.holder.Process.Kill()
	<-sb.done
}

// Proc is a process a recipe started (a Kafka node, ZooKeeper, a port
// holder): its output goes to a file, and the lab stops it by PID.
type Proc struct {
	// Name names the process in the recipe's steps ("broker", "zookeeper").
	Name string
	// LogPath is the file that holds the process's stdout and stderr.
	LogPath string

	cmd     *exec.Cmd
	done    chan struct{}
	state   *os.ProcessState
	stopped bool // the lab ended it (Kill or Stop) before it exited by itself
}

// startProc starts cmd with stdout and stderr both appended to logPath.
func startProc(name string, cmd *exec.Cmd, logPath string) (*Proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: starting: %w", name, err)
	}
	p := &Proc{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id (nsenter execs the command, so it is the JVM's).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitExit waits up to d for the process to end by itself and reports
// whether it did.
func (p *Proc) WaitExit(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// ExitCode is the exit status, 128+signal when a signal ended it, or -1
// while it runs.
func (p *Proc) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.state.ExitCode()
}

// StoppedByLab reports whether the lab ended the process.
func (p *Proc) StoppedByLab() bool { return p.stopped }

// errExited is returned by WaitLog when the process ended first.
var errExited = errors.New("process exited")

// WaitLog waits up to d for a line of the process's output to contain
// one of the texts, and returns that line.
func (p *Proc) WaitLog(d time.Duration, texts ...string) (string, error) {
	deadline := time.Now().Add(d)
	for {
		exited := p.Exited() // read before the file, so a last line is not missed
		b, err := os.ReadFile(p.LogPath)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.Name, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, text := range texts {
				if strings.Contains(line, text) {
					return line, nil
				}
			}
		}
		if exited {
			return "", fmt.Errorf("%s: waiting for %q: %w (code %d)", p.Name, texts, errExited, p.ExitCode())
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s: no line with %q after %s", p.Name, texts, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Kill ends the process with SIGKILL, so its output ends where it was.
func (p *Proc) Kill() {
	if p.Exited() {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop ends the process with SIGTERM (a clean shutdown), then SIGKILL
// when it is still there after grace.
func (p *Proc) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if !p.WaitExit(grace) {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}
