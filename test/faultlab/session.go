// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Fixed addresses inside a recipe's sandbox (its own network namespace,
// so they never collide with anything on the machine).
const (
	brokerAddr     = "127.0.0.1:9092"
	controllerAddr = "127.0.0.1:9093"
	zkAddr         = "127.0.0.1:2181"
	// clusterID and otherClusterID are fixed KRaft cluster ids (base64 of 16 bytes).
	clusterID      = "ZmF1bHRsYWItY2x1c3Rlcg"
	otherClusterID = "b3RoZXItY2x1c3Rlci1pZA"
	// nobody is the uid and gid a recipe runs Kafka as when permissions must apply.
	nobody = 65534
)

// Props is a Java properties file built in order.
type Props struct {
	keys []string
	vals map[string]string
}

// NewProps is a Props with key=value pairs, in order.
func NewProps(kv ...string) *Props {
	p := &Props{vals: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Set(kv[i], kv[i+1])
	}
	return p
}

// Set sets key to value (keeping the key's place when it is there).
func (p *Props) Set(key, value string) *Props {
	if _, ok := p.vals[key]; !ok {
		p.keys = append(p.keys, key)
	}
	p.vals[key] = value
	return p
}

// Del removes key.
func (p *Props) Del(key string) *Props {
	if _, ok := p.vals[key]; !ok {
		return p
	}
	delete(p.vals, key)
	for i, k := range p.keys {
		if k == key {
			p.keys = append(p.keys[:i], p.keys[i+1:]...)
			break
		}
	}
	return p
}

// Get is the value of key ("" when unset).
func (p *Props) Get(key string) string { return p.vals[key] }

// String is the file's text.
func (p *Props) String() string {
	var b strings.Builder
	for _, k := range p.keys {
		fmt.Fprintf(&b, "%s=%s\n", k, p.vals[k])
	}
	return b.String()
}

// Session is one run of one recipe on one Kafka release: a work directory,
// a sandbox, the processes it started and the steps it took, in words a
// person can repeat.
type Session struct {
	Kafka Install
	// Dir is the recipe's work directory (log dirs, configs, process outputs).
	Dir string

	sb          *Sandbox
	steps       []string
	procs       []*Proc
	seeds       *seedCache
	openInstall func(Install) (Install, error)
}

// Steps are the steps taken so far.
func (s *Session) Steps() []string { return append([]string(nil), s.steps...) }

// Step records a step.
func (s *Session) Step(format string, args ...any) {
	s.steps = append(s.steps, fmt.Sprintf(format, args...))
}

// Path is name inside the work directory.
func (s *Session) Path(name string) string { return filepath.Join(s.Dir, name) }

