// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// crashLog is the tail of a broker that cannot replay its metadata log.
const crashLog = `[2024-05-02 10:15:01,101] INFO Loading producer state till offset 120 (kafka.log.UnifiedLog$)
[2024-05-02 10:15:01,202] ERROR Encountered fatal fault: Error replaying metadata log record (org.apache.kafka.server.fault.ProcessTerminatingFaultHandler)
org.apache.kafka.common.errors.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0. First offset 120 is less than the next offset 121.
[2024-05-02 10:15:01,303] INFO [BrokerServer id=0] Transition from STARTED to SHUTTING_DOWN (kafka.server.BrokerServer)
`

// world is one test's namespace, kubelet and clients.
type world struct {
	env     *testenv.Env
	ns      string
	kubelet *kubesim.Kubelet
	bot     kubernetes.Interface
}

func newWorld(t *testing.T, ns string) *world {
	t.Helper()
	env := testenv.Start(t)
	w := &world{env: env, ns: env.KafkaNamespace(t, ns, nil)}
	var err error
	if w.bot, err = kubernetes.NewForConfig(env.BotConfig()); err != nil {
		t.Fatal(err)
	}
	w.kubelet, err = kubesim.New(env.Clientset, kubesim.Options{
		NodeName:        "node-" + ns,
		Namespaces:      []string{w.ns},
		ServeKubeletAPI: true,
		WorkDir:         t.TempDir(),
		Logf:            t.Logf,
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

// brokerPod is a broker as its StatefulSet would create it, not yet
// scheduled: kubesim binds it.
func brokerPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/component": "broker"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kafka-broker",
				UID: "00000000-0000-0000-0000-000000000001", Controller: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "kafka", Image: "bitnami/kafka:3.7.0"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name},
			}}},
		},
	}
}

