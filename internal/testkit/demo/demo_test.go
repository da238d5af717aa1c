// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

func TestMrkdwnToText(t *testing.T) {
	users := Users{"U0BOB": "bob"}
	tests := []struct{ name, in, want string }{
		{"bold and italic dropped", "*Repair succeeded.* _dry run_", "Repair succeeded. dry run"},
		{"mention", "approved by <@U0BOB>, asked by <@U0EVE>", "approved by @bob, asked by @U0EVE"},
		{"link", "see <https://example.com/runbook|the runbook>", "see the runbook (https://example.com/runbook)"},
		{"escapes", "next offset 5 &gt; 3 &amp;&amp; a &lt;b&gt;", "next offset 5 > 3 && a <b>"},
		{"inline code is not formatted", "move `__cluster_metadata-0` and `*x*`", "move __cluster_metadata-0 and *x*"},
		{"code block indented", "*Evidence*\n```\nline 1\n  at x\n```\nafter", "Evidence\n\n    line 1\n      at x\nafter"},
		{"unterminated code kept", "a ` b", "a ` b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MrkdwnToText(tt.in, users); got != tt.want {
				t.Errorf("MrkdwnToText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// message is a diagnosis-shaped Block Kit message, as slack-go marshals one.
const message = `[
 {"type":"header","block_id":"h","text":{"type":"plain_text","text":"🔴 kafka/broker-0: metadata log diverged"}},
 {"type":"section","block_id":"s","text":{"type":"mrkdwn","text":"*Diverged* — rule ` + "`metadata-log-offset-mismatch`" + `"}},
 {"type":"section","block_id":"f","fields":[{"type":"mrkdwn","text":"*Role*\nbroker"},{"type":"mrkdwn","text":"*Restarts*\n5"}]},
 {"type":"context","block_id":"c","elements":[{"type":"mrkdwn","text":"Requested by <@U0ALICE>"}]},
 {"type":"divider"},
 {"type":"image","image_url":"https://example.com/x.png","alt_text":"x"},
 {"type":"actions","block_id":"a","elements":[
  {"type":"button","action_id":"kafkabot.approve","value":"tok","style":"primary","text":{"type":"plain_text","text":"Approve repair"},
   "confirm":{"title":{"type":"plain_text","text":"Approve repair?"},"text":{"type":"plain_text","text":"Move it."},"confirm":{"type":"plain_text","text":"Approve"},"deny":{"type":"plain_text","text":"Cancel"}}},
  {"type":"button","action_id":"kafkabot.reject","value":"tok","style":"danger","text":{"type":"plain_text","text":"Reject <now>"}}]}
]`

func TestRenderText(t *testing.T) {
	got, err := RenderText(json.RawMessage(message), "fallback", Users{"U0ALICE": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"🔴 kafka/broker-0: metadata log diverged\n═══",
		"Diverged — rule metadata-log-offset-mismatch",
		"  Role: broker\n  Restarts: 5",
		"Requested by @alice",
		strings.Repeat("─", 60),
		"(image block)",
		"[ Approve repair ]  [ Reject <now> ]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, got)
		}
	}
	if fb, _ := RenderText(nil, "*only* fallback", nil); fb != "only fallback" {
		t.Errorf("no blocks: got %q, want the fallback text", fb)
	}
	if _, err := RenderText(json.RawMessage(`{"not":"an array"}`), "", nil); err == nil {
		t.Error("blocks that are not an array: want an error")
	}
}

func TestButtons(t *testing.T) {
	got, err := Buttons(json.RawMessage(message))
	if err != nil {
		t.Fatal(err)
	}
	want := []Button{
		{ActionID: "kafkabot.approve", Label: "Approve repair", Value: "tok", Style: "primary", ConfirmTitle: "Approve repair?", ConfirmText: "Move it."},
		{ActionID: "kafkabot.reject", Label: "Reject <now>", Value: "tok", Style: "danger"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Buttons = %+v, want %+v", got, want)
	}
}

func TestRenderHTMLEscapes(t *testing.T) {
	page, err := RenderHTML(MessageView{Channel: "kafka-ops", Author: "kafkabot", Time: "17:04",
		Blocks: json.RawMessage(message), Users: Users{"U0ALICE": "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<div class="bar"># kafka-ops</div>`,
		`<div class="header">🔴 kafka/broker-0: metadata log diverged</div>`,
		`<b>Diverged</b> — rule <code>metadata-log-offset-mismatch</code>`,
		`<span class="mention">@alice</span>`,
		`<span class="button primary">Approve repair</span>`,
		`<span class="button danger">Reject &lt;now&gt;</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<now>") {
		t.Error("button text reached the page unescaped")
	}
}

func TestStartupLogDropsComposePrefix(t *testing.T) {
	log := StartupLog()
	if strings.Contains(log, "broker-1        | ") || !strings.Contains(log, "\n[2025-02-19 18:12:28,114] INFO [KafkaRaftServer nodeId=4] Kafka Server started") {
		t.Errorf("startup log not as a pod's log would be:\n%s", log)
	}
	if !strings.Contains(CrashLog(), "UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0") {
		t.Error("the embedded crash log is not the seed incident's")
	}
}

// startCluster starts the demo cluster with busybox or its stand-in.
func startCluster(t *testing.T) *Cluster {
	t.Helper()
	shell, err := FindShell(ShellAuto, filepath.Join(t.TempDir(), "shell"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartCluster(t.Context(), ClusterOptions{Namespace: Namespace, Busybox: shell.Busybox, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if err := Seed(t.Context(), c, SeedOptions{VolumeRoot: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	return c
}

// The bot's kube.Client reads logs through real pods/log requests: bounded
// as the kubelet bounds them, and refused with the kubelet's 400.
func TestBotReadsLogsLikeFromAnAPIServer(t *testing.T) {
	c := startCluster(t)
	cs, err := c.BotClientset()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	pods := cs.CoreV1().Pods(Namespace)
	lines := strings.Count(CrashLog(), "\n")
	tests := []struct {
		name    string
		pod     string
		opts    corev1.PodLogOptions
		want    string
		wantErr string
	}{
		{"previous, whole", BrokerPod, corev1.PodLogOptions{Container: "kafka", Previous: true}, CrashLog(), ""},
		{"last line", BrokerPod, corev1.PodLogOptions{Container: "kafka", Previous: true, TailLines: ptr.To[int64](1)},
			lastLine(CrashLog()), ""},
		{"tail then limitBytes", BrokerPod, corev1.PodLogOptions{Container: "kafka", Previous: true, TailLines: ptr.To(int64(lines)), LimitBytes: ptr.To[int64](10)},
			CrashLog()[:10], ""},
		{"no previous instance", NeighbourPod, corev1.PodLogOptions{Container: "kafka", Previous: true}, "",
			`previous terminated container "kafka" in pod "foobar-kafka-broker-1" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Stream, as the bot reads logs (DoRaw keeps errors unstructured).
			var got []byte
			body, err := pods.GetLogs(tt.pod, &tt.opts).Stream(ctx)
			if err == nil {
				got, err = io.ReadAll(body)
				body.Close()
			}
			if tt.wantErr != "" {
				if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want a 400 saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("log = %q, %v; want %q", got, err, tt.want)
			}
		})
	}

	// The bot's own reader, on the same clientset: the whole seed log.
	snap, err := kube.New(cs, kube.Options{Namespaces: []string{Namespace}}).Snapshot(ctx, Namespace, BrokerPod)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Log != CrashLog() || snap.NodeID != "100" || snap.UID == "" {
		t.Errorf("snapshot: node id %q, uid %q, log %q", snap.NodeID, snap.UID, snap.Log)
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:] + "\n"
}

// The busybox stand-in runs the script's tools from the host, and only
// those: kubesim puts nothing else on PATH.
func TestSystemShellStandIn(t *testing.T) {
	dir := t.TempDir()
	sh, err := FindShell(ShellSystem, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sh.Description, "system /bin/sh") {
		t.Errorf("description %q does not name the system shell", sh.Description)
	}
	list, err := exec.Command(sh.Busybox, "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"sh", "find", "stat", "mv", "readlink"} {
		if !strings.Contains("\n"+string(list), "\n"+tool+"\n") {
			t.Errorf("--list lacks %s:\n%s", tool, list)
		}
	}
	applets := filepath.Join(dir, "applets")
	if err := os.MkdirAll(applets, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"mkdir", "stat", "nosuch"} {
		if err := os.Symlink(sh.Busybox, filepath.Join(applets, a)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(sh.Busybox, "sh", "-c", `mkdir "$1/made" && stat -c %F "$1/made"; nosuch`, "sh", dir)
	cmd.Env = []string{"PATH=" + applets}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 127 {
		t.Errorf("an applet it does not provide: err %v, want exit 127", err)
	}
	if !strings.HasPrefix(string(out), "directory\n") || !strings.Contains(string(out), "nosuch: applet not found") {
		t.Errorf("output %q", out)
	}
	if _, err := FindShell("zsh", dir); err == nil {
		t.Error("an unknown shell choice was accepted")
	}
}

func TestVolumeTreeAndBackup(t *testing.T) {
	root := t.TempDir()
	if err := layOutVolume(root, 100, "broker"); err != nil {
		t.Fatal(err)
	}
	tree, err := VolumeTree(root)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(tree, "\n")
	for _, want := range []string{"data/", "  __cluster_metadata-0/", "7 files, 140.2 KiB", "  meta.properties"} {
		if !strings.Contains(text, want) {
			t.Errorf("tree lacks %q:\n%s", want, text)
		}
	}
	if got, err := FindBackup(root, "data", MetadataLog); got != "" || err != nil {
		t.Errorf("FindBackup before any repair = %q, %v", got, err)
	}
	backup := filepath.Join(root, "kafkabot-backup-20251129T000000Z-x", "data")
	if err := os.MkdirAll(backup, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "data", MetadataLog), filepath.Join(backup, MetadataLog)); err != nil {
		t.Fatal(err)
	}
	if got, _ := FindBackup(root, "data", MetadataLog); got != "kafkabot-backup-20251129T000000Z-x/data/"+MetadataLog {
		t.Errorf("FindBackup = %q", got)
	}
	meta, _ := os.ReadFile(filepath.Join(root, "data", "meta.properties"))
	if !strings.Contains(string(meta), "node.id=100\n") {
		t.Errorf("meta.properties = %q", meta)
	}
}

// A story that cannot end with the broker repaired fails with
// ErrStoryFailed: here the broker's log matches no rule, so the bot
// offers no repair.
func TestRunFailsWhenNothingIsRepairable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Out: io.Discard, Yes: true, CrashLog: "[2025-04-28 08:22:01,606] INFO all is well\n"})
	if !errors.Is(err, ErrStoryFailed) || !strings.Contains(err.Error(), "offers no") {
		t.Fatalf("err = %v, want ErrStoryFailed: no button", err)
	}
	// The answer is kept, and red: the broker crash-loops whether or not a
	// rule explains it.
	if res == nil || res.Diagnosis.TS == "" || !strings.HasPrefix(res.Diagnosis.Text, "Kafka diagnosis of 🔴 ") ||
		strings.Contains(string(res.Diagnosis.Blocks), approveAction) {
		t.Errorf("the bot's answer was not kept, or not red without buttons: %s", res.Diagnosis.Text)
	}
}
