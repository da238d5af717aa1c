// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"fmt"
	"net"
	"os"
	"time"
)

// envListen makes the test binary a port holder instead of running tests
// (see HoldPortIfAsked).
const envListen = "FAULTLAB_LISTEN"

// HoldPortIfAsked is called first by the test binary's TestMain: when
// FAULTLAB_LISTEN names an address, the process listens there and never
// returns (the lab kills it), so a recipe can occupy a port inside its
// sandbox without any tool but the test binary itself.
func HoldPortIfAsked() {
	addr := os.Getenv(envListen)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "port holder: %v\n", err)
		os.Exit(2)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	for {
		conn, err := ln.Accept()
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		conn.Close()
	}
}

// holdPort starts the port holder on addr inside the sandbox.
func (s *Session) holdPort(addr string) (*Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("port holder: %w", err)
	}
	s.Step("start a process that listens on %s (the test binary with %s=%s)", addr, envListen, addr)
	cmd := s.sb.Command(s.Dir, exe)
	cmd.Env = append(os.Environ(), envListen+"="+addr)
	p, err := startProc("port-holder", cmd, s.Path("port-holder.log"))
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	if _, err := p.WaitLog(30*time.Second, "listening on"); err != nil {
		return nil, err
	}
	return p, nil
}
