// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"fmt"
	"github.com/kafka-chatops/kafkabot/internal/alert"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
	"github.com/kafka-chatops/kafkabot/internal/testkit/benchutil"
)

// Shape of the sweep clusters: 60 Kafka pods (3 clusters of 20 in 3
// namespaces, 3 brokers crash-looping), the rest spread over 50 namespaces.
const (
	sweepKafkaPods  = 60
	sweepClusters   = 3
	sweepNamespaces = 50
	sweepCrashing   = 3
)

// sweepPoint is the cost of sweeping one cluster size.
type sweepPoint struct {
	pods             int
	requestsPerSweep float64
	cpuPerSweep      time.Duration
	wallPerSweep     time.Duration
	cacheHeap        int64
	syncTook         time.Duration
}

// runSweep measures the sweep at each cluster size.
func runSweep(sizes []int, sweeps int) (section, error) {
	title := "3. Sweep cost"
	var points []sweepPoint
	for _, n := range sizes {
		p, err := sweepAt(n, sweeps)
		if err != nil {
			return section{}, fmt.Errorf("sweep of %d pods: %w", n, err)
		}
		points = append(points, p)
		runtime.GC()
	}
	var rows []row
	var d strings.Builder
	fmt.Fprintf(&d, "`sweep.New` + `Run` (the real sweeper: informers on the built-in Kafka selectors cluster-wide, no KAFKA_NAMESPACES), "+
		"then `SweepNow` %d times after a warm-up sweep that diagnoses and alerts the %d crash-looping brokers once. "+
		"Each cluster has %d Kafka pods among N pods; every other pod carries a last-applied annotation, managedFields and env "+
		"like real pods. Requests are those the bot's clientset served during the measured sweeps; CPU is the process's "+
		"user+system time (getrusage) over them; the cache heap is `runtime.ReadMemStats` HeapAlloc after GC with a synced "+
		"`kube.PodInformer` (the cache the sweep reads) minus the same once it is stopped and dropped.\n\n",
		sweeps, sweepCrashing, sweepKafkaPods)
	fmt.Fprintln(&d, "| Pods | API requests / sweep | CPU / sweep | Wall / sweep | Informer cache heap | Initial sync |")
	fmt.Fprintln(&d, "|---|---|---|---|---|---|")
	for _, p := range points {
		fmt.Fprintf(&d, "| %d | %.2f | %s | %s | %s | %s |\n", p.pods, p.requestsPerSweep, usec(p.cpuPerSweep), usec(p.wallPerSweep),
			kib(p.cacheHeap), ms(p.syncTook))
		rows = append(rows,
			row{title, fmt.Sprintf("API requests per sweep after warm-up, %d pods", p.pods), fmt.Sprintf("%.2f", p.requestsPerSweep), "0", verdict(p.requestsPerSweep == 0)},
			row{title, fmt.Sprintf("CPU per sweep / informer cache heap, %d pods", p.pods), usec(p.cpuPerSweep) + " / " + kib(p.cacheHeap), "", ""})
	}
	if len(points) > 1 {
		first, last := points[0], points[len(points)-1]
		fmt.Fprintf(&d, "\nFrom %d to %d pods (×%.0f) the CPU per sweep changes ×%.2f and the measured cache heap ×%.2f, while the "+
			"initial sync grows with the cluster. At every size the informers cache exactly the %d Kafka pods: they list and "+
			"watch only what the Kafka selectors match, and the transform strips what the sweep never reads, so a sweep (a read "+
			"of the cache) costs the same on a big cluster. The initial list is what grows with N (the fake API server reads "+
			"every pod and filters labels; a real one does the same work in the apiserver). Where the measured heap grows with "+
			"N, a heap profile (BENCHREPORT_HEAPPROF=file, taken with the informer synced) attributes most of the growth to "+
			"client-go's fake API server, not to the cache: each open all-namespace watch of the fake keeps a slice over every "+
			"pod in scope (k8s.io/client-go/testing filterByNamespace, about 4 MB at 50,000 pods). On a real cluster that state "+
			"lives in the API server.\n",
			first.pods, last.pods, float64(last.pods)/float64(first.pods),
			float64(last.cpuPerSweep)/float64(max(first.cpuPerSweep, 1)), float64(last.cacheHeap)/float64(max(first.cacheHeap, 1)), sweepKafkaPods)
	}
	return section{Title: title, Rows: rows, Detail: d.String()}, nil
}

