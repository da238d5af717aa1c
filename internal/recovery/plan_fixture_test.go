// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
)

// The fixture is the seed incident: a Bitnami KRaft cluster "foobar" in
// namespace kafka; broker foobar-kafka-broker-0 (node id 100) crash-loops
// on UnexpectedAppendOffsetException; broker-1 and controller-0 are Ready.

const (
	testNS       = "kafka"
	brokerName   = "foobar-kafka-broker-0"
	brokerUID    = "uid-broker-0"
	newBrokerUID = "uid-broker-0-new"
	testApproval = "appr-0001"
	kafkaImage   = "docker.io/bitnami/kafka:3.5.1-debian-11-r1"
	kafkaDigest  = "docker.io/bitnami/kafka@sha256:4f0a2c4d1e6b8a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c"
)

var testStart = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// testRecordKey signs the repair Leases of the tests (APPROVAL_SECRET).
var testRecordKey = []byte("test-only-record-key-0123456789abcdef")

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading testdata: %v", err)
	}
	return string(b)
}

func offsetCrashLog(t testing.TB) string {
	return readTestdata(t, "34-kraft-metadata-log-unexpected-append-offset.log")
}

// bitnamiPod is a Kafka pod of the Bitnami chart's release "foobar".
func bitnamiPod(name, component, uid string) *corev1.Pod {
	sts := "foobar-kafka-broker"
	if component == "controller-eligible" {
		sts = "foobar-kafka-controller"
	}
	isController := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: testNS, UID: types.UID(uid),
			Labels: map[string]string{
				"app.kubernetes.io/name":      "kafka",
				"app.kubernetes.io/instance":  "foobar",
				"app.kubernetes.io/component": component,
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts, Controller: &isController}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-a",
			InitContainers: []corev1.Container{{
				Name: "kafka-init", Image: kafkaImage,
				Env: []corev1.EnvVar{{Name: "KAFKA_MIN_ID", Value: "100"}},
			}},
			Containers: []corev1.Container{{
				Name: "kafka", Image: kafkaImage,
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}},
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1001)), RunAsGroup: ptr.To(int64(1001)), FSGroup: ptr.To(int64(1001))},
		},
		Status: readyStatus(),
	}
}

func readyStatus() corev1.PodStatus {
	return corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "kafka", Ready: true, Image: kafkaImage, ImageID: kafkaDigest,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}},
	}
}

func crashLoopStatus() corev1.PodStatus {
	return corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "kafka", Image: kafkaImage, ImageID: kafkaDigest, RestartCount: 7,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container=kafka pod=" + brokerName + "_" + testNS + "(" + brokerUID + ")"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "Error", ExitCode: 1, StartedAt: metav1.NewTime(testStart.Add(-time.Minute)), FinishedAt: metav1.NewTime(testStart.Add(-50 * time.Second)),
			}},
		}},
	}
}

func pvc(name string, phase corev1.PersistentVolumeClaimPhase, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS},
		Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: modes},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: phase, AccessModes: modes},
	}
}

// cluster is the world a test starts from.
type cluster struct {
	broker, peer, controller *corev1.Pod
	claims                   []*corev1.PersistentVolumeClaim
	logs                     map[string]string
	extra                    []runtime.Object
	namespaces               []string
}

func seedCluster(t testing.TB) *cluster {
	broker := bitnamiPod(brokerName, "broker", brokerUID)
	broker.Status = crashLoopStatus()
	return &cluster{
		broker:     broker,
		peer:       bitnamiPod("foobar-kafka-broker-1", "broker", "uid-broker-1"),
		controller: bitnamiPod("foobar-kafka-controller-0", "controller-eligible", "uid-controller-0"),
		claims: []*corev1.PersistentVolumeClaim{
			pvc("data-"+brokerName, corev1.ClaimBound),
			pvc("data-foobar-kafka-broker-1", corev1.ClaimBound),
			pvc("data-foobar-kafka-controller-0", corev1.ClaimBound),
		},
		logs: map[string]string{brokerName: offsetCrashLog(t)},
	}
}

// kubeletPlan says how the simulated kubelet and StatefulSet behave.
type kubeletPlan struct {
	// debug: "succeed" or "fail" (after the go signal), "refuse-at-once"
	// (before it), or "hang" (stays Pending); debugLog is the debug pod's log.
	debug    string
	debugLog string
	// broker: what the recreated broker does: "ready", "crash" or "none".
	broker    string
	brokerLog string
}

func movedResult(status string) string {
	return fmt.Sprintf("kafkabot: log dir: /kafka-data/0/data (node id 100)\n"+
		"KAFKABOT_RESULT v=1 status=%s action=move-metadata-log reason= source=/kafka-data/0/data/__cluster_metadata-0 "+
		"destination=/kafka-data/0/kafkabot-backup-20261129T120000Z-appr-0001/data/__cluster_metadata-0 bytes=73400320 files=12\n", status)
}

