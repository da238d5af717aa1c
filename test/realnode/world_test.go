// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// volumeSpec is one data volume of a broker: its claim template, where the
// broker mounts it, and the log dir on it (relative to the volume root).
type volumeSpec struct {
	template, mountPath, logDir string
}

// layout says how a distribution lays out its volumes and labels its pods.
type layout struct {
	name    string
	volumes []volumeSpec
	// env adds distribution-specific variables to the broker.
	env func(nodeID string) []corev1.EnvVar
	// brokerSet and controllerSet name the StatefulSets of a cluster.
	brokerSet, controllerSet func(cluster string) string
	// brokerLabels and controllerLabels label a cluster's pods; selector
	// selects all of them.
	brokerLabels, controllerLabels func(cluster string) map[string]string
	selector                       func(cluster string) string
}

var bitnami = layout{
	name:    "bitnami",
	volumes: []volumeSpec{{template: "data", mountPath: "/bitnami/kafka", logDir: "data"}},
	env: func(nodeID string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "KAFKA_CFG_NODE_ID", Value: nodeID}, {Name: "KAFKA_CFG_LOG_DIRS", Value: "/bitnami/kafka/data"}}
	},
	brokerSet:     func(c string) string { return c + "-kafka-broker" },
	controllerSet: func(c string) string { return c + "-kafka-controller" },
	brokerLabels: func(c string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": c, "app.kubernetes.io/component": "broker"}
	},
	controllerLabels: func(c string) map[string]string {
		return map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": c, "app.kubernetes.io/component": "controller-eligible"}
	},
	selector: func(c string) string { return "app.kubernetes.io/instance=" + c },
}

// A scenario is one Kafka cluster (three controllers, one broker on local
// PersistentVolumes) in the kafka namespace, removed when the test ends.
type scenario struct {
	t       *testing.T
	cluster string // the Kafka cluster's name
	layout  layout
	nodeID  string
	broker  string // pod name
	// image is every node's image (default brokerImageName, the stand-in).
	image string
}

func newScenario(t *testing.T, name string, l layout, nodeID string) *scenario {
	t.Helper()
	s := &scenario{t: t, cluster: name, layout: l, nodeID: nodeID, broker: l.brokerSet(name) + "-0"}
	t.Cleanup(s.remove)
	return s
}

func (s *scenario) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	s.t.Cleanup(cancel)
	return ctx
}

// claim is the broker's PersistentVolumeClaim name for volume i.
func (s *scenario) claim(i int) string { return s.layout.volumes[i].template + "-" + s.broker }

// volume is volume i's directory on the node's disk.
func (s *scenario) volume(i int) string {
	return filepath.Join(env.stateDir, "volumes", s.cluster+"-"+s.layout.volumes[i].template)
}

// pvName is volume i's PersistentVolume.
func (s *scenario) pvName(i int) string {
	return "realnode-" + s.cluster + "-" + s.layout.volumes[i].template
}

// freshVolumes makes each of the broker's volumes an empty directory
// holding its empty log dir, owned by the broker's uid (the stand-in only
// locks the log dir), also when the tests run again on one cluster.
func (s *scenario) freshVolumes() {
	s.t.Helper()
	for i, v := range s.layout.volumes {
		root := s.volume(i)
		if err := os.RemoveAll(root); err != nil {
			s.t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, v.logDir), 0o755); err != nil {
			s.t.Fatal(err)
		}
		if err := chownTree(root); err != nil {
			s.t.Fatal(err)
		}
	}
}

// deploy creates the local PersistentVolume bound to the broker's claim,
// three Ready controllers and the broker StatefulSet.
func (s *scenario) deploy() {
	s.t.Helper()
	ctx := s.ctx()
	for i := range s.layout.volumes {
		s.createPV(ctx, i)
	}
	ctrl := s.statefulSet(s.layout.controllerSet(s.cluster), 3, s.layout.controllerLabels(s.cluster), "controller")
	if _, err := env.admin.AppsV1().StatefulSets(kafkaNS).Create(ctx, ctrl, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	brk := s.statefulSet(s.layout.brokerSet(s.cluster), 1, s.layout.brokerLabels(s.cluster), "broker")
	if _, err := env.admin.AppsV1().StatefulSets(kafkaNS).Create(ctx, brk, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	if err := waitFor(ctx, 2*time.Minute, func() (bool, error) {
		list, err := env.admin.CoreV1().Pods(kafkaNS).List(ctx, metav1.ListOptions{LabelSelector: s.layout.selector(s.cluster)})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if list.Items[i].Name != s.broker && kube.PodReady(&list.Items[i]) {
				ready++
			}
		}
		return ready == 3, nil
	}); err != nil {
		s.t.Fatalf("the controllers did not become Ready: %v", err)
	}
}

// createPV creates the local PersistentVolume of volume i, bound to its claim.
func (s *scenario) createPV(ctx context.Context, i int) {
	s.t.Helper()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: s.pvName(i)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              storageClass,
			ClaimRef:                      &corev1.ObjectReference{Namespace: kafkaNS, Name: s.claim(i)},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: s.volume(i)}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{env.nodeName}}},
			}}}},
		},
	}
	if _, err := env.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

