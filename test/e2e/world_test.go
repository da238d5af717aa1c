// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/escalation"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// The Slack side of every scenario.
const (
	channel   = "C0KAFKAOPS"
	requester = "U0ONCALL"
	approver  = "U0APPROVER"

	actionApprove = "kafkabot.approve"
	actionReject  = "kafkabot.reject"
)

// approvalSecret signs the approval buttons in these tests only.
var approvalSecret = []byte("e2e-only-approval-secret-0123456789abcdef")

// The Bitnami-style cluster of the seed incident.
const (
	clusterName = "foobar"
	kafkaImage  = "docker.io/bitnami/kafka:3.9.0"
	kafkaUID    = 1001
	// seedBroker is the broker of the seed incident, node id 100.
	seedBroker = "foobar-kafka-broker-0"
	seedNodeID = "100"
)

// waitLimit bounds every wait on Slack; it only stops a hung test.
const waitLimit = 60 * time.Second

// repairTimeout is the bot's REPAIR_TIMEOUT in these tests: each wait of
// a repair, and the debug pod's deadline.
const repairTimeout = 2 * time.Minute

// seedLog is the seed incident's crash log, read once.
var seedLog = sync.OnceValue(func() string {
	data, err := os.ReadFile(filepath.Join("testdata", "34-kraft-metadata-log-unexpected-append-offset.log"))
	if err != nil {
		panic(err)
	}
	return string(data)
})

// world is one scenario's namespace on the shared API server, with its own
// kubelet stand-in and Slack emulator.
type world struct {
	t       *testing.T
	env     *testenv.Env
	ns      string
	admin   kubernetes.Interface
	kubelet *kubesim.Kubelet
	emu     *slackemu.Server
	// self is the world's copy of the bot's own namespace, made on first
	// use by an alerting bot.
	self string
}

// worldOptions vary a scenario's world.
type worldOptions struct {
	// namespaceLabels label the Kafka namespace (Pod Security, for one).
	namespaceLabels map[string]string
	// busybox is the binary kubesim runs debug pods with ("" = PATH's).
	busybox string
}

// worldSeq numbers the worlds of this test binary.
var worldSeq atomic.Int64

func newWorld(t *testing.T, ns string, opts worldOptions) *world {
	t.Helper()
	env := testenv.Start(t)
	// A sequence number keeps names unique under -count=N, which runs the
	// tests again on the same API server.
	ns = fmt.Sprintf("%s-%d", ns, worldSeq.Add(1))
	return newWorldOn(t, env, ns, opts, newEmulator(t))
}