func (w *world) createBroker(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	pod, err := w.env.Clientset.CoreV1().Pods(w.ns).Create(t.Context(), brokerPod(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.waitForPod(t, name, "bound to the node", func(p *corev1.Pod) bool { return p.Spec.NodeName == w.kubelet.NodeName() })
	return pod
}

// waitForPod waits until pod name exists and satisfies ok.
func (w *world) waitForPod(t *testing.T, name, what string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	testenv.WaitFor(t, "pod "+name+" "+what, func(ctx context.Context) (bool, error) {
		p, err := w.env.Clientset.CoreV1().Pods(w.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got = p
		return ok(p), nil
	})
	return got
}

// TestLogsGoThroughTheAPIServer reads pods/log as the bot, through the
// real API server, and checks that the request reached the stand-in's
// kubelet API with the client's parameters and that the answer is the
// stored log cut as a kubelet cuts it.
func TestLogsGoThroughTheAPIServer(t *testing.T) {
	w := newWorld(t, "kafka-logs")
	w.createBroker(t, "broker-0")
	if err := w.kubelet.CrashLoop(t.Context(), w.ns, "broker-0", crashLog); err != nil {
		t.Fatal(err)
	}
	w.kubelet.SetLog(w.ns, "broker-0", "kafka", false, "current instance\n")

	tests := []struct {
		name       string
		opts       corev1.PodLogOptions
		want       string
		wantTail   *int64
		wantLimit  *int64
		wantPrevio bool
	}{
		{"previous, whole", corev1.PodLogOptions{Container: "kafka", Previous: true}, crashLog, nil, nil, true},
		{"previous, last 2 lines", corev1.PodLogOptions{Container: "kafka", Previous: true, TailLines: ptr.To[int64](2)},
			kubesim.Window(crashLog, 2, -1), ptr.To[int64](2), nil, true},
		{"previous, 2000 lines and 256 KiB as the bot reads", corev1.PodLogOptions{Container: "kafka", Previous: true, TailLines: ptr.To[int64](2000), LimitBytes: ptr.To[int64](256 << 10)},
			crashLog, ptr.To[int64](2000), ptr.To[int64](256 << 10), true},
		{"previous, tail cut by limitBytes", corev1.PodLogOptions{Container: "kafka", Previous: true, TailLines: ptr.To[int64](3), LimitBytes: ptr.To[int64](40)},
			kubesim.Window(crashLog, 3, 40), ptr.To[int64](3), ptr.To[int64](40), true},
		{"current instance", corev1.PodLogOptions{Container: "kafka"}, "current instance\n", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(w.kubelet.LogRequests())
			body, err := w.bot.CoreV1().Pods(w.ns).GetLogs("broker-0", &tt.opts).Stream(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(body)
			body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("log = %q, want %q", got, tt.want)
			}
			reqs := w.kubelet.LogRequests()
			if len(reqs) != before+1 {
				t.Fatalf("kubelet API got %d requests, want 1", len(reqs)-before)
			}
			r := reqs[len(reqs)-1]
			if r.Namespace != w.ns || r.Pod != "broker-0" || r.Container != "kafka" || r.Previous != tt.wantPrevio {
				t.Errorf("kubelet saw %s/%s/%s previous=%v", r.Namespace, r.Pod, r.Container, r.Previous)
			}
			if !equalPtr(r.TailLines, tt.wantTail) || !equalPtr(r.LimitBytes, tt.wantLimit) {
				t.Errorf("kubelet saw tailLines=%v limitBytes=%v, want %v %v", deref(r.TailLines), deref(r.LimitBytes), deref(tt.wantTail), deref(tt.wantLimit))
			}
		})
	}

	t.Run("no previous instance", func(t *testing.T) {
		w.createBroker(t, "broker-1")
		_, err := w.bot.CoreV1().Pods(w.ns).GetLogs("broker-1", &corev1.PodLogOptions{Container: "kafka", Previous: true}).Stream(t.Context())
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "previous terminated container") {
			t.Errorf("want the kubelet's 400 for a missing previous log, got %v", err)
		}
	})
}

func equalPtr(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestScenarioStatuses drives a broker through CrashLoop and Ready and
// checks what the API server then holds.
func TestScenarioStatuses(t *testing.T) {
	w := newWorld(t, "kafka-status")
	w.createBroker(t, "broker-0")
	ctx := t.Context()

	if err := w.kubelet.CrashLoop(ctx, w.ns, "broker-0", crashLog); err != nil {
		t.Fatal(err)
	}
	p, err := w.bot.CoreV1().Pods(w.ns).Get(ctx, "broker-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Status.ContainerStatuses
	switch {
	case p.Status.Phase != corev1.PodRunning:
		t.Errorf("phase = %s, want Running", p.Status.Phase)
	case len(st) != 1 || st[0].State.Waiting == nil || st[0].State.Waiting.Reason != "CrashLoopBackOff":
		t.Errorf("container state = %+v, want waiting in CrashLoopBackOff", st)
	case st[0].LastTerminationState.Terminated == nil || st[0].LastTerminationState.Terminated.ExitCode != 1:
		t.Errorf("last state = %+v, want terminated with exit code 1", st[0].LastTerminationState)
	case st[0].RestartCount != 5 || st[0].Ready:
		t.Errorf("restarts=%d ready=%v, want 5 and not ready", st[0].RestartCount, st[0].Ready)
	case !strings.Contains(st[0].ImageID, "@sha256:"):
		t.Errorf("imageID %q is not pinned by digest", st[0].ImageID)
	}

	if err := w.kubelet.CrashLoop(ctx, w.ns, "broker-0", crashLog); err != nil {
		t.Fatal(err)
	}
	if err := w.kubelet.Ready(ctx, w.ns, "broker-0"); err != nil {
		t.Fatal(err)
	}
	p, err = w.bot.CoreV1().Pods(w.ns).Get(ctx, "broker-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st = p.Status.ContainerStatuses
	if !podReady(p) || st[0].State.Running == nil || !st[0].Ready || st[0].RestartCount != 6 {
		t.Errorf("after Ready: conditions %+v, container %+v; want ready and running with 6 restarts", p.Status.Conditions, st)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestDeletedBrokerIsRecreated: the bot deletes a broker pod (graceful,
// as a restart does); the stand-in kubelet finishes the deletion and the
// stand-in StatefulSet controller recreates it with a new UID, which then
// does what the scenario says.
func TestDeletedBrokerIsRecreated(t *testing.T) {
	w := newWorld(t, "kafka-restart")
	ctx := t.Context()
	tests := []struct {
		name      string
		outcome   kubesim.RestartOutcome
		wantReady bool
	}{
		{"comes back ready", kubesim.RestartOutcome{}, true},
		{"crashes again", kubesim.RestartOutcome{CrashLog: "still broken\n"}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "kafka-broker-" + string(rune('0'+i)) // a name the policy's default broker-pods pattern names
			old := w.createBroker(t, name)
			if err := w.kubelet.CrashLoop(ctx, w.ns, name, crashLog); err != nil {
				t.Fatal(err)
			}
			w.kubelet.OnRestart(w.ns, name, tt.outcome)
			if err := w.bot.CoreV1().Pods(w.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			p := w.waitForPod(t, name, "recreated and started", func(p *corev1.Pod) bool {
				return p.UID != old.UID && len(p.Status.ContainerStatuses) == 1
			})
			if podReady(p) != tt.wantReady {
				t.Errorf("recreated pod ready = %v, want %v", podReady(p), tt.wantReady)
			}
			prev, err := w.bot.CoreV1().Pods(w.ns).GetLogs(name, &corev1.PodLogOptions{Container: "kafka", Previous: true}).DoRaw(ctx)
			switch {
			case tt.outcome.CrashLog != "" && (err != nil || string(prev) != tt.outcome.CrashLog):
				t.Errorf("previous log of the recreated pod = %q, %v; want %q", prev, err, tt.outcome.CrashLog)
			case tt.outcome.CrashLog == "" && !apierrors.IsBadRequest(err):
				t.Errorf("a fresh pod has no previous log; got %q, %v", prev, err)
			}
		})
	}
}

// debugPodFor builds a pod shaped like the bot's debug pod: pinned by node
// affinity, the claim under KB_MOUNT_ROOT/0, the script in sh -c.
func debugPodFor(node, claim, script string, deadline int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "kafkabot-repair-broker-0",
			Labels: map[string]string{kubesim.LabelManagedBy: kubesim.ManagedByBot},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:        &deadline,
			AutomountServiceAccountToken: ptr.To(false),
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
				}}},
			}},
			Volumes: []corev1.Volume{{Name: "claim-0", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
			Containers: []corev1.Container{{
				Name:    "repair",
				Image:   "bitnami/kafka:3.7.0",
				Command: []string{"sh", "-c", script},
				Env: []corev1.EnvVar{
					{Name: "KB_MOUNT_ROOT", Value: "/kafkabot"},
					{Name: "KB_TARGET", Value: "__cluster_metadata-0"},
					{Name: "KB_POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "claim-0", MountPath: "/kafkabot/0"}},
			}},
		},
	}
}

// moveScript moves the target out of the log dir, the way the repair does,
// and exercises the kubelet's $(VAR) expansion: $(KB_TARGET) is replaced
// before the shell runs, $$ becomes $.
const moveScript = `set -eu
echo "pod $KB_POD on $(hostname)"
dev_root=$(stat -c %d "$KB_MOUNT_ROOT/0")
dev_src=$(stat -c %d "$KB_MOUNT_ROOT/0/data")
[ "$dev_root" = "$dev_src" ] || { echo "claim is not one filesystem"; exit 4; }
[ ! -L "$KB_MOUNT_ROOT/0" ] || { echo "mount is a symlink"; exit 5; }
mkdir "$KB_MOUNT_ROOT/0/kafkabot-backup-1"
mv "$KB_MOUNT_ROOT/0/data/$(KB_TARGET)" "$KB_MOUNT_ROOT/0/kafkabot-backup-1/"
echo 'KAFKABOT_RESULT moved $$(KB_TARGET)'

`

// TestDebugPodRuns: the bot creates a debug pod; the stand-in schedules
// it, runs its script under busybox against the claim's host directory,
// and reports its exit code and output through the API server.
func TestDebugPodRuns(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		deadline   int64
		wantPhase  corev1.PodPhase
		wantExit   int32
		wantReason string
		wantLog    string
		wantMoved  bool
	}{
		{"moves the metadata log", moveScript, 60, corev1.PodSucceeded, 0, "",
			"KAFKABOT_RESULT moved $(KB_TARGET)\n", true},
		{"reports a failure", "echo refusing: wrong node.id >&2; exit 3", 60, corev1.PodFailed, 3, "", "refusing: wrong node.id\n", false},
		{"is killed at its deadline", "echo started; sleep 30", 1, corev1.PodFailed, 137, "DeadlineExceeded", "started\n", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "kafka-debug-"+string(rune('a'+i)))
			ctx := t.Context()
			vol := filepath.Join(t.TempDir(), "pv-data-broker-0")
			writeFile(t, filepath.Join(vol, "data", "__cluster_metadata-0", "00000000000000000000.log"), "records")
			writeFile(t, filepath.Join(vol, "data", "meta.properties"), "node.id=0\n")
			if _, err := w.kubelet.ProvisionClaim(ctx, w.ns, "data-broker-0", vol, "1Gi"); err != nil {
				t.Fatal(err)
			}
			pod := debugPodFor(w.kubelet.NodeName(), "data-broker-0", tt.script, tt.deadline)
			// Created as the admin: these scripts are the stand-in's test
			// scripts, which deploy/'s admission policy refuses from the bot
			// (only the embedded repair script passes; test/integration
			// checks that).
			if _, err := w.env.Clientset.CoreV1().Pods(w.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			p := w.waitForPod(t, pod.Name, "finished", func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			})
			if p.Status.Phase != tt.wantPhase || p.Status.Reason != tt.wantReason {
				t.Errorf("phase %s reason %q, want %s %q", p.Status.Phase, p.Status.Reason, tt.wantPhase, tt.wantReason)
			}
			if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != tt.wantExit {
				t.Errorf("container state %+v, want terminated with exit code %d", p.Status.ContainerStatuses[0].State, tt.wantExit)
			}
			out, err := w.bot.CoreV1().Pods(w.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "repair"}).DoRaw(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(out), tt.wantLog) {
				t.Errorf("debug pod log = %q, want it to end with %q", out, tt.wantLog)
			}
			_, errMoved := os.Stat(filepath.Join(vol, "kafkabot-backup-1", "__cluster_metadata-0", "00000000000000000000.log"))
			_, errLeft := os.Stat(filepath.Join(vol, "data", "__cluster_metadata-0"))
			if moved := errMoved == nil && errLeft != nil; moved != tt.wantMoved {
				t.Errorf("metadata log moved = %v, want %v (log: %s)", moved, tt.wantMoved, out)
			}
			if _, err := os.Stat(filepath.Join(vol, "data", "meta.properties")); err != nil {
				t.Errorf("the claim's directory is not back in place after the run: %v", err)
			}
			if err := w.env.Clientset.CoreV1().Pods(w.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting the finished debug pod: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeletingARunningDebugPodStopsIt: the bot gives up on a debug pod
// (graceful delete); the stand-in kills its process, puts the claim back
// and completes the deletion.
func TestDeletingARunningDebugPodStopsIt(t *testing.T) {
	w := newWorld(t, "kafka-debug-delete")
	ctx := t.Context()
	vol := filepath.Join(t.TempDir(), "pv")
	writeFile(t, filepath.Join(vol, "data", "meta.properties"), "node.id=0\n")
	if _, err := w.kubelet.ProvisionClaim(ctx, w.ns, "data-broker-0", vol, "1Gi"); err != nil {
		t.Fatal(err)
	}
	pod := debugPodFor(w.kubelet.NodeName(), "data-broker-0", "echo waiting; sleep 60", 120)
	created, err := w.env.Clientset.CoreV1().Pods(w.ns).Create(ctx, pod, metav1.CreateOptions{}) // as the admin: see TestDebugPodRuns
	if err != nil {
		t.Fatal(err)
	}
	w.waitForPod(t, pod.Name, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if err := w.env.Clientset.CoreV1().Pods(w.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &created.UID}}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the debug pod to be gone", func(ctx context.Context) (bool, error) {
		_, err := w.bot.CoreV1().Pods(w.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := os.Stat(filepath.Join(vol, "data", "meta.properties")); err != nil {
		t.Errorf("the claim's directory is not back in place: %v", err)
	}
}
