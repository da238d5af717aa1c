// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestContainment6_JavaProbeSeesARealKafkasLock (issue 27 item 6): in an
// image without python, the script asks the JVM every Kafka image has
// whether <log dir>/.lock is held, right before the rename. Here a real
// Kafka 4.4.0 broker (with its controller, both on loopback) runs on the
// log dir and the script runs under busybox sh with only busybox applets
// and java on PATH: it refuses, saying the java probe found the lock held,
// and moves nothing. Once the broker has stopped (its .lock stays behind,
// unlocked) the same script moves, the probe having found the lock free.
// The controller writes no periodic no-op records, so the broker's metadata
// log is idle: before the fix the script, finding no python, watched that
// log for a second, saw nothing change and moved it under the running
// broker. The probe leaves nothing in /dev/shm.
func TestContainment6_JavaProbeSeesARealKafkasLock(t *testing.T) {
	r := busyboxRunner(t)
	kafkaDir := fetchKafka(t, "4.4.0")
	m := newMountRoot(t)
	mkdir(t, m, "0/lost+found")
	writeGo(t, m, testGoFresh)
	logDir := filepath.Join(m, "0/data")
	ctrlDir := filepath.Join(t.TempDir(), "controller")
	ctrlPort, brokerPort := freePort(t), freePort(t)
	common := fmt.Sprintf("controller.quorum.voters=1@127.0.0.1:%d\ncontroller.listener.names=CONTROLLER\n"+
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n", ctrlPort)
	conf := t.TempDir()
	ctrlProps := filepath.Join(conf, "controller.properties")
	brokerProps := filepath.Join(conf, "broker.properties")
	// No periodic no-op records: the broker's metadata log stays idle, the
	// case that watching it for a second cannot catch.
	writeProps(t, ctrlProps, common+fmt.Sprintf("process.roles=controller\nnode.id=1\nmetadata.max.idle.interval.ms=0\nlisteners=CONTROLLER://127.0.0.1:%d\nlog.dirs=%s\n", ctrlPort, ctrlDir))
	writeProps(t, brokerProps, common+fmt.Sprintf("process.roles=broker\nnode.id=100\nlisteners=PLAINTEXT://127.0.0.1:%d\nlog.dirs=%s\n", brokerPort, logDir))
	const clusterID = "kJg2V9xTRAeZ3vjY0Qh5Mw"
	for _, props := range []string{ctrlProps, brokerProps} {
		cmd := exec.Command(filepath.Join(kafkaDir, "run.sh"), "kafka.tools.StorageTool", "format", "-t", clusterID, "-c", props)
		cmd.Env = append(os.Environ(), "KAFKA_HEAP_OPTS=-Xmx128m")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("formatting %s: %v\n%s", props, err, out)
		}
	}
	startKafka(t, kafkaDir, ctrlProps)
	broker := startKafka(t, kafkaDir, brokerProps)
	lock := filepath.Join(logDir, ".lock")
	waitFor(t, 120*time.Second, "the broker holds "+lock+" and has written its quorum-state", func() bool {
		_, err := os.Stat(filepath.Join(logDir, "__cluster_metadata-0/quorum-state"))
		return err == nil && fcntlLockHeld(t, lock)
	})
	tools := map[string]string{"java": "exec " + filepath.Join(kafkaDir, "java") + ` "$@"`}
	shmBefore := probeLeftovers(t)
	env := defaultEnv(m)
	runOnce := func() scriptRun {
		bin := t.TempDir()
		for name, body := range tools {
			if err := os.WriteFile(filepath.Join(bin, name), []byte(r.shebang+"\n"+body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		run := r.run(t, env, bin)
		t.Logf("script output:\n%s", run.output)
		return run
	}

	held := runOnce()
	if held.exit != 2 || held.result.Status != StatusRefused || held.result.Reason != ReasonKafkaRunning {
		t.Errorf("with Kafka running: exit %d status=%s reason=%s, want refused kafka-running", held.exit, held.result.Status, held.result.Reason)
	}
	if !strings.Contains(held.output, "holds the lock on "+lock+" (java probe)") {
		t.Errorf("the refusal does not come from the java probe")
	}
	if _, err := os.Stat(filepath.Join(logDir, "__cluster_metadata-0")); err != nil {
		t.Errorf("the metadata log was moved under a running Kafka: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m, "0", testBackup, "data/__cluster_metadata-0")); err == nil {
		t.Errorf("the backup folder holds a metadata log moved under a running Kafka")
	}

	broker.stop(t)
	if fcntlLockHeld(t, lock) {
		t.Fatalf("%s is still locked after the broker stopped", lock)
	}
	free := runOnce()
	if free.exit != 0 || free.result.Status != StatusMoved {
		t.Errorf("with Kafka stopped: exit %d status=%s reason=%s, want moved", free.exit, free.result.Status, free.result.Reason)
	}
	if strings.Contains(free.output, "java could not test") {
		t.Errorf("the java probe could not tell a free lock")
	}
	if _, err := os.Stat(filepath.Join(m, "0", testBackup, "data/__cluster_metadata-0/quorum-state")); err != nil {
		t.Errorf("the metadata log is not in the backup: %v", err)
	}
	// Other tests running the script at the same time (go test runs
	// packages in parallel) may have a probe directory of their own for a
	// moment: only one that stays is a leftover.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if left = newProbeLeftovers(t, shmBefore); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("the probe left files in /dev/shm: %q (before: %q)", left, shmBefore)
	}
}

// fetchKafka returns the directory of a real Apache Kafka (hack/fetch-kafka.sh),
// failing under CI and skipping elsewhere when it cannot be had.
func fetchKafka(t *testing.T, version string) string {
	t.Helper()
	needJava(t, "java")
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "hack/fetch-kafka.sh"), version).Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 || f[0] != version {
		msg := fmt.Sprintf("hack/fetch-kafka.sh %s: %v (%q)", version, err, out)
		if inCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return f[1]
}

func writeProps(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// kafkaProcess is a Kafka JVM a test started.
type kafkaProcess struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{}
}

// startKafka runs kafka.Kafka with props until stop or the test's end
// (also on failure), by its PID.
func startKafka(t *testing.T, kafkaDir, props string) *kafkaProcess {
	t.Helper()
	p := &kafkaProcess{log: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(kafkaDir, "run.sh"), "kafka.Kafka", props)
	p.cmd.Env = append(os.Environ(), "KAFKA_HEAP_OPTS=-Xmx192m")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting Kafka with %s: %v", props, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			out := p.log.String()
			if len(out) > 4000 {
				out = "..." + out[len(out)-4000:]
			}
			t.Logf("Kafka (%s) log, its end:\n%s", props, out)
		}
	})
	return p
}

