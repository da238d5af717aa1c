// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build !unix

package testenv

import "net"

// reservePort takes a free loopback port by listening on it and closing
// the listener: connections are refused until something else takes the
// port, which is unlikely on loopback during a test but not impossible.
func reservePort() (int, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		return 0, nil, err
	}
	return port, func() error { return nil }, nil
}
