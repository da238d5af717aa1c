// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command broker-standin behaves like a Kafka KRaft node on its volume, as far
// as kafkabot can tell, for the real-node tests (test/realnode). It is the
// entrypoint of the image kafkabot.local/kafka-standin, which also carries a
// busybox shell and applets like Bitnami's Kafka image, so the repair's debug
// pod can run from the broker's own image.
//
// Configuration comes from the environment, with the Bitnami names:
// KAFKA_CFG_PROCESS_ROLES (broker or controller), KAFKA_CFG_NODE_ID and
// KAFKA_CFG_LOG_DIRS (comma list).
//
// On start, a broker takes <log dir>/.lock in each log dir with an fcntl
// write lock (F_SETLK), as Kafka does (a held lock prints a real lock-held
// crash log and exits 1), prints a real startup sequence and serves the
// readiness port (9092) until SIGTERM. Controllers print a real controller
// startup and serve the port. It never crashes on a fault: every repair
// scenario runs on real Apache Kafka (test/realnode/cmd/mkkafkaimage); the
// stand-in is for the tests that need a broker pod but no Kafka behind it
// (`bot doctor`'s image check, the hostile shapes' dry runs).
package main

import (
	"embed"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

//go:embed logs/*.log
var logs embed.FS

func main() {
	os.Exit(run())
}

func run() int {
	roles := os.Getenv("KAFKA_CFG_PROCESS_ROLES")
	dirs := logDirs()
	if roles == "controller" {
		printLog("19-kraft-controller-second-of-three-registration-persisted-systemd.log")
		return serve()
	}
	if len(dirs) == 0 {
		fmt.Fprintln(os.Stderr, "ERROR no log dirs: set KAFKA_CFG_LOG_DIRS")
		return 1
	}
	var locks []*os.File
	for _, dir := range dirs {
		lock, err := takeLock(dir)
		if err != nil {
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
				printLog("16-lock-held-bitnami-k8s-broker.log")
			} else {
				fmt.Fprintf(os.Stderr, "ERROR Failed to create or validate data directory %s: %v\n", dir, err)
			}
			return 1
		}
		locks = append(locks, lock)
	}
	printLog("08-kraft-broker-only-node-startup-autocreate-no-hw-checkpoint.log")
	defer func() {
		for _, l := range locks {
			l.Close()
		}
	}()
	return serve()
}

// logDirs is KAFKA_CFG_LOG_DIRS.
func logDirs() []string {
	var out []string
	for _, d := range strings.Split(os.Getenv("KAFKA_CFG_LOG_DIRS"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// takeLock locks <dir>/.lock as Kafka does (FileChannel.tryLock: an fcntl
// write lock on the whole file, not blocking).
func takeLock(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return f, nil
}

func printLog(name string) {
	b, err := logs.ReadFile("logs/" + name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stand-in: %v\n", err)
		return
	}
	os.Stdout.Write(b)
}

// serve listens on the readiness port until SIGTERM or SIGINT.
func serve() int {
	ln, err := net.Listen("tcp", ":9092")
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR binding 9092: %v\n", err)
		return 1
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ln.Close()
	fmt.Println("[KafkaRaftServer nodeId=" + os.Getenv("KAFKA_CFG_NODE_ID") + "] shut down completed (kafka.server.KafkaRaftServer)")
	return 0
}