// stop sends SIGTERM to the JVM (run.sh execs java) and waits for it to
// exit, with SIGKILL after 60s.
func (p *kafkaProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("Kafka (pid %d) did not stop within 60s of SIGTERM: killed", p.cmd.Process.Pid)
	}
}

// fcntlLockHeld asks, without taking anything (F_GETLK), whether another
// process holds a POSIX lock that a shared lock on path would conflict with.
func fcntlLockHeld(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		t.Fatalf("F_GETLK on %s: %v", path, err)
	}
	return lk.Type != syscall.F_UNLCK
}

// waitFor polls cond every 200ms until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// probeLeftovers lists what the script's lock probe would leave in /dev/shm.
func probeLeftovers(t *testing.T) string {
	t.Helper()
	names, err := filepath.Glob("/dev/shm/kafkabot-lock.*")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, ",")
}

// newProbeLeftovers lists the probe directories in /dev/shm that are not
// in before (probeLeftovers).
func newProbeLeftovers(t *testing.T, before string) []string {
	t.Helper()
	old := map[string]bool{}
	for _, n := range strings.Split(before, ",") {
		old[n] = true
	}
	names, err := filepath.Glob("/dev/shm/kafkabot-lock.*")
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, n := range names {
		if !old[n] {
			added = append(added, n)
		}
	}
	return added
}

// removeNewProbeLeftovers removes the probe directories in /dev/shm that
// are not in before (probeLeftovers), as a JVM that never started leaves
// them: the test leaves the machine as it found it.
func removeNewProbeLeftovers(t *testing.T, before string) {
	t.Helper()
	for _, n := range newProbeLeftovers(t, before) {
		if err := os.RemoveAll(n); err != nil {
			t.Errorf("removing %s: %v", n, err)
		}
	}
}
