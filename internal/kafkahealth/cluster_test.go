// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// envSkipKafka lets a developer without Java skip the real-Kafka tests
// (outside CI only; under CI=true they fail).
const envSkipKafka = "KAFKABOT_SKIP_KAFKA"

// node is one Kafka JVM of a test cluster.
type node struct {
	id         int32
	controller bool
	addr       string // host:port of its only listener
	dir        string
	props      string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// logPath is where the node's console log goes (appended on each start).
func (n *node) logPath() string { return filepath.Join(n.dir, "console.log") }

// cluster is a KRaft cluster of plain JVMs on loopback.
type cluster struct {
	t           *testing.T
	version     string
	home        string // the fetched Kafka's directory (run.sh)
	controllers []*node
	brokers     []*node
}

// kafkaHome fetches a pinned Kafka version with hack/fetch-kafka.sh and
// returns its directory. A missing Kafka fails the test (skips only with
// KAFKABOT_SKIP_KAFKA=1 outside CI).
func kafkaHome(t *testing.T, version string) string {
	t.Helper()
	// Tried three times: under load the script's pin lookup
	// (grep | awk on the file) can lose a race with SIGPIPE and exit 1.
	var out []byte
	var err error
	for range 3 {
		var stderr strings.Builder
		cmd := exec.Command("bash", "../../hack/fetch-kafka.sh", version)
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err == nil {
			break
		}
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		msg := fmt.Sprintf("real Kafka %s is needed (bash hack/fetch-kafka.sh %s): %v", version, version, err)
		if os.Getenv("CI") != "true" && os.Getenv(envSkipKafka) == "1" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("fetch-kafka.sh printed %q, want \"<version> <dir>\"", out)
	}
	return f[1]
}

// freeAddr picks a free TCP port on ip.
func freeAddr(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("no free port on %s: %v", ip, err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startCluster formats and starts controllers 1..nc and brokers
// 100+1..100+nb, each a JVM on its own 127.x address, and waits until every
// broker is registered and unfenced. They are stopped by PID when the test
// ends, also on failure.
func startCluster(t *testing.T, version string, nc, nb int) *cluster {
	t.Helper()
	c := &cluster{t: t, version: version, home: kafkaHome(t, version)}
	base := t.TempDir()
	// A loopback /24 of its own, so that parallel test binaries (other
	// Kafka clusters) do not meet.
	net3 := 1 + os.Getpid()%250
	var voters []string
	for i := 1; i <= nc; i++ {
		ip := fmt.Sprintf("127.77.%d.%d", net3, i)
		n := &node{id: int32(i), controller: true, addr: freeAddr(t, ip), dir: filepath.Join(base, fmt.Sprintf("c%d", i))}
		c.controllers = append(c.controllers, n)
		voters = append(voters, fmt.Sprintf("%d@%s", i, n.addr))
	}
	for i := 1; i <= nb; i++ {
		ip := fmt.Sprintf("127.77.%d.%d", net3, 100+i)
		c.brokers = append(c.brokers, &node{id: int32(100 + i), addr: freeAddr(t, ip), dir: filepath.Join(base, fmt.Sprintf("b%d", i))})
	}
	clusterID := newClusterID(t)
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes()))
	for i, n := range c.nodes() {
		c.writeProps(n, strings.Join(voters, ","), nb)
		wg.Go(func() { errs[i] = c.run("kafka.tools.StorageTool", "format", "-t", clusterID, "-c", n.props) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("formatting node %d: %v", c.nodes()[i].id, err)
		}
	}
	t.Cleanup(c.stopAll)
	for _, n := range c.nodes() {
		c.start(n)
	}
	return c
}

func (c *cluster) nodes() []*node { return append(append([]*node{}, c.controllers...), c.brokers...) }

func newClusterID(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func (c *cluster) writeProps(n *node, voters string, nb int) {
	lines := []string{
		fmt.Sprintf("node.id=%d", n.id),
		"controller.quorum.voters=" + voters,
		"controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs=" + filepath.Join(n.dir, "data"),
		"num.network.threads=1",
		"num.io.threads=2",
		"num.recovery.threads.per.data.dir=1",
		"broker.session.timeout.ms=6000",
		"broker.heartbeat.interval.ms=1000",
		"group.initial.rebalance.delay.ms=0",
		fmt.Sprintf("offsets.topic.replication.factor=%d", min(nb, 3)),
		fmt.Sprintf("transaction.state.log.replication.factor=%d", min(nb, 3)),
		"transaction.state.log.min.isr=1",
		"replica.lag.time.max.ms=6000",
		// The log cleaner's default 128 MiB dedupe buffer does not fit -Xmx192m.
		"log.cleaner.dedupe.buffer.size=8388608",
	}
	if n.controller {
		lines = append(lines, "process.roles=controller", "listeners=CONTROLLER://"+n.addr)
	} else {
		lines = append(lines, "process.roles=broker", "listeners=PLAINTEXT://"+n.addr,
			"advertised.listeners=PLAINTEXT://"+n.addr, "inter.broker.listener.name=PLAINTEXT")
	}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	n.props = filepath.Join(n.dir, "server.properties")
	if err := os.WriteFile(n.props, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func jvmEnv() []string {
	return append(os.Environ(), "KAFKA_HEAP_OPTS=-Xmx192m -Xms32m", "KAFKA_OPTS=-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ActiveProcessorCount=1")
}

// run runs a Kafka main class to completion.
func (c *cluster) run(args ...string) error {
	cmd := exec.Command(filepath.Join(c.home, "run.sh"), args...)
	cmd.Env = jvmEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", args[0], err, out)
	}
	return nil
}

// start starts a node's JVM in its own process group; the JVM dies with
// the test binary (Pdeathsig) when Cleanup cannot run.
func (c *cluster) start(n *node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(filepath.Join(c.home, "run.sh"), "kafka.Kafka", n.props)
	cmd.Env = jvmEnv()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting node %d: %v", n.id, err)
	}
	n.cmd = cmd
	go cmd.Wait() //nolint:errcheck // reaped; the exit is seen by stop
}

// stop kills a node's JVM (SIGKILL: a crash, not a controlled shutdown)
// and waits until its process is gone.
func (c *cluster) stop(n *node) {
	n.mu.Lock()
	cmd := n.cmd
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for i := 0; i < 100; i++ {
		if syscall.Kill(cmd.Process.Pid, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) stopAll() {
	for _, n := range c.nodes() {
		c.stop(n)
	}
	if c.t.Failed() {
		for _, n := range c.nodes() {
			b, _ := os.ReadFile(n.logPath())
			out := string(b)
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			c.t.Logf("node %d log tail:\n%s", n.id, out)
		}
	}
}

func (c *cluster) bootstrap() []string {
	var out []string
	for _, b := range c.brokers {
		out = append(out, b.addr)
	}
	return out
}

// client dials the cluster's brokers with a short request timeout.
func (c *cluster) client(t *testing.T) *Client {
	t.Helper()
	cl, err := Dial(Settings{Bootstrap: c.bootstrap(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// waitFor reads the view until ok accepts it or the bound passes; it
// returns the last view.
func waitFor(t *testing.T, cl *Client, bound time.Duration, what string, ok func(*View) bool) *View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var v *View
	for {
		v = cl.Read(ctx)
		if ok(v) {
			return v
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %v; last view: %s", what, bound, describe(v))
			return v
		case <-time.After(time.Second):
		}
	}
}

// describe renders a view for failure messages and the test log.
func describe(v *View) string {
	var b strings.Builder
	if q := v.Quorum; q != nil {
		fmt.Fprintf(&b, "quorum leader %d epoch %d hw %d voters %+v observers %+v; ", q.LeaderID, q.LeaderEpoch, q.HighWatermark, q.Voters, q.Observers)
	}
	fmt.Fprintf(&b, "brokers %+v (fenced listed %t); %d partitions; minISR %v; fetch timeout %v; problems %q",
		v.Brokers, v.FencedListed, len(v.Partitions), v.MinISR, v.FetchTimeout, v.Problems)
	return b.String()
}
