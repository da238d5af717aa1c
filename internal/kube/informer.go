// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// PodKey names one pod in the pod informer's workqueue.
type PodKey struct {
	Namespace string
	Name      string
}

// String returns "namespace/name".
func (k PodKey) String() string { return k.Namespace + "/" + k.Name }

// PodInformerOptions tune a PodInformer.
type PodInformerOptions struct {
	// Resync re-delivers every cached pod to the handlers this often; 0
	// (the default) never does: the sweep reads the cache on its own schedule.
	Resync time.Duration
	// KeepFullObjects disables the memory-saving transform (for measuring
	// what the transform saves; never set it in production).
	KeepFullObjects bool
	// Clock drives the workqueue's rate limiting; nil is the real clock.
	Clock clock.WithTicker
}

// PodInformer caches the Kafka pods in the client's namespaces through
// shared informers and pushes the keys of pods whose state changed to a
// rate-limited workqueue. Reads from it (List, Get) cost no API request.
//
// A label selector can only AND its terms, so with the built-in layouts
// there is one informer per (namespace, built-in selector), and IsKafkaPod
// filters what they match; with KAFKA_POD_SELECTOR there is one informer per
// namespace. KAFKA_NAMESPACES gives one informer per namespace; without it
// each informer watches all namespaces.
type PodInformer struct {
	sources []podSource
	match   func(*corev1.Pod) bool
	// queue is made by Start (its delaying goroutine runs until ShutDown,
	// so an informer that never starts leaves nothing behind).
	queueConfig workqueue.TypedRateLimitingQueueConfig[PodKey]
	queue       workqueue.TypedRateLimitingInterface[PodKey]
}

// podSource is one informer and the lister over its cache.
type podSource struct {
	namespace string
	selector  labels.Selector
	informer  cache.SharedIndexInformer
	lister    corev1listers.PodLister
}

// NewPodInformer builds the informers for the client's scope. Nothing is
// sent to the API server until Start.
func (c *Client) NewPodInformer(opts PodInformerOptions) (*PodInformer, error) {
	selectors, match, err := c.kafkaPodMatcher()
	if err != nil {
		return nil, err
	}
	qcfg := workqueue.TypedRateLimitingQueueConfig[PodKey]{Name: "kafkabot_pods"}
	if opts.Clock != nil {
		qcfg.Clock = opts.Clock
	}
	p := &PodInformer{match: match, queueConfig: qcfg}
	transform := TransformPod(match)
	if opts.KeepFullObjects {
		transform = nil
	}
	for _, ns := range c.scopeNamespaces("") {
		for _, s := range selectors {
			sel, err := labels.Parse(s)
			if err != nil {
				return nil, fmt.Errorf("parsing pod selector %q: %w", s, err)
			}
			var inf cache.SharedIndexInformer
			cached := func(pod *corev1.Pod) bool {
				_, ok, _ := inf.GetStore().Get(pod)
				return ok
			}
			inf = cache.NewSharedIndexInformerWithOptions(
				podListWatch(c, ns, sel, cached), &corev1.Pod{},
				cache.SharedIndexInformerOptions{
					ResyncPeriod:      opts.Resync,
					Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
					ObjectDescription: "kafka pods " + s,
				})
			if transform != nil {
				if err := inf.SetTransform(transform); err != nil {
					return nil, fmt.Errorf("setting the pod transform: %w", err)
				}
			}
			if _, err := inf.AddEventHandler(p.handler()); err != nil {
				return nil, fmt.Errorf("adding the pod event handler: %w", err)
			}
			p.sources = append(p.sources, podSource{
				namespace: ns, selector: sel, informer: inf,
				lister: corev1listers.NewPodLister(inf.GetIndexer()),
			})
		}
	}
	return p, nil
}

