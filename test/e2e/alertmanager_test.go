// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/amreceiver"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// The bearer tokens of the Alertmanager scenario: the one the bot takes,
// and a wrong one an Alertmanager receiver is (mis)configured with.
const (
	amToken      = "e2e-alertmanager-token-0123456789"
	amWrongToken = "e2e-not-the-token-9876543210abcdef"
)

// TestAlertmanagerWebhookEndToEnd: the real Prometheus Alertmanager
// (v0.35.0, built by hack/build-alertmanager.sh) routes a
// KubePodCrashLooping alert to the bot's webhook receiver, with the bearer
// token from a credentials file and the channel on the receiver URL. The
// bot diagnoses the broker on the real API server and posts the diagnosis
// with Approve / Reject in that channel, once, however often Alertmanager
// repeats the notification and whatever the sweep's own evaluations see.
// An approver approves; the repair runs. The alert is then resolved in
// Alertmanager, and the bot resolves the message at once (the sweep's own
// grace never passes: its clock is fake and never stepped). Alertmanager
// receivers with a wrong or no token are refused (401) and logged, without
// the token in the log, and post nothing.
func TestAlertmanagerWebhookEndToEnd(t *testing.T) {
	bin := alertmanagerBinary(t)
	w := newWorld(t, "kafka-e2e-alertmanager", worldOptions{})
	for _, id := range []string{"0", "1", "2"} {
		c := controller("foobar-kafka-controller-"+id, id)
		w.createNode(c, "")
		w.ready(c.name)
	}
	vol := newBrokerVolume(t, seedNodeID)
	old := w.createNode(broker(seedBroker, seedNodeID), vol)
	w.ready(seedBroker)
	before := readTree(t, vol)

	// The bot as `bot serve` wires it with ALERT_CHANNEL and
	// ALERTMANAGER_TOKEN; the sweep's watch path is held by a group wait
	// on a fake clock, so every post below comes through the receiver.
	clk := clocktesting.NewFakeClock(time.Now())
	p := w.newBotParts("kafkabot-0")
	if w.self == "" { // the world's own copy of the bot's namespace, as startAlertingBot makes it
		w.self = w.env.SelfNamespace(t, "kafka-bot-"+w.ns)
	}
	alerts := alertnotify.New(alertChannel)
	sw, err := sweep.New(sweep.Options{
		Client: p.cluster, Engine: p.engine, Notifier: alerts,
		ResolveGrace: alertGrace, GroupWait: time.Hour,
		StateNamespace: w.self, StateName: sweep.DefaultStateName,
		LeaderElection: true, LeaseName: sweep.DefaultLeaseName, Identity: "kafkabot-0",
		Clock: clk, Logger: p.log,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := w.options(p)
	opts.Alerts, opts.Clusters[0].Silencer, opts.Clusters[0].Sweeper = alerts, sw, sw
	w.run("kafkabot-0", p, opts, sw.Run)
	testenv.WaitFor(t, "the sweep to lead", func(context.Context) (bool, error) { return sw.Leading(), nil })

	recvLogs := &logging.Buffer{}
	rc, err := amreceiver.New(amreceiver.Options{
		Token: amToken, Sink: sw, DefaultChannel: alertChannel, Channels: opts.ApprovalChannels,
		Logger: slog.New(slog.NewJSONHandler(recvLogs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /alertmanager", rc)
	srv := httptest.NewServer(mux) // loopback
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("receiver log:\n%s", recvLogs.String())
		}
	})

	am := startAlertmanager(t, bin, srv.URL)
	crash := map[string]string{"alertname": "KubePodCrashLooping", "namespace": w.ns, "pod": seedBroker, "container": "kafka", "severity": "warning"}
	started := time.Now().UTC()

	// Fire: the broker crash-loops and Alertmanager says so.
	w.crashLoop(seedBroker, seedLog())
	am.post(t, amAlert{Labels: crash, StartsAt: started})
	w.waitSlack("the diagnosis in the routed channel", func() bool { return len(w.emu.Messages(channel)) > 0 })
	alert := w.emu.Messages(channel)[0]
	text := blockTexts(t, alert.Blocks)
	for _, want := range []string{w.ns + "/" + seedBroker, "KRaft metadata log diverged", "CrashLoopBackOff",
		"Alert from Alertmanager* (`KubePodCrashLooping`)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the alert does not mention %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "health sweep") {
		t.Errorf("Alertmanager's alert says the health sweep found it:\n%s", text)
	}
	ids := actionIDs(t, alert.Blocks)
	if !slices.Contains(ids, actionApprove) || !slices.Contains(ids, actionReject) {
		t.Errorf("the alert offers %v, want Approve and Reject", ids)
	}

	// Alertmanager repeats the notification (repeat_interval 3s) and the
	// sweep evaluates on its own: still one message.
	testenv.WaitFor(t, "Alertmanager to repeat the notification", func(context.Context) (bool, error) {
		return strings.Count(recvLogs.String(), `"outcome":"firing"`) >= 2, nil
	})
	if err := sw.SweepNow(w.ctx()); err != nil {
		t.Fatalf("SweepNow: %v", err)
	}
	if n := len(w.emu.Messages(channel)); n != 1 {
		t.Fatalf("the routed channel has %d messages, want the one alert", n)
	}
	if n := len(w.emu.Messages(alertChannel)); n != 0 {
		t.Fatalf("ALERT_CHANNEL has %d messages, want none (the route named another channel)", n)
	}

	// Approve: the repair runs in the alert's thread.
	w.click(alert, actionApprove, approver)
	th := w.waitRepairEnd(alert)
	if missing := containsInOrder(th, "approved. Starting", "Repair succeeded: the broker is back"); missing != "" {
		t.Fatalf("the alert's thread lacks %q; it reads:\n%s", missing, strings.Join(th, "\n---\n"))
	}
	checkMetadataLogMoved(t, vol, before)
	checkBrokerReplaced(t, w, old)

	// Resolve in Alertmanager: the message is resolved, buttons gone, at
	// once (the sweep's clock never moved, so its grace did not pass).
	readyAt := clk.Now()
	am.post(t, amAlert{Labels: crash, StartsAt: started, EndsAt: time.Now().UTC()})
	w.waitSlack("the alert to resolve", func() bool {
		return strings.Contains(blockTexts(t, w.message(alert).Blocks), "Resolved")
	})
	if !clk.Now().Equal(readyAt) {
		t.Errorf("the sweep's clock moved")
	}
	resolved := w.message(alert)
	if ids := actionIDs(t, resolved.Blocks); len(ids) != 0 {
		t.Errorf("the resolved alert still offers %v", ids)
	}
	if !strings.Contains(blockTexts(t, resolved.Blocks), "Repair succeeded") {
		t.Errorf("the resolved alert lost the repair's outcome:\n%s", blockTexts(t, resolved.Blocks))
	}

	// Receivers with a wrong token and with none are refused and logged.
	before401 := len(w.emu.Messages(channel))
	for _, c := range []string{"wrong-token", "no-token"} {
		labels := map[string]string{"alertname": "KubePodCrashLooping", "namespace": w.ns, "pod": seedBroker, "case": c}
		am.post(t, amAlert{Labels: labels, StartsAt: time.Now().UTC()})
	}
	testenv.WaitFor(t, "both refusals in the log", func(context.Context) (bool, error) {
		l := recvLogs.String()
		return strings.Contains(l, "alertmanager webhook refused: wrong bearer token") &&
			strings.Contains(l, "alertmanager webhook refused: no bearer token"), nil
	})
	for _, secret := range []string{amToken, amWrongToken} {
		if strings.Contains(recvLogs.String()+p.logs.String(), secret) {
			t.Errorf("a bearer token reached a log: %.10s…", secret)
		}
	}
	if n := len(w.emu.Messages(channel)); n != before401 {
		t.Errorf("a refused notification posted: %d messages, want %d", n, before401)
	}
	if n := len(w.emu.Messages(alertChannel)); n != 0 {
		t.Errorf("ALERT_CHANNEL has %d messages, want none", n)
	}
}

// alertmanagerBinary returns the pinned Alertmanager built by
// hack/build-alertmanager.sh ($ALERTMANAGER_BIN, or where the script puts
// it). Missing, it fails the test (skips only off CI with
// KAFKABOT_SKIP_APISERVER=1, like the control plane).
func alertmanagerBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ALERTMANAGER_BIN")
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "..", "hack", "build-alertmanager.sh")
		out, err := exec.Command("bash", script, "--print-path").Output()
		if err != nil {
			t.Fatalf("bash %s --print-path: %v", script, err)
		}
		bin = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("no Alertmanager binary at %s (%v): run bash hack/build-alertmanager.sh (hack/test.sh does)", bin, err)
		if os.Getenv(testenv.EnvCI) != "true" && os.Getenv(testenv.EnvSkip) == "1" {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return bin
}

// amAlert is an alert as Alertmanager's API (v2) takes it.
type amAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// alertmanager is a running Alertmanager process.
type alertmanager struct {
	url string
}

// startAlertmanager starts Alertmanager on loopback, routing to the bot's
// receiver at botURL: the kafkabot receiver with the token and the channel
// on its URL, and two misconfigured receivers (wrong token, no token) for
// alerts labelled case="wrong-token" / case="no-token". It is stopped by
// its PID when the test ends, failed or not.
func startAlertmanager(t *testing.T, bin, botURL string) *alertmanager {
	t.Helper()
	dir := t.TempDir()
	for name, tok := range map[string]string{"token": amToken + "\n", "wrong-token": amWrongToken} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`route:
  receiver: kafkabot
  group_by: [namespace, pod, case]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 3s
  routes:
  - receiver: wrong-token
    matchers: ['case="wrong-token"']
  - receiver: no-token
    matchers: ['case="no-token"']
receivers:
- name: kafkabot
  webhook_configs:
  - url: %[1]s/alertmanager?channel=%[2]s
    send_resolved: true
    http_config:
      authorization:
        credentials_file: %[3]s/token
- name: wrong-token
  webhook_configs:
  - url: %[1]s/alertmanager
    http_config:
      authorization:
        credentials_file: %[3]s/wrong-token
- name: no-token
  webhook_configs:
  - url: %[1]s/alertmanager
`, botURL, channel, dir)
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	logPath := filepath.Join(dir, "alertmanager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=", // no gossip: one instance, no other port
		"--log.level=debug",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // also if the test binary dies
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Alertmanager: %v", err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			if raw, err := os.ReadFile(logPath); err == nil {
				t.Logf("Alertmanager's log:\n%s", raw)
			}
		}
	})
	am := &alertmanager{url: "http://" + addr}
	client := &http.Client{Timeout: 2 * time.Second}
	testenv.WaitFor(t, "Alertmanager to be ready", func(context.Context) (bool, error) {
		resp, err := client.Get(am.url + "/-/ready")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return am
}

// post posts alerts to Alertmanager's API (v2).
func (am *alertmanager) post(t *testing.T, alerts ...amAlert) {
	t.Helper()
	body, err := json.Marshal(alerts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(am.url+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("posting alerts to Alertmanager: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		t.Fatalf("Alertmanager refused the alerts: %s %s", resp.Status, b.String())
	}
}

// freeLoopbackAddr returns a loopback address with a port free right now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