func usec(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func kib(b int64) string { return fmt.Sprintf("%.0f KiB", float64(b)/1024) }

func sweepAt(n, sweeps int) (sweepPoint, error) {
	tracker := k8stesting.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder())
	now := time.Now()
	for i := range sweepKafkaPods {
		c := i % sweepClusters
		p := kafkaPod(fmt.Sprintf("kafka-%d-broker-%d", c, i/sweepClusters), "broker", "broker", fmt.Sprint(100+i))
		p.Namespace = fmt.Sprintf("kafka-%d", c)
		p.UID = types.UID("uid-" + p.Namespace + "-" + p.Name)
		p.Spec.NodeName = nodeName
		if i < sweepCrashing {
			if err := setCrashLooping(p, now); err != nil {
				return sweepPoint{}, err
			}
		} else {
			setReady(p, now)
		}
		if err := tracker.Add(p); err != nil {
			return sweepPoint{}, err
		}
	}
	for i := range n - sweepKafkaPods {
		if err := tracker.Add(bulkPod(i)); err != nil {
			return sweepPoint{}, err
		}
	}
	view := benchutil.NewView(tracker, benchutil.ViewOptions{Logs: benchutil.TextLogs(seedLog)})
	client := kube.New(view, kube.Options{})

	// The informer cache alone, for its heap.
	heap, syncTook, err := informerHeap(client)
	if err != nil {
		return sweepPoint{}, err
	}

	// The sweeper, for requests and CPU per sweep.
	notes := &countingNotifier{}
	s, err := sweep.New(sweep.Options{
		Client: client, Engine: diagnose.Default(), Notifier: notes, StateNamespace: "kafkabot",
		Identity: "benchreport", Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return sweepPoint{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(waitLimit)
	for !s.Leading() {
		if time.Now().After(deadline) {
			return sweepPoint{}, fmt.Errorf("the sweeper never led")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.SweepNow(ctx); err != nil {
		return sweepPoint{}, fmt.Errorf("warm-up sweep: %w", err)
	}
	if notes.alerts.Load() == 0 {
		return sweepPoint{}, fmt.Errorf("the warm-up sweep alerted nothing; %d brokers crash-loop", sweepCrashing)
	}
	view.Reset()
	cpu0 := cpuTime()
	wall0 := time.Now()
	for range sweeps {
		if err := s.SweepNow(ctx); err != nil {
			return sweepPoint{}, err
		}
	}
	wall := time.Since(wall0)
	cpu := cpuTime() - cpu0
	return sweepPoint{
		pods: n, requestsPerSweep: float64(view.Stats().Requests) / float64(sweeps),
		cpuPerSweep: cpu / time.Duration(sweeps), wallPerSweep: wall / time.Duration(sweeps),
		cacheHeap: heap, syncTook: syncTook,
	}, nil
}

// informerHeap syncs a kube.PodInformer on client's cluster and returns
// the live heap it holds: the heap (after GC) with the synced informer
// alive minus the heap once it is stopped and dropped, which leaves out
// the garbage of the initial list and the world's own objects. With
// BENCHREPORT_HEAPPROF set it also writes a heap profile there while the
// informer is synced, to attribute what the number holds.
func informerHeap(client *kube.Client) (int64, time.Duration, error) {
	inf, err := client.NewPodInformer(kube.PodInformerOptions{})
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	inf.Start(ctx)
	if err := inf.WaitForCacheSync(ctx); err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	if got := len(inf.List()); got != sweepKafkaPods {
		return 0, 0, fmt.Errorf("the informer cached %d Kafka pods, want %d", got, sweepKafkaPods)
	}
	with := heapAlloc()
	if path := os.Getenv("BENCHREPORT_HEAPPROF"); path != "" {
		if err := writeHeapProfile(path); err != nil {
			return 0, 0, err
		}
	}
	runtime.KeepAlive(inf)
	inf = nil
	cancel()
	time.Sleep(100 * time.Millisecond) // the informers' goroutines return
	without := heapAlloc()
	return int64(with) - int64(without), took, nil
}

// bulkPod is an ordinary workload pod, shaped like real ones: the fields
// the sweep never reads are what make a full cache expensive.
func bulkPod(i int) *corev1.Pod {
	ns := fmt.Sprintf("team-%d", i%sweepNamespaces)
	name := fmt.Sprintf("web-%d", i)
	env := make([]corev1.EnvVar, 10)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", j), Value: strings.Repeat("v", 32)}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name),
			Labels: map[string]string{"app": fmt.Sprintf("web-%d", i%200), "pod-template-hash": "7d4b9c8f6"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1000),
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				Subresource: "status", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:status":{` + strings.Repeat(`"f:z":{},`, 40) + `"f:w":{}}}`)}},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", i%40),
			Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/web:1.2.3", Env: env,
				Command: []string{"/bin/web", "--port=8080"}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.1.2.3",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true, Image: "registry.example.com/web:1.2.3",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
}

// heapAlloc is the live heap after two GCs.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingNotifier accepts every alert and counts them.
type countingNotifier struct {
	alerts atomic.Int64
	seq    atomic.Int64
}

func (n *countingNotifier) ref() alert.MessageRef {
	return alert.MessageRef{Channel: channel, TS: fmt.Sprintf("1700000000.%06d", n.seq.Add(1))}
}

func (n *countingNotifier) Notify(context.Context, alert.Alert) (alert.MessageRef, error) {
	n.alerts.Add(1)
	return n.ref(), nil
}

func (n *countingNotifier) NotifyGroup(context.Context, alert.Group) (alert.MessageRef, error) {
	n.alerts.Add(1)
	return n.ref(), nil
}

func (n *countingNotifier) Resolve(context.Context, alert.MessageRef, alert.Alert) error { return nil }

func (n *countingNotifier) ResolveGroup(context.Context, alert.MessageRef, alert.Group) error {
	return nil
}

func (n *countingNotifier) Summary(context.Context, alert.Summary) error { return nil }

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return f.Close()
}