// newEmulator starts a Slack emulator that closes after the test's bots
// have stopped (call it before starting them).
func newEmulator(t *testing.T) *slackemu.Server {
	t.Helper()
	emu, err := slackemu.New(slackemu.Options{PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Close) // registered before the bots: runs after they have stopped
	return emu
}

// newWorldOn makes namespace ns on env's API server a world whose Slack
// is emu: two worlds on two API servers sharing one emulator are two
// clusters served by one bot (see twoClusters).
func newWorldOn(t *testing.T, env *testenv.Env, ns string, opts worldOptions, emu *slackemu.Server) *world {
	t.Helper()
	w := &world{t: t, env: env, admin: env.Clientset, emu: emu}
	w.ns = env.KafkaNamespace(t, ns, opts.namespaceLabels)

	var err error
	w.kubelet, err = kubesim.New(env.Clientset, kubesim.Options{
		NodeName: "node-" + ns, Namespaces: []string{w.ns}, ServeKubeletAPI: true,
		Busybox: opts.busybox, WorkDir: t.TempDir(), Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.kubelet.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.kubelet.Stop)
	return w
}

// ctx is a context for one API call or wait of the test.
func (w *world) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	w.t.Cleanup(cancel)
	return ctx
}

// ---- the Kafka cluster ----------------------------------------------------

// kafkaNode is one Kafka pod of the cluster, as the Bitnami chart's
// StatefulSets create it.
type kafkaNode struct {
	name string
	// component is the Bitnami label: broker or controller-eligible.
	component string
	// roles is KAFKA_CFG_PROCESS_ROLES.
	roles  string
	nodeID string
	// claim names the data PersistentVolumeClaim ("" = none).
	claim string
	// root runs its Kafka container as uid 0 (runAsUser 0 on the container).
	root bool
}

func broker(name, nodeID string) kafkaNode {
	return kafkaNode{name: name, component: "broker", roles: "broker", nodeID: nodeID, claim: "data-" + name}
}

func controller(name, nodeID string) kafkaNode {
	return kafkaNode{name: name, component: "controller-eligible", roles: "controller", nodeID: nodeID}
}

// pod is the node's pod: non-root (uid/gid/fsGroup 1001), seccomp
// RuntimeDefault, no privilege escalation, all capabilities dropped, as the
// chart's defaults, which also pass the restricted Pod Security Standard.
func (n kafkaNode) pod() *corev1.Pod {
	sts, stsUID := "foobar-kafka-broker", types.UID("5e7f0000-0000-4000-8000-000000000001")
	if n.component == "controller-eligible" {
		sts, stsUID = "foobar-kafka-controller", types.UID("5e7f0000-0000-4000-8000-000000000002")
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.name,
			Labels: map[string]string{
				"app.kubernetes.io/name":      "kafka",
				"app.kubernetes.io/instance":  clusterName,
				"app.kubernetes.io/component": n.component,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts,
				UID: stsUID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: ptr.To[int64](kafkaUID), RunAsGroup: ptr.To[int64](kafkaUID), FSGroup: ptr.To[int64](kafkaUID),
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:  "kafka",
				Image: kafkaImage,
				Env: []corev1.EnvVar{
					{Name: "KAFKA_CFG_PROCESS_ROLES", Value: n.roles},
					{Name: "KAFKA_CFG_NODE_ID", Value: n.nodeID},
					{Name: "KAFKA_CFG_LOG_DIRS", Value: "/bitnami/kafka/data"},
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if n.root {
		p.Spec.SecurityContext.RunAsNonRoot = nil
		p.Spec.Containers[0].SecurityContext.RunAsUser = ptr.To[int64](0)
	}
	if n.claim != "" {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}}
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n.claim},
		}}}
	}
	return p
}

// createNode creates the node's pod (and its claim, backed by volumeDir)
// and returns it once kubesim has scheduled it.
func (w *world) createNode(n kafkaNode, volumeDir string) *corev1.Pod {
	w.t.Helper()
	if n.claim != "" {
		if volumeDir == "" {
			volumeDir = w.t.TempDir()
		}
		if _, err := w.kubelet.ProvisionClaim(w.ctx(), w.ns, n.claim, volumeDir, "8Gi"); err != nil {
			w.t.Fatal(err)
		}
	}
	if _, err := w.admin.CoreV1().Pods(w.ns).Create(w.ctx(), n.pod(), metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating pod %s: %v", n.name, err)
	}
	var pod *corev1.Pod
	testenv.WaitFor(w.t, n.name+" to be scheduled", func(ctx context.Context) (bool, error) {
		p, err := w.admin.CoreV1().Pods(w.ns).Get(ctx, n.name, metav1.GetOptions{})
		pod = p
		return err == nil && p.Spec.NodeName != "", err
	})
	return pod
}

// crashLoop makes the pod crash-loop with log as its previous container's log.
func (w *world) crashLoop(name, log string) {
	w.t.Helper()
	if err := w.kubelet.CrashLoop(w.ctx(), w.ns, name, log); err != nil {
		w.t.Fatal(err)
	}
}

// ready makes the pod run and be Ready.
func (w *world) ready(name string) {
	w.t.Helper()
	if err := w.kubelet.Ready(w.ctx(), w.ns, name); err != nil {
		w.t.Fatal(err)
	}
}

