// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

// Package realnode runs the repair end to end on a real single-node cluster
// (hack/realnode.sh): the real kubelet, containerd and runc, local
// PersistentVolumes on this machine's disk, the StatefulSet controller, and
// the bot installed from deploy/ with `kubectl apply -k` (the last scenario
// replaces it with the Helm chart), running in its own
// pod with its projected ServiceAccount token, the real RBAC and admission
// policy, and talking to the Slack emulator (internal/testkit/slackemu), which this
// test process serves on the node's address inside the cluster's network
// namespace.
//
// Run it through the script (hack/test.sh does):
//
//	bash hack/realnode.sh up
//	bash hack/realnode.sh exec go test -tags realnode -count=1 -v ./test/realnode/
//	bash hack/realnode.sh down
//
// Outside the script it skips, except under CI=true, where it fails.
package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

const (
	kafkaNS      = "kafka"
	botNS        = "kafka-bot"
	channel      = "C0KAFKAOPS"
	alertChannel = "C0KAFKAALERTS"
	requester    = "U0ONCALL"
	approver     = "U0APPROVER"

	actionApprove = "kafkabot.approve"
	actionReject  = "kafkabot.reject"

	storageClass = "realnode-local"
	kafkaUID     = 1001

	brokerImageName = "kafkabot.local/kafka-standin:realnode"
	botImageName    = "kafkabot.local/kafkabot:realnode"

	// emulatorPort is the Slack emulator's port on the node's address.
	emulatorPort = "3080"

	// approvalSecret is the test's APPROVAL_SECRET (an obvious placeholder).
	approvalSecret = "realnode-test-approval-secret-not-a-real-one-0123456789"
)

// cluster is what every scenario shares: the admin client, the emulator the
// installed bot talks to, the images and the paths the script exported.
type cluster struct {
	admin    kubernetes.Interface
	emu      *slackemu.Server
	stateDir string
	nodeName string
	nodeIP   string
	kubectl  string
	repoRoot string
	images   map[string]ociimage.Ref
	// kafkaImages are the real Kafka images by version
	// (test/realnode/cmd/mkkafkaimage, REALNODE_KAFKA_VERSIONS).
	kafkaImages map[string]ociimage.Ref
	// installed is when `kubectl apply -k` returned.
	installed time.Time
	// overlay is the kustomize overlay the bot was installed from (removed
	// when the tests end).
	overlay string
}

var env *cluster

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "realnode: %v\n", err)
		if os.Getenv("CI") == "true" || code == 1 {
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "realnode: SKIP (set CI=true to make this fatal)")
		os.Exit(0)
	}
	os.Exit(code)
}