// podListWatch lists and watches the pods of ns (metav1.NamespaceAll for
// every namespace) that match sel. The watch drops events of pods that do
// not match, so a server (or fake clientset) that ignores the selector on
// watches cannot fill the cache with unrelated pods; a cached pod relabelled
// out of the selector arrives as a deletion, like from a real apiserver.
func podListWatch(c *Client, ns string, sel labels.Selector, cached func(*corev1.Pod) bool) cache.ListerWatcher {
	s := sel.String()
	lw := restrictedListWatch(c.cs.CoreV1().Pods(ns), func(o *metav1.ListOptions) { o.LabelSelector = s })
	watchSelected := lw.WatchFuncWithContext
	lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		w, err := watchSelected(ctx, o)
		if err != nil {
			return nil, err
		}
		return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
			if ev.Type == watch.Bookmark {
				// Bookmarks carry no labels; the one that ends a
				// watch-list's initial events is what syncs the cache.
				return ev, true
			}
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || sel.Matches(labels.Set(pod.Labels)) {
				return ev, true
			}
			if (ev.Type == watch.Modified || ev.Type == watch.Deleted) && cached(pod) {
				ev.Type = watch.Deleted
				return ev, true
			}
			return ev, false
		}), nil
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, c.cs)
}

// keptAnnotations are the pod annotations the bot reads; TransformPod drops
// every other one.
var keptAnnotations = []string{
	"kubectl.kubernetes.io/default-container", // names the Kafka container in multi-container pods
}

// TransformPod returns the informer transform that keeps only what the
// sweep reads, so the cache stays small on big clusters: labels, owner
// references, the node, each container's name, image and volume mounts,
// the claim volumes, and the status. It drops managedFields, every
// annotation but keptAnnotations, env, commands, probes, resources and
// security contexts. Pods that isKafka rejects (the built-in selectors
// also match operators and exporters) keep only their identity and labels.
func TransformPod(isKafka func(*corev1.Pod) bool) cache.TransformFunc {
	return func(obj any) (any, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil // cache.DeletedFinalStateUnknown and the like pass as they are
		}
		pod.ManagedFields = nil
		var kept map[string]string
		for _, k := range keptAnnotations {
			if v, ok := pod.Annotations[k]; ok {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[k] = v
			}
		}
		pod.Annotations = kept
		if isKafka != nil && !isKafka(pod) {
			pod.OwnerReferences = nil
			pod.Finalizers = nil
			pod.Spec = corev1.PodSpec{}
			pod.Status = corev1.PodStatus{}
			return pod, nil
		}
		pod.Spec = corev1.PodSpec{
			NodeName:       pod.Spec.NodeName,
			InitContainers: slimContainers(pod.Spec.InitContainers),
			Containers:     slimContainers(pod.Spec.Containers),
			Volumes:        claimVolumes(pod.Spec.Volumes),
		}
		pod.Status.PodIPs = nil
		pod.Status.HostIPs = nil
		pod.Status.ResourceClaimStatuses = nil
		pod.Status.EphemeralContainerStatuses = nil
		slimStatuses(pod.Status.InitContainerStatuses)
		slimStatuses(pod.Status.ContainerStatuses)
		return pod, nil
	}
}

func slimContainers(in []corev1.Container) []corev1.Container {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(in))
	for i, c := range in {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image}
		for _, m := range c.VolumeMounts {
			out[i].VolumeMounts = append(out[i].VolumeMounts, corev1.VolumeMount{Name: m.Name, MountPath: m.MountPath})
		}
	}
	return out
}

// claimVolumes keeps the volumes backed by a PersistentVolumeClaim: claim
// volumes with their claim name, generic ephemeral volumes without their
// claim template (the claim's name is derived from pod and volume names).
func claimVolumes(in []corev1.Volume) []corev1.Volume {
	var out []corev1.Volume
	for _, v := range in {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.PersistentVolumeClaim.ClaimName},
			}})
		case v.Ephemeral != nil:
			out = append(out, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
				Ephemeral: &corev1.EphemeralVolumeSource{},
			}})
		}
	}
	return out
}

func slimStatuses(in []corev1.ContainerStatus) {
	for i := range in {
		in[i].Resources = nil
		in[i].VolumeMounts = nil
		in[i].AllocatedResources = nil
		in[i].User = nil
		in[i].AllocatedResourcesStatus = nil
	}
}

// handler enqueues Kafka pods that were added, deleted, or whose status
// changed in a way the sweep cares about.
func (p *PodInformer) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { p.enqueue(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			pod, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 && !statusChanged(old, pod) {
				return
			}
			p.enqueue(newObj)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			p.enqueue(obj)
		},
	}
}

func (p *PodInformer) enqueue(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !p.match(pod) {
		return
	}
	p.queue.Add(PodKey{Namespace: pod.Namespace, Name: pod.Name})
}

