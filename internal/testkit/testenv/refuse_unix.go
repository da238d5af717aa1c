// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build unix

package testenv

import (
	"fmt"
	"syscall"
)

// reservePort binds a TCP socket to a free loopback port and never listens
// on it: the kernel refuses connections to the port (RST), and no other
// socket can bind it, until the returned close runs.
func reservePort() (int, func() error, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return 0, nil, fmt.Errorf("bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return 0, nil, fmt.Errorf("getsockname: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		return 0, nil, fmt.Errorf("getsockname: unexpected address %T", sa)
	}
	return in4.Port, func() error { return syscall.Close(fd) }, nil
}