const recoveredLog = `[2026-11-29 12:01:02,000] INFO [MetadataLog partition=__cluster_metadata-0, nodeId=100] Initialized snapshots with IDs [] from /bitnami/kafka/data/__cluster_metadata-0 (kafka.raft.KafkaMetadataLog$)
[2026-11-29 12:01:09,000] INFO [BrokerLifecycleManager id=100] The broker has caught up. Transitioning from STARTING to RECOVERY. (kafka.server.BrokerLifecycleManager)
[2026-11-29 12:01:10,000] INFO [BrokerLifecycleManager id=100] The broker has been unfenced. Transitioning from RECOVERY to RUNNING. (kafka.server.BrokerLifecycleManager)
`

// fakeLogs serves container logs: client-go's fake answers "fake logs".
type fakeLogs struct {
	mu    sync.Mutex
	byPod map[string]string
}

func (f *fakeLogs) set(pod, log string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byPod[pod] = log
}

func (f *fakeLogs) get(pod string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byPod[pod]
}

// ReadContainerLog implements kube.LogReader.
func (f *fakeLogs) ReadContainerLog(_ context.Context, _, pod, _ string, _ bool) (string, error) {
	return f.get(pod), nil
}

// testInspector reads pods through the real kube.Client and substitutes
// the log, which the fake clientset cannot serve.
type testInspector struct {
	kc   *kube.Client
	logs *fakeLogs
}

func (i testInspector) Snapshot(ctx context.Context, ns, pod string) (diagnose.Snapshot, error) {
	s, err := i.kc.Snapshot(ctx, ns, pod)
	s.Log = i.logs.get(pod)
	s.LogBytes = len(s.Log)
	return s, err
}

func (i testInspector) KafkaPods(ctx context.Context) ([]diagnose.Snapshot, error) {
	return i.kc.KafkaPods(ctx)
}

// harness is a Repairer on a fake cluster with a simulated kubelet.
type harness struct {
	t      testing.TB
	cs     *fake.Clientset
	kc     *kube.Client
	clock  *testclock.FakeClock
	logs   *fakeLogs
	r      *Repairer
	audit  *logging.Buffer
	plan   kubeletPlan
	mu     sync.Mutex
	debugs int
	// goSignals counts the go annotations set; onGo, when set, runs as the
	// go arrives (before the simulated script moves).
	goSignals int
	onGo      func()
	// goValues are the go annotations' values in order; ignoreGoes is how
	// many goes the simulated script still misses (the kubelet projects
	// them too late): the debug pod keeps running through them.
	goValues   []string
	ignoreGoes int
	// onDebugCreate, when set, runs as a debug pod is created.
	onDebugCreate func()
	// refreshes are the values of the broker's status-refresh annotation
	// the bot set, in order; onRefresh, when set, edits the patched broker
	// as its kubelet would (or refuses the patch with an error).
	refreshes []string
	onRefresh func(*corev1.Pod) error
	// finishAs, when set, edits a debug pod's finished status (a sidecar).
	finishAs func(*corev1.Pod)
	// dropLeaseAnswer, when set, names a Lease whose next update the fake
	// API server applies and then answers with a timeout (a lost answer).
	dropLeaseAnswer string
	// watches counts the watches the fake API server has established, by
	// field selector ("metadata.name=<pod>" for kube.WatchPod).
	watches map[string]int
}

var (
	podsGVR   = corev1.SchemeGroupVersion.WithResource("pods")
	leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")
)

func newHarness(t testing.TB, c *cluster, plan kubeletPlan) *harness {
	t.Helper()
	objs := []runtime.Object{c.broker}
	for _, p := range []*corev1.Pod{c.peer, c.controller} {
		if p != nil {
			objs = append(objs, p)
		}
	}
	for _, p := range c.claims {
		objs = append(objs, p)
	}
	objs = append(objs, c.extra...)
	h := &harness{
		t:     t,
		cs:    fake.NewClientset(objs...),
		clock: testclock.NewFakeClock(testStart),
		logs:  &fakeLogs{byPod: map[string]string{}},
		audit: &logging.Buffer{},
		plan:  plan,
	}
	for pod, log := range c.logs {
		h.logs.set(pod, log)
	}
	h.kc = kube.New(h.cs, kube.Options{Namespaces: c.namespaces})
	h.installReactors()
	h.r = NewRepairer(h.kc, diagnose.Default(), RepairOptions{
		Timeout: 5 * time.Minute, Clock: h.clock, Identity: "bot-a",
		Logger: slog.New(slog.NewJSONHandler(h.audit, nil)),
		Logs:   h.logs, Inspector: testInspector{kc: h.kc, logs: h.logs},
		RecordKey: testRecordKey,
	})
	return h
}