// statefulSet is a Bitnami-like StatefulSet of stand-in nodes: non-root
// (uid/gid/fsGroup 1001), seccomp RuntimeDefault, read-only root, all
// capabilities dropped (the restricted Pod Security Standard).
func (s *scenario) statefulSet(name string, replicas int32, labels map[string]string, roles string) *appsv1.StatefulSet {
	vars := []corev1.EnvVar{{Name: "KAFKA_CFG_PROCESS_ROLES", Value: roles}}
	if roles == "broker" {
		vars = append(vars, s.layout.env(s.nodeID)...)
	}
	c := corev1.Container{
		Name:            "kafka",
		Image:           cmp.Or(s.image, brokerImageName),
		ImagePullPolicy: corev1.PullNever,
		Env:             vars,
		Ports:           []corev1.ContainerPort{{Name: "kafka", ContainerPort: 9092}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9092)}},
			PeriodSeconds: 1, FailureThreshold: 3,
		},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         name + "-headless",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsUser: ptr.To[int64](kafkaUID), RunAsGroup: ptr.To[int64](kafkaUID), FSGroup: ptr.To[int64](kafkaUID),
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{c},
				},
			},
		},
	}
	if roles != "broker" {
		return sts
	}
	for _, v := range s.layout.volumes {
		sts.Spec.Template.Spec.Containers[0].VolumeMounts = append(sts.Spec.Template.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: v.template, MountPath: v.mountPath})
		sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: v.template},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(storageClass),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
	}
	return sts
}

// remove deletes the scenario's StatefulSets, claim and volume.
func (s *scenario) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, sts := range []string{s.layout.brokerSet(s.cluster), s.layout.controllerSet(s.cluster)} {
		_ = env.admin.AppsV1().StatefulSets(kafkaNS).Delete(ctx, sts, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	}
	_ = waitFor(ctx, 90*time.Second, func() (bool, error) {
		list, err := env.admin.CoreV1().Pods(kafkaNS).List(ctx, metav1.ListOptions{LabelSelector: s.layout.selector(s.cluster)})
		return err == nil && len(list.Items) == 0, nil
	})
	for i := range s.layout.volumes {
		_ = env.admin.CoreV1().PersistentVolumeClaims(kafkaNS).Delete(ctx, s.claim(i), metav1.DeleteOptions{})
		_ = env.admin.CoreV1().PersistentVolumes().Delete(ctx, s.pvName(i), metav1.DeleteOptions{})
	}
}

// pod reads a pod as the admin.
func (s *scenario) pod(name string) (*corev1.Pod, error) {
	return env.admin.CoreV1().Pods(kafkaNS).Get(s.ctx(), name, metav1.GetOptions{})
}

