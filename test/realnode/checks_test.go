// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// checkDebugPod checks the debug pod as the API server admitted it: the
// broker's image by its manifest digest, locked down, on the broker's node,
// on the broker's claim.
func checkDebugPod(t *testing.T, p *corev1.Pod, broker *corev1.Pod, claim, digest string) {
	t.Helper()
	c := p.Spec.Containers[0]
	if !strings.HasSuffix(c.Image, "@"+digest) {
		t.Errorf("the debug pod runs %s, want the broker's image by digest %s", c.Image, digest)
	}
	if p.Spec.NodeName != "" && p.Spec.NodeName != broker.Spec.NodeName {
		t.Errorf("the debug pod ran on %s, the broker on %s", p.Spec.NodeName, broker.Spec.NodeName)
	}
	if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
		t.Error("the debug pod mounts a ServiceAccount token")
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil ||
		!slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("the debug container is not locked down: %+v", sc)
	}
	claims := 0
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			claims++
		}
	}
	if claims != 1 {
		t.Errorf("the debug pod mounts the broker's claim %d times", claims)
	}
}

// kafkaStatus is the status of the broker pod's Kafka container.
func kafkaStatus(t *testing.T, p *corev1.Pod) corev1.ContainerStatus {
	t.Helper()
	c, ok := kafkaStatusOf(p)
	if !ok {
		t.Fatalf("%s has no Kafka container status", p.Name)
	}
	return c
}

func kafkaStatusOf(p *corev1.Pod) (corev1.ContainerStatus, bool) {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == kube.KafkaContainerName(p) {
			return c, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// checkEvents checks the Events the bot recorded on the broker pod.
func checkEvents(t *testing.T, pod string) {
	t.Helper()
	list, err := env.admin.CoreV1().Events(kafkaNS).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range list.Items {
		if e.ReportingController == kube.EventComponent || e.Source.Component == kube.EventComponent {
			reasons = append(reasons, e.Reason)
		}
	}
	if len(reasons) == 0 {
		t.Errorf("the bot recorded no Event on %s", pod)
	}
	t.Logf("the bot's Events on %s: %v", pod, reasons)
}

// checkNoSecrets scans the bot's logs and the Events for the Slack tokens and
// the approval secret.
func checkNoSecrets(t *testing.T) {
	t.Helper()
	logs, err := env.run(context.Background(), "-n", botNS, "logs", "-l", "app.kubernetes.io/name=kafkabot", "--tail=-1")
	if err != nil {
		t.Fatalf("reading the bot's logs: %v", err)
	}
	events, err := env.run(context.Background(), "-n", kafkaNS, "get", "events", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"the bot's logs": logs, "the Events": events} {
		for name, secret := range map[string]string{"the app token": slackemu.DefaultAppToken, "the bot token": slackemu.DefaultBotToken, "the approval secret": approvalSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contain %s", what, name)
			}
		}
	}
}

// listDebugPods lists the bot's debug pods in the Kafka namespace.
func listDebugPods(t *testing.T) []string {
	t.Helper()
	list, err := env.admin.CoreV1().Pods(kafkaNS).List(context.Background(), metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedByBot})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}

// ---- a pod watch that timestamps what the test needs -------------------------

type podRecord struct {
	pod      *corev1.Pod // as first seen
	added    time.Time
	finished time.Time // first container termination seen
	// firstExit is the earliest container finishedAt the kubelet reported
	// (current or last termination state), 1 s resolution.
	firstExit time.Time
	ready     time.Time
	deleted   time.Time // deletionTimestamp or DELETED first seen
	// goValues is every value the debug pod's go annotation took, in the
	// order the watch saw them: the go signals the script could read,
	// complete even where the thread's checklist shows only the latest.
	// goSeen is when the watch saw each.
	goValues []string
	goSeen   []time.Time
	// runs are the Kafka container's runs the kubelet reported (its
	// current and last state), by start (Unix seconds: the kubelet's
	// times have 1 s resolution).
	runs map[int64]brokerRun
}

type podWatch struct {
	mu   sync.Mutex
	pods map[types.UID]*podRecord
}

func watchPods(t *testing.T) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := env.admin.CoreV1().Pods(kafkaNS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pw := &podWatch{pods: map[types.UID]*podRecord{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			now := time.Now()
			pw.mu.Lock()
			r := pw.pods[p.UID]
			if r == nil {
				r = &podRecord{pod: p.DeepCopy(), added: now, runs: map[int64]brokerRun{}}
				pw.pods[p.UID] = r
			}
			if c, ok := kafkaStatusOf(p); ok {
				r.addRuns(c)
			}
			for _, st := range p.Status.ContainerStatuses {
				if st.State.Terminated != nil && r.finished.IsZero() {
					r.finished = now
				}
				for _, term := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
					if term != nil && (r.firstExit.IsZero() || term.FinishedAt.Time.Before(r.firstExit)) {
						r.firstExit = term.FinishedAt.Time
					}
				}
			}
			if kube.PodReady(p) && r.ready.IsZero() {
				r.ready = now
			}
			if v := p.Annotations[recovery.AnnotationGo]; v != "" && (len(r.goValues) == 0 || r.goValues[len(r.goValues)-1] != v) {
				r.goValues = append(r.goValues, v)
				r.goSeen = append(r.goSeen, now)
			}
			if (ev.Type == watch.Deleted || p.DeletionTimestamp != nil) && r.deleted.IsZero() {
				r.deleted = now
			}
			pw.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return pw
}

// addRuns records the runs a container status reports: the one running
// now, and the ones that ended (current and last termination state).
func (r *podRecord) addRuns(c corev1.ContainerStatus) {
	if run := c.State.Running; run != nil {
		if _, ok := r.runs[run.StartedAt.Unix()]; !ok {
			r.runs[run.StartedAt.Unix()] = brokerRun{start: run.StartedAt.Time}
		}
	}
	for _, term := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
		if term != nil && !term.StartedAt.IsZero() {
			r.runs[term.StartedAt.Unix()] = brokerRun{start: term.StartedAt.Time, end: term.FinishedAt.Time}
		}
	}
}

// kafkaRuns are the Kafka container's runs in the pod (name, uid) as the
// watch saw them, by start.
func (pw *podWatch) kafkaRuns(name string, uid types.UID) []brokerRun {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	r := pw.pods[uid]
	if r == nil || r.pod.Name != name {
		return nil
	}
	var out []brokerRun
	for _, run := range r.runs {
		out = append(out, run)
	}
	slices.SortFunc(out, func(a, b brokerRun) int { return a.start.Compare(b.start) })
	return out
}

// debugPods returns the records of the bot's debug pods for broker.
func (pw *podWatch) debugPods(broker string) []podRecord {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	var out []podRecord
	for _, r := range pw.pods {
		if r.pod.Labels[kube.LabelManagedBy] == kube.ManagedByBot && r.pod.Name == recovery.DebugPodName(broker) {
			c := *r
			c.goValues = slices.Clone(r.goValues)
			c.goSeen = slices.Clone(r.goSeen)
			c.runs = nil
			out = append(out, c)
		}
	}
	return out
}

func (pw *podWatch) readyAt(name string, uid types.UID) time.Time {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if r := pw.pods[uid]; r != nil && r.pod.Name == name {
		return r.ready
	}
	return time.Time{}
}

func (pw *podWatch) deletedAt(name string, uid types.UID) time.Time {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if r := pw.pods[uid]; r != nil && r.pod.Name == name {
		return r.deleted
	}
	return time.Time{}
}