func (h *harness) tracker() k8stesting.ObjectTracker { return h.cs.Tracker() }

// watchesOf returns how many watches of the object called name (a field
// selector on metadata.name) the fake API server has established.
func (h *harness) watchesOf(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.watches["metadata.name="+name]
}

// waitForWatch waits until the fake API server has established a watch of
// the object called name. A test that deletes an object a repair watches
// must wait for it: to a watch started from a list's resourceVersion,
// client-go's fake tracker replays the objects added or changed since the
// list, but, unlike a real API server, not the deletes. A delete between
// the watch's list and its watch is lost, and the repair waits for it
// until its timeout, which a fake clock never reaches.
func (h *harness) waitForWatch(t *testing.T, name string) {
	t.Helper()
	waitUntil(t, "a watch of "+name, func() bool { return h.watchesOf(name) > 0 })
}

// installReactors simulates what the control plane and kubelet do: debug
// pods run to the planned end, a deleted broker is recreated with a new
// UID, and Leases get resourceVersions checked on update.
func (h *harness) installReactors() {
	// Watches as client-go's fake sets them up (the tracker's, from the
	// list's resourceVersion), counted once the tracker has registered them.
	h.cs.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := a.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := h.tracker().Watch(a.GetResource(), a.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		h.mu.Lock()
		if h.watches == nil {
			h.watches = map[string]int{}
		}
		h.watches[opts.FieldSelector]++
		h.mu.Unlock()
		return true, w, nil
	})
	h.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		if pod.Labels[kube.LabelManagedBy] != kube.ManagedByBot {
			return false, nil, nil
		}
		h.mu.Lock()
		h.debugs++
		pod.UID = types.UID(fmt.Sprintf("uid-debug-%d", h.debugs))
		h.mu.Unlock()
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
		if err := h.tracker().Create(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		created := pod.DeepCopy()
		h.mu.Lock()
		onCreate := h.onDebugCreate
		h.mu.Unlock()
		if onCreate != nil {
			onCreate()
		}
		switch h.plan.debug {
		case "refuse-at-once":
			// The script refused before waiting for its go.
			h.logs.set(pod.Name, h.plan.debugLog)
			finishDebugPod(pod, false)
		case "succeed", "fail":
			// The script runs its checks and waits for the go signal.
			runDebugPod(pod)
		}
		if h.plan.debug != "hang" {
			if err := h.tracker().Update(podsGVR, pod, pod.Namespace); err != nil {
				return true, nil, err
			}
		}
		return true, created, nil
	})
	// The go signal: a merge patch of the debug pod's annotations. With the
	// go, the simulated script moves and the pod finishes as planned.
	h.cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		var patch struct {
			Metadata struct {
				UID         types.UID         `json:"uid"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(pa.GetPatch(), &patch); err != nil {
			return true, nil, err
		}
		obj, err := h.tracker().Get(podsGVR, pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		if patch.Metadata.UID != "" && patch.Metadata.UID != pod.UID {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), pod.Name, fmt.Errorf("uid %s, stored %s", patch.Metadata.UID, pod.UID))
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		for k, v := range patch.Metadata.Annotations {
			pod.Annotations[k] = v
		}
		if v, ok := patch.Metadata.Annotations[AnnotationGo]; ok {
			h.mu.Lock()
			h.goValues = append(h.goValues, v)
			h.mu.Unlock()
		}
		if v, ok := patch.Metadata.Annotations[AnnotationStatusRefresh]; ok {
			h.mu.Lock()
			h.refreshes = append(h.refreshes, v)
			onRefresh := h.onRefresh
			h.mu.Unlock()
			if onRefresh != nil {
				if err := onRefresh(pod); err != nil {
					return true, nil, err
				}
			}
		}
		h.mu.Lock()
		missed := h.ignoreGoes > 0 && patch.Metadata.Annotations[AnnotationGo] != ""
		if missed {
			h.ignoreGoes--
		}
		h.mu.Unlock()
		if pod.Annotations[AnnotationGo] != "" && !missed && (h.plan.debug == "succeed" || h.plan.debug == "fail") {
			h.mu.Lock()
			h.goSignals++
			onGo := h.onGo
			h.mu.Unlock()
			if onGo != nil {
				onGo()
			}
			h.logs.set(pod.Name, h.plan.debugLog)
			finishDebugPod(pod, h.plan.debug == "succeed")
			h.mu.Lock()
			finishAs := h.finishAs
			h.mu.Unlock()
			if finishAs != nil {
				finishAs(pod)
			}
		}
		if err := h.tracker().Update(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		return true, pod, nil
	})
	h.cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName()
		if name != brokerName || h.plan.broker == "" || h.plan.broker == "none" {
			return false, nil, nil
		}
		if err := h.tracker().Delete(podsGVR, testNS, name); err != nil {
			return true, nil, err
		}
		pod := bitnamiPod(brokerName, "broker", newBrokerUID)
		switch h.plan.broker {
		case "crash":
			pod.Status = crashLoopStatus()
			pod.Status.ContainerStatuses[0].RestartCount = 1
		case "starting": // Kafka runs, recovering its logs, not Ready yet
			pod.Status = readyStatus()
			pod.Status.Conditions[0].Status = corev1.ConditionFalse
			pod.Status.ContainerStatuses[0].Ready = false
		}
		h.logs.set(brokerName, h.plan.brokerLog)
		return true, nil, h.tracker().Create(podsGVR, pod, testNS)
	})
	h.cs.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		lease := a.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		lease.ResourceVersion = "1"
		if err := h.tracker().Create(leasesGVR, lease, lease.Namespace); err != nil {
			return true, nil, err
		}
		return true, lease, nil
	})
	h.cs.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		lease := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		cur, err := h.tracker().Get(leasesGVR, lease.Namespace, lease.Name)
		if err != nil {
			return true, nil, err
		}
		curRV := cur.(*coordinationv1.Lease).ResourceVersion
		if lease.ResourceVersion != curRV {
			return true, nil, apierrors.NewConflict(leasesGVR.GroupResource(), lease.Name, fmt.Errorf("resourceVersion %s, stored %s", lease.ResourceVersion, curRV))
		}
		lease.ResourceVersion = bumpRV(curRV)
		if err := h.tracker().Update(leasesGVR, lease, lease.Namespace); err != nil {
			return true, nil, err
		}
		h.mu.Lock()
		drop := h.dropLeaseAnswer != "" && h.dropLeaseAnswer == lease.Name
		if drop {
			h.dropLeaseAnswer = ""
		}
		h.mu.Unlock()
		if drop {
			return true, nil, apierrors.NewTimeoutError("the answer was lost", 1)
		}
		return true, lease, nil
	})
}

func bumpRV(rv string) string {
	var n int
	fmt.Sscanf(rv, "%d", &n)
	return fmt.Sprint(n + 1)
}

// runDebugPod marks a debug pod's repair container running.
func runDebugPod(pod *corev1.Pod) {
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name:  DebugContainerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}}}
}

func finishDebugPod(pod *corev1.Pod, ok bool) {
	phase, code := corev1.PodSucceeded, int32(0)
	if !ok {
		phase, code = corev1.PodFailed, 2
	}
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name:  DebugContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Completed"}},
	}}}
}

// request is the approval of the seed finding.
func request() Request {
	return Request{
		ApprovalID: testApproval, Namespace: testNS, Pod: brokerName, PodUID: brokerUID,
		Rule: RuleMetadataLogOffsetMismatch, Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0",
		Requester: "U0REQUESTER", Approver: "U0APPROVER", Channel: "C0KAFKA", ThreadTS: "1764417600.000100",
		ExpiresAt: testStart.Add(time.Hour),
	}
}

// recorder is a Reporter that keeps everything.
type recorder struct {
	mu       sync.Mutex
	progress []Progress
	summary  *Summary
	channel  string
	threadTS string
}

func (r *recorder) Report(_ context.Context, p Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, p)
}

func (r *recorder) Finish(_ context.Context, s Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.summary = &s
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, p := range r.progress {
		fmt.Fprintf(&b, "%s | %s | %s\n", p.Status, p.Step, p.Detail)
	}
	return b.String()
}

func (r *recorder) startedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.progress)
}

// writes returns the cluster's write actions (verb resource/name), in order.
func (h *harness) writes() []string {
	var out []string
	for _, a := range h.cs.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			name := ""
			switch a := a.(type) {
			case k8stesting.CreateAction: // also matches updates (same methods)
				if m, err := metaName(a.GetObject()); err == nil {
					name = m
				}
			case k8stesting.DeleteAction:
				name = a.GetName()
			case k8stesting.PatchAction:
				name = a.GetName()
			}
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+name)
		}
	}
	return out
}

func metaName(obj runtime.Object) (string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", fmt.Errorf("%T has no metadata", obj)
	}
	return m.GetName(), nil
}

// lease reads the broker's repair Lease.
func (h *harness) lease() *coordinationv1.Lease {
	h.t.Helper()
	l, err := h.cs.CoordinationV1().Leases(testNS).Get(context.Background(), kube.RepairLeaseName(brokerName), metav1.GetOptions{})
	if err != nil {
		h.t.Fatalf("reading the repair lease: %v", err)
	}
	return l
}
