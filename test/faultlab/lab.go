// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Recipe injects one fault into a real Kafka process and returns the
// process whose output is the recording.
type Recipe struct {
	// Name is the recipe's file name (lower case, dashes).
	Name string
	// Class is the failure class the injected fault belongs to (an id of
	// rules.yaml's classes), decided by the fault, not by the engine.
	Class string
	// Role is the recorded node's role, as the pod label would give it.
	Role diagnose.Role
	// Fault says in one sentence what is injected.
	Fault string
	// Expect is a regular expression that some line of the recording
	// must match: Kafka's (or the JVM's) own message for the fault, so a
	// recipe that failed to inject it is caught.
	Expect string
	// Live puts the recipe in the CI subset (run live on NewestVersion).
	Live bool
	// Skip, when set, says why the recipe does not apply to a release
	// ("" when it does).
	Skip func(Install) string
	// RunsOn, when set, says why a release's Kafka does not die of the
	// fault ("" when it does): Kafka's code only logs it and carries on.
	// Such a recording is not a crash; the lab stops the node, and the
	// expectation is that the diagnosis raises no high or critical
	// finding on it (TestRecordedLogsClassified), not Class.
	RunsOn func(Install) string
	// Run sets up, injects and runs; it returns the recorded process,
	// ended (by itself, or killed by the lab after a bounded wait).
	Run func(*Session) (*Proc, error)
}

// runsOn is the reason r's fault does not end Kafka of version v ("" when
// it does).
func (r Recipe) runsOn(v string) string {
	if r.RunsOn == nil {
		return ""
	}
	return r.RunsOn(Install{Version: v})
}

// Outcome is what a recipe's run produced.
type Outcome struct {
	Steps []string
	// Log is everything the recorded process printed (stdout and stderr).
	Log []byte
	// ExitCode is the process's exit status (128+signal when killed).
	ExitCode int
	// StoppedByLab is true when the process was still running at the end
	// of the recipe's wait and the lab killed it.
	StoppedByLab bool
	// ExpectLine is the first line that matched the recipe's Expect.
	ExpectLine string
}

// Lab runs recipes, each in a fresh sandbox and work directory under Root.
type Lab struct {
	Root  string
	seeds *seedCache
	runs  int
	// open holds, per version, a copy of the install that every user can
	// read (hack/fetch-kafka.sh's directories are private to root).
	open map[string]Install
}

// NewLab is a lab working under root (which it creates).
func NewLab(root string) (*Lab, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("lab root: %w", err)
	}
	// Kafka runs as nobody in some recipes: every directory above the
	// work directories must be traversable.
	for dir := root; dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		if strings.HasPrefix(dir, os.TempDir()+"/") {
			if err := os.Chmod(dir, 0o755); err != nil {
				return nil, fmt.Errorf("lab root: %w", err)
			}
		}
	}
	return &Lab{Root: root, seeds: &seedCache{root: root, dirs: map[string]string{}, steps: map[string][]string{}}, open: map[string]Install{}}, nil
}

// Run runs recipe r on the install and checks that the fault shows.
func (l *Lab) Run(r Recipe, in Install) (*Outcome, error) {
	// The work directory's name is a neutral counter: a recipe's name in
	// the paths Kafka prints would put the fault's name into the log.
	l.runs++
	dir := filepath.Join(l.Root, in.Version, fmt.Sprintf("node%02d", l.runs))
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	sb, err := NewSandbox()
	if err != nil {
		return nil, err
	}
	s := &Session{Kafka: in, Dir: dir, sb: sb, seeds: l.seeds, openInstall: l.openInstall}
	defer s.Close()
	s.Step("KAFKA=%s (the directory `bash hack/fetch-kafka.sh %s` prints); LAB=%s (a fresh work directory)", in.Dir, in.Version, dir)
	s.Step("new network and mount namespace (unshare --net --mount, lo up); every command below runs in it (nsenter)")
	p, err := r.Run(s)
	steps := s.Steps()
	for i := 1; i < len(steps); i++ {
		steps[i] = strings.ReplaceAll(strings.ReplaceAll(steps[i], in.Dir, "$KAFKA"), dir, "$LAB")
	}
	if err != nil {
		return &Outcome{Steps: steps}, fmt.Errorf("%s on %s: %w", r.Name, in.Version, err)
	}
	if !p.Exited() {
		return &Outcome{Steps: steps}, fmt.Errorf("%s on %s: the recipe returned a running process", r.Name, in.Version)
	}
	log, err := os.ReadFile(p.LogPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	out := &Outcome{Steps: steps, Log: log, ExitCode: p.ExitCode(), StoppedByLab: p.StoppedByLab()}
	re := regexp.MustCompile(r.Expect)
	for _, line := range strings.Split(string(log), "\n") {
		if re.MatchString(line) {
			out.ExpectLine = line
			break
		}
	}
	if out.ExpectLine == "" {
		return out, fmt.Errorf("%s on %s: no line matches %q (the fault did not show); last lines:\n%s",
			r.Name, in.Version, r.Expect, lastLines(string(log), 15))
	}
	return out, nil
}

// ended waits up to d for p to end by itself; if it still runs, the lab
// kills it (SIGKILL, so its output ends where Kafka left it) and says so.
func (s *Session) ended(p *Proc, d time.Duration) *Proc {
	if p.WaitExit(d) {
		s.Step("%s exits by itself (code %d)", p.Name, p.ExitCode())
		return p
	}
	p.Kill()
	s.Step("%s still runs after %s: the lab kills it (SIGKILL)", p.Name, d)
	return p
}

// endedAfter waits up to d until p prints one of texts (or ends), then
// kills it if it still runs after settle: for faults Kafka logs and
// survives, or hangs on.
func (s *Session) endedAfter(p *Proc, d time.Duration, settle time.Duration, texts ...string) (*Proc, error) {
	line, err := p.WaitLog(d, texts...)
	switch {
	case err == nil:
		s.Step("wait until %s logs %q", p.Name, shorten(line, 160))
	case !p.Exited():
		// Neither the text nor an exit: the node hangs; the log shows how.
		s.Step("%s logs none of %q within %s", p.Name, texts, d)
	}
	return s.ended(p, settle), nil
}

// shorten cuts s to n bytes for a step.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// openInstall is a copy of the install (hard links where the filesystem
// allows) whose directories every user may enter, for recipes that run
// Kafka as a non-root user.
func (l *Lab) openInstall(in Install) (Install, error) {
	if o, ok := l.open[in.Version]; ok {
		return o, nil
	}
	dst := filepath.Join(l.Root, "kafka-"+in.Version)
	if err := exec.Command("cp", "-al", in.Dir, dst).Run(); err != nil {
		_ = os.RemoveAll(dst)
		if out, err := exec.Command("cp", "-a", in.Dir, dst).CombinedOutput(); err != nil {
			return Install{}, fmt.Errorf("copying kafka %s: %w: %s", in.Version, err, out)
		}
	}
	if out, err := exec.Command("find", dst, "-type", "d", "-exec", "chmod", "755", "{}", "+").CombinedOutput(); err != nil {
		return Install{}, fmt.Errorf("opening kafka %s: %w: %s", in.Version, err, out)
	}
	o := Install{Version: in.Version, Dir: dst}
	l.open[in.Version] = o
	return o, nil
}