// waitCrashLoop waits until the broker's container has been restarted at
// least restarts times and is stopped in its crash loop (the kubelet backs
// off its next start).
func (s *scenario) waitCrashLoop(restarts int32) *corev1.Pod {
	s.t.Helper()
	var pod *corev1.Pod
	if err := waitFor(s.ctx(), 4*time.Minute, func() (bool, error) {
		p, err := s.pod(s.broker)
		if err != nil {
			return false, nil
		}
		pod = p
		// A real kubelet shows a crash loop as Terminated for most of each
		// back-off and as waiting in CrashLoopBackOff only around its syncs:
		// the product's own definition (internal/diagnose) covers both.
		for i := range p.Status.ContainerStatuses {
			st := &p.Status.ContainerStatuses[i]
			cs := kube.ContainerStateOf(st)
			if _, looping := cs.CrashLoop(true); looping && st.RestartCount >= restarts {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		s.t.Fatalf("%s did not crash-loop: %v; status %+v", s.broker, err, pod)
	}
	return pod
}

// ---- Slack ---------------------------------------------------------------

// diagnose types `/kafka <text>` ("diagnose <namespace>/<pod>") and returns
// the bot's diagnosis message: the first new message of the channel that
// names the pod (scenarios on other clusters may post theirs meanwhile).
func diagnose(t *testing.T, text string) slackemu.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pod := text[strings.LastIndexAny(text, " /")+1:]
	before := len(env.emu.Messages(channel))
	id, err := env.emu.SendSlashCommand(ctx, slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := env.emu.WaitAck(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Late {
		t.Errorf("/kafka %s was acknowledged after Slack's deadline (%v)", text, ack.Latency)
	}
	var found slackemu.Message
	if err := env.emu.WaitFor(ctx, func() bool {
		msgs := env.emu.Messages(channel)
		for _, m := range msgs[min(before, len(msgs)):] {
			if strings.Contains(m.Text+"\n"+blocksText(m.Blocks), pod) {
				found = m
				return true
			}
		}
		return false
	}); err != nil {
		var shown []string
		for _, m := range env.emu.Ephemerals(channel, requester) {
			shown = append(shown, m.Text)
		}
		t.Fatalf("no diagnosis message for /kafka %s: %v; ephemeral replies: %q", text, err, shown)
	}
	return found
}

// click presses a button of m as user and waits for the ack.
func click(t *testing.T, m slackemu.Message, action, user string) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	at := time.Now()
	id, err := env.emu.SendClick(ctx, slackemu.Click{ChannelID: m.Channel, UserID: user, MessageTS: m.TS, ActionID: action})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.emu.WaitAck(ctx, id); err != nil {
		t.Fatal(err)
	}
	return at
}

// threadTexts returns each reply of m's thread as its text followed by
// every text of its blocks (the bot renders most of a reply in blocks).
func threadTexts(m slackemu.Message) []string {
	var out []string
	for _, r := range env.emu.Thread(m.Channel, m.TS) {
		out = append(out, r.Text+"\n"+blocksText(r.Blocks))
	}
	return out
}

// waitThread waits for a reply containing want in m's thread. An ephemeral
// reply to the approver (a refused click) ends the wait at once.
func waitThread(t *testing.T, m slackemu.Message, want string, timeout time.Duration) []string {
	t.Helper()
	return waitThreadFunc(t, m, strconv.Quote(want), func(s string) bool { return strings.Contains(s, want) }, timeout)
}

func waitThreadFunc(t *testing.T, m slackemu.Message, what string, match func(string) bool, timeout time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var th []string
	ephemerals := len(env.emu.Ephemerals(m.Channel, approver))
	if err := env.emu.WaitFor(ctx, func() bool {
		th = threadTexts(m)
		return len(env.emu.Ephemerals(m.Channel, approver)) > ephemerals || slices.ContainsFunc(th, match)
	}); err != nil {
		t.Fatalf("waiting for %s in the thread: %v; the thread so far:\n%s", what, err, strings.Join(th, "\n---\n"))
	}
	if e := env.emu.Ephemerals(m.Channel, approver); len(e) > ephemerals {
		t.Fatalf("the bot answered the approver privately instead: %q", e[len(e)-1].Text)
	}
	return th
}

// repairOutcome matches the repair's outcome line: "*Repair succeeded.*",
// "*Repair failed.*"…
var repairOutcome = regexp.MustCompile(`\*Repair [^*]+\.\*`)

// waitOutcome waits for the repair's outcome reply in m's thread and
// returns the thread and that reply (its text and block texts).
func waitOutcome(t *testing.T, m slackemu.Message, timeout time.Duration) ([]string, string, slackemu.Message) {
	t.Helper()
	waitThreadFunc(t, m, "the repair's outcome", repairOutcome.MatchString, timeout)
	for _, r := range env.emu.Thread(m.Channel, m.TS) {
		if text := r.Text + "\n" + blocksText(r.Blocks); repairOutcome.MatchString(text) {
			return threadTexts(m), text, r
		}
	}
	t.Fatal("the outcome reply vanished")
	return nil, "", slackemu.Message{}
}

// blockTexts concatenates every "text" string of a message's blocks.
func blockTexts(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	text, err := slackemu.BlocksText(raw)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// blocksText is blockTexts without a test: "" for blocks that are not JSON.
func blocksText(raw json.RawMessage) string {
	text, _ := slackemu.BlocksText(raw)
	return text
}

// actionIDs lists the action_ids of a message's buttons.
func actionIDs(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
		} `json:"elements"`
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
	}
	return out
}

// slackTime converts a message ts ("1503435956.000247") to a time.
func slackTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, _ := strconv.ParseInt(sec, 10, 64)
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}

// ---- API requests (the API server's audit log) ----------------------------

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
	} `json:"objectRef"`
	StageTimestamp time.Time `json:"stageTimestamp"`
	Stage          string    `json:"stage"`
}

// botRequests returns the bot's requests completed in [from, to], from the
// audit log (hack/realnode.sh logs only the bot's ServiceAccount). Long
// watches are counted when they end, so they are left out by stage.
func botRequests(t *testing.T, from, to time.Time) []auditEvent {
	t.Helper()
	f, err := os.Open(filepath.Join(env.stateDir, "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if e.Stage != "ResponseComplete" || e.User.Username != "system:serviceaccount:kafka-bot:kafka-bot" {
			continue
		}
		if e.StageTimestamp.Before(from) || e.StageTimestamp.After(to) {
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// summarize counts requests by verb and resource.
func summarize(events []auditEvent) string {
	counts := map[string]int{}
	for _, e := range events {
		k := e.Verb
		if e.ObjectRef != nil {
			k += " " + e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				k += "/" + e.ObjectRef.Subresource
			}
		}
		counts[k]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// measure prints one measurement line for docs/BENCHMARKS.md.
func measure(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("MEASURE %s: %.2fs", what, d.Seconds())
	fmt.Printf("MEASURE %s %s: %.2fs\n", t.Name(), what, d.Seconds())
}
