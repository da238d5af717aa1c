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
// KAFKA_CFG_LOG_DIRS (comma list; Strimzi's layout is
// /var/lib/kafka/data-0/kafka-log<node id>, used when unset and
// STRIMZI_KRAFT_ENABLED is set).
//
// On start, for a broker, in each log dir, as Kafka does:
//  1. it takes <log dir>/.lock with an fcntl write lock (F_SETLK); a held
//     lock prints a real lock-held crash log and exits 1;
//  2. when __cluster_metadata-0 carries the divergence the tests plant (the
//     file DivergenceMarker inside it) it prints the seed incident's real
//     crash log (UnexpectedAppendOffsetException) and exits 1, so the pod
//     crash-loops with the kubelet's real back-off. When the first log dir
//     also holds StayUpMarker (a number of seconds), that start first takes
//     the marker (renames it to StayUpMarker+".taken", so only one start
//     stays up), serves the readiness port for that long, as a broker whose
//     back-off expired and that runs until it hits the divergence again,
//     watches that the metadata log stays in place while it runs, writes
//     what it saw to StayUpMarker+".report" and only then crashes (and
//     with JournalFile there, every run's start and end are appended to it);
//  3. it reads meta.properties; a node.id other than KAFKA_CFG_NODE_ID (or,
//     for Strimzi, the pod name's ordinal) prints a real node-id-mismatch
//     crash log and exits 1;
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
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DivergenceMarker is the file whose presence in __cluster_metadata-0 makes
// the stand-in fail like the seed incident.
const DivergenceMarker = "kafkabot-test-divergence"

// StayUpMarker, in the first log dir, makes the next start of a diverged
// broker run (and be Ready) for the number of seconds it holds before it
// crashes: the broker restarting by itself in the repair window.
const StayUpMarker = "kafkabot-test-stay-up"

//go:embed logs/*.log
var logs embed.FS

// JournalFile, when it exists in the first log dir, gets a line
// "start <time>" when a broker starts (its locks taken) and "end <time>"
// when it exits: the times this node ran, for a test to compare with the
// time of the repair's rename.
const JournalFile = "kafkabot-test-journal"

// journal is JournalFile's path once a broker run recorded its start.
var journal string

func main() {
	code := run()
	record("end")
	os.Exit(code)
}

// record appends "<what> <now>" to the journal, if this run keeps one.
func record(what string) {
	if journal == "" {
		return
	}
	f, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stand-in: journal: %v\n", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", what, time.Now().UTC().Format(time.RFC3339Nano))
}

func run() int {
	roles := os.Getenv("KAFKA_CFG_PROCESS_ROLES")
	nodeID := os.Getenv("KAFKA_CFG_NODE_ID")
	if nodeID == "" && os.Getenv("STRIMZI_KRAFT_ENABLED") != "" {
		// Strimzi sets node.id to the pod name's ordinal suffix.
		host, _ := os.Hostname()
		nodeID = host[strings.LastIndex(host, "-")+1:]
	}
	dirs := logDirs(nodeID)
	if roles == "controller" {
		printLog("19-kraft-controller-second-of-three-registration-persisted-systemd.log")
		return serve()
	}
	if len(dirs) == 0 {
		fmt.Fprintln(os.Stderr, "ERROR no log dirs: set KAFKA_CFG_LOG_DIRS")
		return 1
	}
	if j := filepath.Join(dirs[0], JournalFile); fileExists(j) {
		journal = j
		record("start")
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
			if err := stayUp(dirs[0], meta); err != nil {
				fmt.Fprintf(os.Stderr, "stand-in: %v\n", err)
			}
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

// stayUp runs the StayUpMarker control: without the marker in dir it
// returns at once; with it, it takes the marker, serves the readiness port
// for the seconds it holds while checking every 50 ms that the diverged
// metadata log meta is still in place (the lock stays held), and writes a
// report: when it ran, and whether the log was there throughout.
func stayUp(dir, meta string) error {
	marker := filepath.Join(dir, StayUpMarker)
	b, err := os.ReadFile(marker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	secs, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || secs < 1 || secs > 600 {
		return fmt.Errorf("%s must hold 1 to 600 seconds, holds %q", marker, b)
	}
	if err := os.Rename(marker, marker+".taken"); err != nil {
		return fmt.Errorf("taking %s: %w", marker, err)
	}
	ln, err := net.Listen("tcp", ":9092")
	if err != nil {
		return fmt.Errorf("binding 9092: %w", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	start := time.Now()
	fmt.Printf("stand-in: running for %ds before the divergence stops this broker (%s); the metadata log must stay in place meanwhile\n", secs, StayUpMarker)
	present := true
	var missingAt time.Time
	for time.Since(start) < time.Duration(secs)*time.Second {
		if _, err := os.Stat(filepath.Join(meta, DivergenceMarker)); err != nil && present {
			present, missingAt = false, time.Now()
			fmt.Printf("stand-in: THE METADATA LOG WAS MOVED WHILE THIS BROKER RAN (%v)\n", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	end := time.Now()
	report := fmt.Sprintf("started=%s\nended=%s\npresent_throughout=%t\n", start.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano), present)
	if !present {
		report += "missing_at=" + missingAt.UTC().Format(time.RFC3339Nano) + "\n"
	}
	fmt.Print("stand-in: stayed up; " + strings.ReplaceAll(strings.TrimSpace(report), "\n", " ") + "\n")
	return os.WriteFile(marker+".report", []byte(report), 0o644)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// logDirs is KAFKA_CFG_LOG_DIRS, or Strimzi's default layout.
func logDirs(nodeID string) []string {
	var out []string
	for _, d := range strings.Split(os.Getenv("KAFKA_CFG_LOG_DIRS"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	if len(out) == 0 && os.Getenv("STRIMZI_KRAFT_ENABLED") != "" {
		out = append(out, "/var/lib/kafka/data-0/kafka-log"+nodeID)
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