// WriteFile writes a file in the work directory (name relative to it) and
// records its content.
func (s *Session) WriteFile(name, content string) (string, error) {
	path := s.Path(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	s.Step("write %s:\n%s", path, strings.TrimRight(content, "\n"))
	return path, nil
}

// Shell runs a shell command inside the sandbox (as root), records it and
// fails when it does.
func (s *Session) Shell(script string) error {
	s.Step("sh -c %q", script)
	out, err := s.sb.Command(s.Dir, "sh", "-c", script).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sh -c %q: %w: %s", script, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// JVM says how a Kafka main class is run.
type JVM struct {
	// Heap is KAFKA_HEAP_OPTS (default -Xmx192m).
	Heap string
	// Opts are added to KAFKA_OPTS (after -XX:-UsePerfData, which keeps
	// the JVM from leaving hsperfdata files in /tmp).
	Opts string
	// AsNobody runs the JVM as uid/gid 65534 (setpriv), so file
	// permissions apply to it.
	AsNobody bool
	// NoFile, when set, is the open-files limit (prlimit --nofile).
	NoFile int
	// AddressSpace, when set, is the address-space limit in bytes (prlimit --as).
	AddressSpace int64
}

// argv is the command line that runs class with args under jvm.
func (s *Session) argv(jvm JVM, class string, args ...string) ([]string, []string, string, error) {
	heap := jvm.Heap
	if heap == "" {
		heap = "-Xmx192m"
	}
	opts := strings.TrimSpace("-XX:-UsePerfData " + jvm.Opts)
	var argv []string
	var words []string
	if jvm.NoFile > 0 || jvm.AddressSpace > 0 {
		argv = append(argv, "prlimit")
		if jvm.NoFile > 0 {
			argv = append(argv, fmt.Sprintf("--nofile=%d:%d", jvm.NoFile, jvm.NoFile))
		}
		if jvm.AddressSpace > 0 {
			argv = append(argv, fmt.Sprintf("--as=%d:%d", jvm.AddressSpace, jvm.AddressSpace))
		}
		argv = append(argv, "--")
	}
	if jvm.AsNobody {
		argv = append(argv, "setpriv", fmt.Sprintf("--reuid=%d", nobody), fmt.Sprintf("--regid=%d", nobody), "--clear-groups", "--")
	}
	script := s.Kafka.RunScript()
	if jvm.AsNobody {
		open, err := s.openInstall(s.Kafka)
		if err != nil {
			return nil, nil, "", err
		}
		script = open.RunScript()
		s.Step("a copy of $KAFKA that every user can read: %s (cp -al, directories chmod 755)", open.Dir)
	}
	argv = append(argv, script, class)
	argv = append(argv, args...)
	words = append(words, "KAFKA_HEAP_OPTS="+heap, "KAFKA_OPTS="+shellQuote(opts))
	words = append(words, argv...)
	env := append(os.Environ(), "KAFKA_HEAP_OPTS="+heap, "KAFKA_OPTS="+opts)
	return argv, env, strings.Join(words, " "), nil
}

// shellQuote quotes s for a step when it has spaces.
func shellQuote(s string) string {
	if strings.ContainsAny(s, " \t'\"") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// Tool runs a Kafka main class to completion (a tool such as the storage
// formatter) and fails unless it exits 0. Its output goes to name.out.
func (s *Session) Tool(name string, class string, args ...string) error {
	return s.ToolAs(name, JVM{}, class, args...)
}

// ToolAs is Tool with jvm's settings.
func (s *Session) ToolAs(name string, jvm JVM, class string, args ...string) error {
	argv, env, words, err := s.argv(jvm, class, args...)
	if err != nil {
		return err
	}
	s.Step("%s: %s", name, words)
	cmd := s.sb.Command(s.Dir, argv...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(s.Path(name+".out"), out, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, lastLines(string(out), 8))
	}
	return nil
}

// Start starts a Kafka main class in the background; its output goes to
// name.log. The session stops it by PID at the end.
func (s *Session) Start(name string, jvm JVM, class string, args ...string) (*Proc, error) {
	argv, env, words, err := s.argv(jvm, class, args...)
	if err != nil {
		return nil, err
	}
	s.Step("start %s: %s", name, words)
	cmd := s.sb.Command(s.Dir, argv...)
	cmd.Env = env
	p, err := startProc(name, cmd, s.Path(name+".log"))
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
}

// StartKafka starts kafka.Kafka with the properties written to name.properties.
func (s *Session) StartKafka(name string, jvm JVM, props *Props) (*Proc, error) {
	path, err := s.WriteFile(name+".properties", props.String())
	if err != nil {
		return nil, err
	}
	return s.Start(name, jvm, "kafka.Kafka", path)
}

// Format formats the log dirs of props with StorageTool (written to
// name.properties first), for cluster id.
func (s *Session) Format(name string, props *Props, id string, extra ...string) error {
	path, err := s.WriteFile(name+".properties", props.String())
	if err != nil {
		return err
	}
	args := append([]string{"format", "-t", id, "-c", path}, extra...)
	return s.Tool("format-"+name, "kafka.tools.StorageTool", args...)
}

// Started waits until a Kafka node says it started (or joined as a
// controller), or fails.
func (s *Session) Started(p *Proc, d time.Duration) error {
	_, err := p.WaitLog(d, "Kafka Server started", "started (kafka.server.KafkaServer)",
		"Transition from STARTING to STARTED", "ControllerServer id=1] Waiting for the controller metadata publishers to be installed",
		"Kafka Server started (kafka.server.KafkaRaftServer)")
	if err != nil {
		return fmt.Errorf("waiting for %s to start: %w: %s", p.Name, err, tailOf(p.LogPath, 6))
	}
	s.Step("wait until %s logs that it started", p.Name)
	return nil
}

// Close stops every process the session started (SIGTERM, then SIGKILL),
// newest first, and the sandbox.
func (s *Session) Close() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].Stop(10 * time.Second)
	}
	s.sb.Close()
}

// lastLines is the last n lines of text.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tailOf is the last n lines of a file (for error messages).
func tailOf(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return lastLines(string(b), n)
}

// copyTree copies src to dst with cp -a (owners, modes and sparse files kept).
func copyTree(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", src, dst, err, out)
	}
	return nil
}
