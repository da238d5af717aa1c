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
// On start, for a broker, in each log dir, as Kafka does:
//  1. it takes <log dir>/.lock with an fcntl write lock (F_SETLK); a held
//     lock prints a real lock-held crash log and exits 1;
//  2. when __cluster_metadata-0 carries the divergence the tests plant (the
//     file DivergenceMarker inside it) it prints the seed incident's real
//     crash log (UnexpectedAppendOffsetException) and exits 1, so the pod
//     crash-loops with the kubelet's real back-off;
//  3. it reads meta.properties; a node.id other than KAFKA_CFG_NODE_ID
//     prints a real node-id-mismatch crash log and exits 1;
//  4. otherwise it recreates __cluster_metadata-0 when it is missing (a real
//     broker fetches the log from the controllers), prints a real startup
//     sequence and serves the readiness port (9092) until SIGTERM.
//
// Controllers print a real controller startup and serve the port.
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

// DivergenceMarker is the file whose presence in __cluster_metadata-0 makes
// the stand-in fail like the seed incident.
const DivergenceMarker = "kafkabot-test-divergence"

//go:embed logs/*.log
var logs embed.FS

func main() {
	os.Exit(run())
}

func run() int {
	roles := os.Getenv("KAFKA_CFG_PROCESS_ROLES")
	nodeID := os.Getenv("KAFKA_CFG_NODE_ID")
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
	// The planted divergence is reported before the node id is compared, so
	// that a test can pair it with a volume of another node (what the
	// repair's on-disk check must catch).
	for _, dir := range dirs {
		meta := filepath.Join(dir, "__cluster_metadata-0")
		if _, err := os.Stat(filepath.Join(meta, DivergenceMarker)); err == nil {
			printLog("34-kraft-metadata-log-unexpected-append-offset.log")
			return 1
		}
	}
	for _, dir := range dirs {
		stored, err := storedNodeID(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ERROR Exiting Kafka due to fatal exception: no readable meta.properties in %s: %v\n", dir, err)
			return 1
		}
		if stored != nodeID {
			printLog("30-kraft-node-id-mismatch-sentry-selfhosted.log")
			return 1
		}
	}
	// A broker whose metadata log was moved away rebuilds it from the
	// controllers; the stand-in recreates an empty one in the first log dir.
	meta := filepath.Join(dirs[0], "__cluster_metadata-0")
	if _, err := os.Stat(meta); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(meta, 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "ERROR creating %s: %v\n", meta, err)
			return 1
		}
		if err := os.WriteFile(filepath.Join(meta, "00000000000000000000.log"), nil, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "ERROR creating the metadata log: %v\n", err)
			return 1
		}
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

// storedNodeID reads node.id from <dir>/meta.properties.
func storedNodeID(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.properties"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "node.id="); ok {
			return v, nil
		}
	}
	return "", errors.New("meta.properties has no node.id")
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
