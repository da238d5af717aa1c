// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"encoding/base64"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

var updateLockProbe = flag.Bool("update-lockprobe", false, "rewrite the lock probe's class in repair.sh from lockprobe/KafkabotLockProbe.java")

// lockProbeClassRE is the line of repair.sh that carries the probe's class.
var lockProbeClassRE = regexp.MustCompile(`(?m)^KAFKABOT_LOCK_PROBE_CLASS=(\S*)$`)

// needJava returns the path of a Java tool (java, javac), failing under CI
// and skipping elsewhere when it is missing.
func needJava(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if inCI() {
			t.Fatalf("%s is not installed (apt-get install -y openjdk-17-jdk-headless): the Java lock probe must be tested in CI", tool)
		}
		t.Skipf("%s is not installed", tool)
	}
	return p
}

// TestLockProbeClassIsBuiltFromItsSource: the class repair.sh carries
// (base64, Java 8 bytecode) is what javac --release 8 makes of
// lockprobe/KafkabotLockProbe.java, so what runs is what is reviewed.
// With -update-lockprobe it rewrites that line of repair.sh.
func TestLockProbeClassIsBuiltFromItsSource(t *testing.T) {
	javac := needJava(t, "javac")
	out := t.TempDir()
	if b, err := exec.Command(javac, "--release", "8", "-d", out, filepath.Join("lockprobe", "KafkabotLockProbe.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	class, err := os.ReadFile(filepath.Join(out, "KafkabotLockProbe.class"))
	if err != nil {
		t.Fatal(err)
	}
	want := base64.StdEncoding.EncodeToString(class)
	m := lockProbeClassRE.FindStringSubmatch(Script)
	if m == nil {
		t.Fatal("repair.sh has no KAFKABOT_LOCK_PROBE_CLASS= line")
	}
	if *updateLockProbe {
		src, err := os.ReadFile("repair.sh")
		if err != nil {
			t.Fatal(err)
		}
		src = lockProbeClassRE.ReplaceAll(src, []byte("KAFKABOT_LOCK_PROBE_CLASS="+want))
		if err := os.WriteFile("repair.sh", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if m[1] != want {
		t.Errorf("repair.sh's KAFKABOT_LOCK_PROBE_CLASS is not javac --release 8 of lockprobe/KafkabotLockProbe.java; run: go test ./internal/recovery -run TestLockProbeClass -update-lockprobe")
	}
}