// seedCluster builds the seed incident: three Ready controllers and
// broker-0 (node 100) crash-looping with the seed log, its claim backed by
// a Bitnami-style volume. It returns the broker pod and the volume's host
// directory.
func (w *world) seedCluster() (*corev1.Pod, string) {
	w.t.Helper()
	for _, id := range []string{"0", "1", "2"} {
		c := controller("foobar-kafka-controller-"+id, id)
		w.createNode(c, "")
		w.ready(c.name)
	}
	vol := newBrokerVolume(w.t, seedNodeID)
	pod := w.createNode(broker(seedBroker, seedNodeID), vol)
	w.crashLoop(seedBroker, seedLog())
	return pod, vol
}

// pod reads a pod as the admin.
func (w *world) pod(name string) (*corev1.Pod, error) {
	return w.admin.CoreV1().Pods(w.ns).Get(w.ctx(), name, metav1.GetOptions{})
}

// debugPods lists the bot's debug pods left in the namespace.
func (w *world) debugPods() []corev1.Pod {
	w.t.Helper()
	list, err := w.admin.CoreV1().Pods(w.ns).List(w.ctx(), metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedByBot})
	if err != nil {
		w.t.Fatal(err)
	}
	return list.Items
}

// botEvents returns the Events the bot recorded on pod name, oldest first.
func (w *world) botEvents(name string) []corev1.Event {
	w.t.Helper()
	list, err := w.admin.CoreV1().Events(w.ns).List(w.ctx(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.ReportingController == kube.EventComponent {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstTimestamp.Before(&out[j].FirstTimestamp) })
	return out
}

// debugPodRecorder records every debug pod the API server admitted in the
// namespace, as first seen, through an admin watch started before the
// repair.
type debugPodRecorder struct {
	mu      sync.Mutex
	created []*corev1.Pod
}

func (w *world) recordDebugPods() *debugPodRecorder {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wi, err := w.admin.CoreV1().Pods(w.ns).Watch(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedByBot})
	if err != nil {
		cancel()
		w.t.Fatal(err)
	}
	r := &debugPodRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range wi.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if ev.Type != watch.Added || !ok {
				continue
			}
			r.mu.Lock()
			r.created = append(r.created, pod)
			r.mu.Unlock()
		}
	}()
	w.t.Cleanup(func() { wi.Stop(); cancel(); <-done })
	return r
}

// pods returns the debug pods created so far.
func (r *debugPodRecorder) pods() []*corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.created)
}

// ---- the bot ----------------------------------------------------------------

// botProcess is one running bot, wired as `bot serve` wires it, with the
// bot ServiceAccount's identity on the API server.
type botProcess struct {
	cancel context.CancelFunc
	done   chan error
	logs   *logging.Buffer
	once   sync.Once
}

// botParts are what a bot replica is built from, as cmd/bot/serve.go builds
// it: the bot ServiceAccount's client (RBAC enforced), the engine, a repair
// executor and a log the test prints when it fails.
type botParts struct {
	cluster  *kube.Client
	engine   *diagnose.Engine
	repairer *recovery.Repairer
	log      *slog.Logger
	logs     *logging.Buffer
}