// setUp checks it runs inside hack/realnode.sh exec, installs the bot and
// runs the tests. A returned error with code 0 means "no cluster here".
func setUp(m *testing.M) (int, error) {
	state := os.Getenv("REALNODE_DIR")
	if state == "" || os.Getenv("KUBECONFIG") == "" {
		return 0, fmt.Errorf("no real node: run through `hack/realnode.sh exec go test -tags realnode ./test/realnode/`")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return 1, err
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 1, err
	}
	_, file, _, _ := runtime.Caller(0)
	c := &cluster{
		admin:    admin,
		stateDir: state,
		nodeName: os.Getenv("REALNODE_NODE"),
		nodeIP:   os.Getenv("REALNODE_NODE_IP"),
		kubectl:  filepath.Join(os.Getenv("REALNODE_BIN"), "kubectl"),
		repoRoot: filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")),
	}
	if c.images, err = readImages(filepath.Join(state, "images", "images.json")); err != nil {
		return 1, err
	}
	if c.kafkaImages, err = readKafkaImages(filepath.Join(state, "images")); err != nil {
		return 1, err
	}
	// The emulator listens on the node's address: the bot's pod reaches it
	// over the pod network, as it would reach slack.com through its egress.
	// A fixed port (the network namespace is the cluster's own) keeps the
	// bot's configuration the same when the tests run again on one cluster.
	c.emu, err = slackemu.New(slackemu.Options{Addr: c.nodeIP + ":" + emulatorPort})
	if err != nil {
		return 1, err
	}
	defer c.emu.Close()
	defer func() {
		if c.overlay != "" {
			os.RemoveAll(c.overlay)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.prepare(ctx); err != nil {
		return 1, err
	}
	if err := c.installBot(ctx); err != nil {
		c.dumpBot()
		return 1, err
	}
	env = c
	code := m.Run()
	if code != 0 {
		c.dumpBot()
	}
	return code, nil
}

func readImages(path string) (map[string]ociimage.Ref, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the image list (hack/realnode.sh up writes it): %w", err)
	}
	var refs []ociimage.Ref
	if err := json.Unmarshal(b, &refs); err != nil {
		return nil, err
	}
	out := map[string]ociimage.Ref{}
	for _, r := range refs {
		out[r.Name] = r
	}
	for _, want := range []string{brokerImageName, botImageName} {
		if _, ok := out[want]; !ok {
			return nil, fmt.Errorf("%s lacks %s", path, want)
		}
	}
	return out, nil
}

// prepare creates what exists before the bot is installed: the Kafka
// namespace (restricted Pod Security, as the debug pod must pass it) and the
// StorageClass of the local volumes.
func (c *cluster) prepare(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kafkaNS, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}}
	if _, err := c.admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: storageClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := c.admin.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The ServiceAccount admission needs the namespace's default account.
	return waitFor(ctx, 60*time.Second, func() (bool, error) {
		_, err := c.admin.CoreV1().ServiceAccounts(kafkaNS).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// installBot installs the bot exactly as the README says, with a test
// overlay on top of deploy/: the image by digest, the emulator's URL, the
// Secret, the channels and approver, the broker image's repository for the
// admission policy, and the API server's real address (there is no
// kube-proxy).
func (c *cluster) installBot(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "realnode-overlay-")
	if err != nil {
		return err
	}
	c.overlay = dir
	base, err := filepath.Rel(dir, filepath.Join(c.repoRoot, "deploy"))
	if err != nil {
		return err
	}
	bot := c.images[botImageName]
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
images:
  - name: ghcr.io/kafka-chatops/kafkabot
    newName: kafkabot.local/kafkabot
    digest: %s
secretGenerator:
  - name: kafka-bot
    namespace: kafka-bot
    options:
      disableNameSuffixHash: true
    literals:
      - SLACK_APP_TOKEN=%s
      - SLACK_BOT_TOKEN=%s
      - APPROVAL_SECRET=%s
patches:
  - target:
      kind: ConfigMap
      name: kafka-bot
    patch: |-
      - op: replace
        path: /data/ALERT_CHANNEL
        value: %s
      - op: replace
        path: /data/APPROVERS
        value: %s
      - op: replace
        path: /data/APPROVAL_CHANNELS
        value: %s
      - op: add
        path: /data/SLACK_API_URL
        value: %s
      - op: add
        path: /data/REPAIR_SETTLE
        value: 20s
  - target:
      kind: Namespace
      name: kafka-bot
    patch: |-
      - op: replace
        path: /metadata/annotations/kafkabot.io~1debug-image-repositories
        value: kafkabot.local/kafka-standin,kafkabot.local/kafka
  - target:
      kind: Deployment
      name: kafka-bot
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value: {name: KUBERNETES_SERVICE_HOST, value: "%s"}
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value: {name: KUBERNETES_SERVICE_PORT, value: "6443"}
`, base, bot.ManifestDigest, slackemu.DefaultAppToken, slackemu.DefaultBotToken, approvalSecret,
		alertChannel, approver, channel, c.emu.APIURL(), c.nodeIP)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		return err
	}
	if out, err := c.run(ctx, "apply", "-k", dir); err != nil {
		return fmt.Errorf("kubectl apply -k: %v\n%s", err, out)
	}
	c.installed = time.Now()
	// A second run on the same cluster: start the bot afresh, as after an
	// upgrade (a no-op rollout on a fresh cluster costs a few seconds).
	if out, err := c.run(ctx, "-n", botNS, "rollout", "restart", "deployment/kafka-bot"); err != nil {
		return fmt.Errorf("kubectl rollout restart: %v\n%s", err, out)
	}
	if out, err := c.run(ctx, "-n", botNS, "rollout", "status", "deployment/kafka-bot", "--timeout=180s"); err != nil {
		return fmt.Errorf("the bot did not become available: %v\n%s", err, out)
	}
	// Both replicas connected to Slack over Socket Mode.
	return waitFor(ctx, 60*time.Second, func() (bool, error) { return c.emu.OpenConnections() >= 2, nil })
}

// run runs kubectl as the admin.
func (c *cluster) run(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, c.kubectl, args...).CombinedOutput()
	return string(out), err
}

// dumpBot prints the bot pods' state and logs, for a failed run.
func (c *cluster) dumpBot() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, args := range [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"-n", botNS, "describe", "pods"},
		{"-n", botNS, "logs", "-l", "app.kubernetes.io/name=kafkabot", "--tail=200", "--prefix"},
		{"-n", kafkaNS, "get", "events", "--sort-by=.lastTimestamp"},
	} {
		out, _ := c.run(ctx, args...)
		fmt.Fprintf(os.Stderr, "--- kubectl %s\n%s\n", strings.Join(args, " "), out)
	}
}

// waitFor polls cond every 200 ms until it is true, fails, or timeout.
func waitFor(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %v", timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