// statusChanged reports whether anything the sweep's detection reads
// changed: phase, readiness, the UID, or a container's state or restarts.
func statusChanged(old, pod *corev1.Pod) bool {
	if old.UID != pod.UID || old.Status.Phase != pod.Status.Phase || PodReady(old) != PodReady(pod) {
		return true
	}
	return !sameContainerStates(old.Status.ContainerStatuses, pod.Status.ContainerStatuses) ||
		!sameContainerStates(old.Status.InitContainerStatuses, pod.Status.InitContainerStatuses)
}

func sameContainerStates(a, b []corev1.ContainerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.RestartCount != y.RestartCount || x.Ready != y.Ready ||
			stateName(x.State) != stateName(y.State) || stateName(x.LastTerminationState) != stateName(y.LastTerminationState) {
			return false
		}
	}
	return true
}

// stateName summarises a container state as "waiting:Reason",
// "terminated:Reason" or "running".
func stateName(s corev1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return "waiting:" + s.Waiting.Reason
	case s.Terminated != nil:
		return "terminated:" + s.Terminated.Reason + ":" + s.Terminated.FinishedAt.UTC().String()
	case s.Running != nil:
		return "running"
	}
	return ""
}

// Queue is the rate-limited workqueue of changed Kafka pods; it is nil
// before Start. The consumer calls Done for every key it got, and Forget
// once a key was handled (AddRateLimited to retry it with backoff).
func (p *PodInformer) Queue() workqueue.TypedRateLimitingInterface[PodKey] { return p.queue }

// Start makes the queue and starts every informer; call it once. The
// informers stop when ctx ends, and the queue is shut down then, which ends
// the consumer's Get loop.
func (p *PodInformer) Start(ctx context.Context) {
	p.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[PodKey](), p.queueConfig)
	for _, s := range p.sources {
		go s.informer.RunWithContext(ctx)
	}
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
}

// WaitForCacheSync blocks until every informer has listed once, or ctx ends.
func (p *PodInformer) WaitForCacheSync(ctx context.Context) error {
	synced := make([]cache.InformerSynced, len(p.sources))
	for i, s := range p.sources {
		synced[i] = s.informer.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("waiting for the Kafka pod cache to sync: %w", cmp.Or(context.Cause(ctx), errors.New("informer stopped")))
	}
	return nil
}

// HasSynced reports whether every informer has listed once.
func (p *PodInformer) HasSynced() bool {
	for _, s := range p.sources {
		if !s.informer.HasSynced() {
			return false
		}
	}
	return true
}

// List returns every cached Kafka pod, deduplicated (a pod may match more
// than one built-in selector), in namespace/name order. The pods are the
// cache's own objects: callers must not modify them.
func (p *PodInformer) List() []*corev1.Pod {
	seen := map[PodKey]bool{}
	var out []*corev1.Pod
	for _, s := range p.sources {
		pods, err := s.lister.List(s.selector)
		if err != nil {
			continue // the cache lister never fails
		}
		for _, pod := range pods {
			k := PodKey{pod.Namespace, pod.Name}
			if seen[k] || !p.match(pod) {
				continue
			}
			seen[k] = true
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// StatusSnapshot returns what the cached pod alone tells about it (no log,
// events or claim status), or false when the cache has no such Kafka pod.
// The memory-saving transform drops env, so roles that only env variables
// reveal are unknown here; Client.Snapshot reads the live pod for those.
func (p *PodInformer) StatusSnapshot(k PodKey) (diagnose.Snapshot, bool) {
	pod, ok := p.Get(k)
	if !ok {
		return diagnose.Snapshot{}, false
	}
	s, _ := statusSnapshot(pod)
	return s, true
}

// Get returns the cached Kafka pod named by k, or false when the cache has
// none (deleted, not a Kafka pod, or out of scope). The pod is the cache's
// own object: callers must not modify it.
func (p *PodInformer) Get(k PodKey) (*corev1.Pod, bool) {
	for _, s := range p.sources {
		if s.namespace != metav1.NamespaceAll && s.namespace != k.Namespace {
			continue
		}
		pod, err := s.lister.Pods(k.Namespace).Get(k.Name)
		if err == nil && s.selector.Matches(labels.Set(pod.Labels)) && p.match(pod) {
			return pod, true
		}
	}
	return nil, false
}