func (w *world) newBotParts(identity string) botParts {
	w.t.Helper()
	cs, err := kubernetes.NewForConfig(w.env.BotConfig())
	if err != nil {
		w.t.Fatal(err)
	}
	p := botParts{cluster: kube.New(cs, kube.Options{Namespaces: []string{w.ns}}), engine: diagnose.Default(), logs: &logging.Buffer{}}
	p.log = slog.New(slog.NewJSONHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p.repairer = recovery.NewRepairer(p.cluster, p.engine, recovery.RepairOptions{
		Timeout: repairTimeout, Identity: identity, Logger: p.log,
		RecordKey: approvalSecret, // as cmd/bot: the Lease record is signed with APPROVAL_SECRET
	})
	return p
}

// options are the bot's handlers.Options for these parts.
func (w *world) options(p botParts) handlers.Options {
	return handlers.Options{
		AppToken: slackemu.DefaultAppToken, BotToken: slackemu.DefaultBotToken, APIURL: w.emu.APIURL(),
		ApprovalSecret: approvalSecret, ApprovalTTL: 30 * time.Minute, Approvers: []string{approver},
		Workers: 4, Diagnoser: p.engine, ApprovalChannels: []string{channel},
		Clusters: []handlers.ClusterOptions{{Reader: p.cluster, Repairer: p.repairer, Resumer: p.repairer,
			Decisions: p.cluster.Decisions(approvalSecret), Escalations: escalation.NewSlack(p.cluster)}},
		Logger: p.log, PingInterval: 5 * time.Second,
	}
}

// startBot starts a bot replica named identity (its repair Lease holder)
// and waits until it is connected to Slack.
func (w *world) startBot(identity string) *botProcess {
	w.t.Helper()
	p := w.newBotParts(identity)
	return w.run(identity, p, w.options(p), nil)
}

// run starts the bot built from opts, with sidecar (the health sweep, or
// nil) beside it as serve runs them: a sidecar failing for good stops the
// bot, and the sidecar stops with the bot. It waits until the bot is
// connected to Slack.
func (w *world) run(identity string, p botParts, opts handlers.Options, sidecar func(context.Context) error) *botProcess {
	w.t.Helper()
	bot, err := handlers.New(opts)
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	proc := &botProcess{cancel: cancel, done: make(chan error, 1), logs: p.logs}
	sidecarDone := make(chan error, 1)
	go func() {
		botErr := bot.Run(ctx)
		cancel()
		if err := <-sidecarDone; err != nil && botErr == nil {
			botErr = err
		}
		proc.done <- botErr
	}()
	go func() {
		if sidecar == nil {
			sidecarDone <- nil
			return
		}
		err := sidecar(ctx)
		if err != nil && ctx.Err() == nil {
			cancel()
			sidecarDone <- fmt.Errorf("health sweep: %w", err)
			return
		}
		sidecarDone <- nil
	}()
	w.t.Cleanup(func() {
		proc.stop(w.t)
		if w.t.Failed() {
			w.t.Logf("log of bot %s:\n%s", identity, p.logs.String())
		}
	})
	deadline := time.Now().Add(waitLimit)
	for !bot.Connected() {
		if time.Now().After(deadline) {
			w.t.Fatalf("bot %s did not connect to the Slack emulator", identity)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return proc
}

// stop stops the bot as SIGTERM does (its context ends) and waits for Run
// to return.
func (p *botProcess) stop(t *testing.T) {
	p.once.Do(func() {
		p.cancel()
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("bot Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("the bot did not stop within %s", waitLimit)
		}
	})
}

// ---- Slack --------------------------------------------------------------------

// waitSlack waits for cond on the emulator's state.
func (w *world) waitSlack(what string, cond func() bool) {
	w.t.Helper()
	if err := w.emu.WaitFor(w.ctx(), cond); err != nil {
		w.t.Fatalf("waiting for %s in Slack: %v", what, err)
	}
}

// diagnose types `/kafka <text>` as the requester, checks the command was
// acknowledged within Slack's deadline, and returns the diagnosis message
// the bot posts in the channel.
func (w *world) diagnose(text string) slackemu.Message {
	w.t.Helper()
	before := len(w.emu.Messages(channel))
	id, err := w.emu.SendSlashCommand(w.ctx(), slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: text})
	if err != nil {
		w.t.Fatal(err)
	}
	ack, err := w.emu.WaitAck(w.ctx(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	if ack.Late {
		w.t.Errorf("/kafka %s was acknowledged after Slack's deadline (%v)", text, ack.Latency)
	}
	if !strings.Contains(string(ack.Payload), "Diagnosing") {
		w.t.Errorf("the ack of /kafka %s shows %s, want a \"Diagnosing…\" note", text, ack.Payload)
	}
	w.waitSlack("the diagnosis message", func() bool { return len(w.emu.Messages(channel)) > before })
	m := w.emu.Messages(channel)[before]
	// The details reply is posted with the message, before anyone could click.
	w.waitSlack("the diagnosis details", func() bool { return len(w.emu.Thread(channel, m.TS)) > 0 })
	return m
}

// click presses a button of message m as user and waits for the ack.
func (w *world) click(m slackemu.Message, action, user string) {
	w.t.Helper()
	id, err := w.emu.SendClick(w.ctx(), slackemu.Click{ChannelID: m.Channel, UserID: user, MessageTS: m.TS, ActionID: action})
	if err != nil {
		w.t.Fatal(err)
	}
	ack, err := w.emu.WaitAck(w.ctx(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	if ack.Late {
		w.t.Errorf("the %s click was acknowledged late (%v)", action, ack.Latency)
	}
}

// threadTexts returns the lines of m's thread as it reads now, oldest
// first: each reply's block texts (its fallback text when it has none),
// one entry a line, so that the steps of a repair's checklist (one reply,
// edited in place) can be checked one by one and in order.
func (w *world) threadTexts(m slackemu.Message) []string {
	var out []string
	for _, r := range w.emu.Thread(m.Channel, m.TS) {
		text := r.Text
		if len(r.Blocks) > 0 {
			text = blockTexts(w.t, r.Blocks)
		}
		for line := range strings.Lines(text) {
			if line = strings.TrimRight(line, "\n"); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

// waitThread waits until a reply in m's thread contains want and returns
// the thread.
func (w *world) waitThread(m slackemu.Message, want string) []string {
	w.t.Helper()
	var th []string
	if err := w.emu.WaitFor(w.ctx(), func() bool {
		th = w.threadTexts(m)
		return slices.ContainsFunc(th, func(s string) bool { return strings.Contains(s, want) })
	}); err != nil {
		w.t.Fatalf("waiting for %q in the thread: %v; the thread so far:\n%s", want, err, strings.Join(th, "\n---\n"))
	}
	return th
}

// repairOutcome matches the first line of a repair's outcome reply
// ("✅ *Repair succeeded: the broker is back.*"), not the details' "*Repair
// (runs only after approval):*".
var repairOutcome = regexp.MustCompile(`\*Repair [^*]+\.\*`)

// outcomeText is the repair's outcome reply in thread lines th: its lines
// from the outcome's first on.
func outcomeText(th []string) string {
	for i, l := range th {
		if repairOutcome.MatchString(l) {
			return strings.Join(th[i:], "\n")
		}
	}
	return ""
}

// waitRepairEnd waits for the repair's outcome in m's thread and returns
// the thread.
func (w *world) waitRepairEnd(m slackemu.Message) []string {
	w.t.Helper()
	var th []string
	if err := w.emu.WaitFor(w.ctx(), func() bool {
		th = w.threadTexts(m)
		return slices.ContainsFunc(th, repairOutcome.MatchString)
	}); err != nil {
		w.t.Fatalf("waiting for the repair's outcome in the thread: %v; the thread so far:\n%s", err, strings.Join(th, "\n---\n"))
	}
	return th
}

// message returns m as Slack shows it now.
func (w *world) message(m slackemu.Message) slackemu.Message {
	w.t.Helper()
	got, ok := w.emu.Message(m.Channel, m.TS)
	if !ok {
		w.t.Fatalf("message %s vanished", m.TS)
	}
	return got
}

// blockTexts concatenates every text in a message's blocks, in order.
func blockTexts(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	text, err := slackemu.BlocksText(raw)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// actionIDs lists the action_ids of a message's interactive elements.
func actionIDs(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
		} `json:"elements"`
		Accessory *struct {
			ActionID string `json:"action_id"`
		} `json:"accessory"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("blocks are not a JSON array: %v", err)
	}
	var out []string
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID != "" {
				out = append(out, e.ActionID)
			}
		}
		if b.Accessory != nil && b.Accessory.ActionID != "" {
			out = append(out, b.Accessory.ActionID)
		}
	}
	return out
}

// containsInOrder reports the first of wants that does not appear in
// texts after the previous one ("" when all do, in order).
func containsInOrder(texts []string, wants ...string) string {
	i := 0
	for _, want := range wants {
		for i < len(texts) && !strings.Contains(texts[i], want) {
			i++
		}
		if i == len(texts) {
			return want
		}
		i++
	}
	return ""
}
