// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package kubesim stands in for the node side of a Kubernetes cluster in
// tests and demos, against a real API server or client-go's fake clientset:
//
//   - a kubelet: registers a Node, moves pods through their phases and
//     container states as a scenario says (CrashLoop, Ready), runs the bot's
//     debug pods for real (their command under busybox sh against host
//     directories standing in for the claims), finishes graceful deletions,
//     and serves container logs through the kubelet API so that pods/log
//     reads go through the real API server;
//   - the scheduler, for the pods it may run: binds pending pods whose node
//     selector and required node affinity match its Node;
//   - the StatefulSet controller, for broker pods: a deleted pod owned by a
//     StatefulSet is recreated under the same name with a new UID, and then
//     becomes Ready or crash-loops again as the scenario says.
//
// The pod-status logic (status.go) is independent of the transport; the
// kubelet API server (server.go) is only needed for real API servers.
package kubesim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// Labels that mark the bot's debug pods, which the Kubelet runs.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByBot   = "kafkabot"
)

// Options configure a Kubelet.
type Options struct {
	// NodeName is the Node to register and run pods on (default "kubesim").
	NodeName string
	// Namespaces limits the pods the Kubelet watches, schedules and runs;
	// empty means all namespaces.
	Namespaces []string
	// ServeKubeletAPI starts the HTTPS kubelet API (container logs) and
	// registers its port on the Node. Needed with a real API server; the
	// fake clientset never calls it.
	ServeKubeletAPI bool
	// Busybox is the busybox binary for debug pods ("" = from PATH).
	Busybox string
	// WorkDir holds the busybox applet links and mount roots' fallbacks
	// ("" = the system temp dir). The caller removes it.
	WorkDir string
	// Logf, when set, receives one line per action the Kubelet takes.
	Logf func(format string, args ...any)
}

// RestartOutcome is what a recreated broker pod does.
type RestartOutcome struct {
	// CrashLog, when non-empty, makes the new pod crash-loop with this log
	// as its previous container's log. Empty means the pod becomes Ready.
	CrashLog string
}

type podKey struct{ namespace, name string }

// Kubelet is the stand-in node. Create it with New, then Start it.
type Kubelet struct {
	cs     kubernetes.Interface
	opts   Options
	logs   *LogStore
	runner *Runner
	api    *KubeletAPI

	mu        sync.Mutex
	claimDirs map[podKey]string // namespace/claim -> host dir
	onRestart map[podKey]RestartOutcome
	handled   map[string]bool // debug pods already started, by podID
	running   map[string]runningPod

	ctx       context.Context
	cancel    context.CancelFunc
	factories []informers.SharedInformerFactory
	workers   sync.WaitGroup
}

type runningPod struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a Kubelet acting on the cluster through cs, which needs the
// rights of a kubelet and a controller (an admin client in tests).
func New(cs kubernetes.Interface, opts Options) (*Kubelet, error) {
	if opts.NodeName == "" {
		opts.NodeName = "kubesim"
	}
	runner, err := NewRunner(opts.Busybox, opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &Kubelet{
		cs:        cs,
		opts:      opts,
		logs:      NewLogStore(),
		runner:    runner,
		claimDirs: map[podKey]string{},
		onRestart: map[podKey]RestartOutcome{},
		handled:   map[string]bool{},
		running:   map[string]runningPod{},
	}, nil
}

// NodeName is the name of the Kubelet's Node.
func (k *Kubelet) NodeName() string { return k.opts.NodeName }

// Logs is the store the kubelet API serves container logs from.
func (k *Kubelet) Logs() *LogStore { return k.logs }

// Runner runs the debug pods; its DefaultTimeout may be changed before Start.
func (k *Kubelet) Runner() *Runner { return k.runner }

// SetLog stores a container's log (of its previous instance when previous).
func (k *Kubelet) SetLog(namespace, pod, container string, previous bool, text string) {
	k.logs.Set(namespace, pod, container, previous, text)
}

// LogRequests returns the container-log requests the kubelet API received
// (none when it does not serve one).
func (k *Kubelet) LogRequests() []LogRequest {
	if k.api == nil {
		return nil
	}
	return k.api.Requests()
}

// SetVolumeDir makes host directory dir the contents of claim in
// namespace, for the debug pods that mount it.
func (k *Kubelet) SetVolumeDir(namespace, claim, dir string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.claimDirs[podKey{namespace, claim}] = dir
}

// OnRestart sets what the broker pod namespace/name does after it is
// deleted and recreated (default: it becomes Ready).
func (k *Kubelet) OnRestart(namespace, name string, o RestartOutcome) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.onRestart[podKey{namespace, name}] = o
}

// Start registers the Node (serving the kubelet API first when asked) and
// starts watching pods. It returns once the watch caches have synced. Stop
// undoes it.
func (k *Kubelet) Start(ctx context.Context) error {
	if k.cancel != nil {
		return errors.New("kubesim: Start called twice")
	}
	port := 0
	if k.opts.ServeKubeletAPI {
		k.api = StartKubeletAPI(k.logs)
		port = k.api.Port()
	}
	if err := RegisterNode(ctx, k.cs, k.opts.NodeName, port); err != nil {
		k.closeAPI()
		return err
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	namespaces := k.opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var synced []cache.InformerSynced
	for _, ns := range namespaces {
		factory := informers.NewSharedInformerFactoryWithOptions(k.cs, 0, informers.WithNamespace(ns))
		inf := factory.Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { k.podChanged(obj) },
			UpdateFunc: func(_, obj any) { k.podChanged(obj) },
			DeleteFunc: k.podDeleted,
		}); err != nil {
			k.Stop()
			return fmt.Errorf("watching pods in %q: %w", ns, err)
		}
		factory.Start(k.ctx.Done())
		k.factories = append(k.factories, factory)
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		k.Stop()
		return fmt.Errorf("kubesim: pod watch did not sync: %w", ctx.Err())
	}
	k.logf("node %s ready (kubelet port %d)", k.opts.NodeName, port)
	return nil
}

// Stop stops watching, kills running debug pods' processes, waits for all
// the Kubelet's work to end and closes the kubelet API.
func (k *Kubelet) Stop() {
	if k.cancel != nil {
		k.cancel()
	}
	// Handlers are done once the informers are; only then can no new work
	// be added while waiting for it.
	for _, f := range k.factories {
		f.Shutdown()
	}
	k.workers.Wait()
	k.closeAPI()
}

func (k *Kubelet) closeAPI() {
	if k.api != nil {
		k.api.Close()
	}
}

func (k *Kubelet) logf(format string, args ...any) {
	if k.opts.Logf != nil && (k.ctx == nil || k.ctx.Err() == nil) {
		k.opts.Logf("kubesim: "+format, args...)
	}
}

// go runs f as tracked work unless the Kubelet is stopping.
func (k *Kubelet) goWork(f func(ctx context.Context)) {
	if k.ctx.Err() != nil {
		return
	}
	k.workers.Go(func() { f(k.ctx) })
}

// podID identifies one incarnation of a pod: its UID, or its name where
// the clientset assigns no UIDs (client-go's fake).
func podID(pod *corev1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}

// claim marks a pod as handled and reports whether it was not already.
func (k *Kubelet) claim(pod *corev1.Pod) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.handled[podID(pod)] {
		return false
	}
	k.handled[podID(pod)] = true
	return true
}

func (k *Kubelet) podChanged(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if pod.Spec.NodeName == k.opts.NodeName && IsDebugPod(pod) {
		// Annotations reach a running container through its downwardAPI
		// volume (the repair's go signal).
		if err := k.runner.RefreshDownwardAPI(pod); err != nil {
			k.logf("refreshing downwardAPI volumes of %s/%s: %v", pod.Namespace, pod.Name, err)
		}
	}
	switch {
	case pod.Spec.NodeName == "":
		if Schedulable(pod, k.nodeLabels()) {
			p := pod.DeepCopy()
			k.goWork(func(ctx context.Context) { k.bind(ctx, p) })
		}
	case pod.Spec.NodeName != k.opts.NodeName:
		return
	case pod.DeletionTimestamp != nil:
		p := pod.DeepCopy()
		k.goWork(func(ctx context.Context) { k.finishDeletion(ctx, p) })
	case IsDebugPod(pod) && pod.Status.Phase == corev1.PodPending:
		if k.claim(pod) {
			p := pod.DeepCopy()
			k.goWork(func(ctx context.Context) { k.runDebugPod(ctx, p) })
		}
	}
}

func (k *Kubelet) podDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName != k.opts.NodeName {
		return
	}
	k.stopRun(pod)
	k.mu.Lock()
	delete(k.handled, podID(pod))
	k.mu.Unlock()
	k.logs.ForgetPod(pod.Namespace, pod.Name)
	if ownedByStatefulSet(pod) && !IsDebugPod(pod) {
		p := pod.DeepCopy()
		k.goWork(func(ctx context.Context) { k.recreate(ctx, p) })
	}
}

// IsDebugPod reports whether pod is one of the bot's debug pods.
func IsDebugPod(pod *corev1.Pod) bool {
	return pod.Labels[LabelManagedBy] == ManagedByBot
}

func ownedByStatefulSet(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.OwnerReferences, func(o metav1.OwnerReference) bool {
		return o.Kind == "StatefulSet" && o.Controller != nil && *o.Controller
	})
}

func (k *Kubelet) nodeLabels() map[string]string {
	return nodeLabels(k.opts.NodeName)
}

// bind assigns a pending pod to the Kubelet's node, as the scheduler would.
func (k *Kubelet) bind(ctx context.Context, pod *corev1.Pod) {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: k.opts.NodeName},
	}
	err := k.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return // bound meanwhile, or gone
	}
	if err == nil {
		cur, getErr := k.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if getErr != nil || cur.Spec.NodeName != "" {
			k.logf("bound pod %s/%s to %s", pod.Namespace, pod.Name, k.opts.NodeName)
			return
		}
	}
	// client-go's fake clientset accepts a Binding but ignores it: set the
	// node directly (a real API server refuses this, which is why Bind is
	// first).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := k.cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || cur.UID != pod.UID || cur.Spec.NodeName != "" {
			return err
		}
		cur.Spec.NodeName = k.opts.NodeName
		_, err = k.cs.CoreV1().Pods(pod.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		k.logf("binding pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// finishDeletion completes a graceful deletion: the kubelet stops the
// containers and then deletes the pod with grace period 0.
func (k *Kubelet) finishDeletion(ctx context.Context, pod *corev1.Pod) {
	k.stopRun(pod)
	zero := int64(0)
	err := k.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.logf("finishing deletion of %s/%s: %v", pod.Namespace, pod.Name, err)
		return
	}
	k.logf("pod %s/%s stopped and deleted", pod.Namespace, pod.Name)
}

// stopRun kills a running debug pod's process and waits for it to end.
func (k *Kubelet) stopRun(pod *corev1.Pod) {
	k.mu.Lock()
	r, ok := k.running[podID(pod)]
	k.mu.Unlock()
	if ok {
		r.cancel()
		<-r.done
	}
}

// recreate stands in for the StatefulSet controller: same name, labels and
// spec, a new UID, then the scenario's outcome.
func (k *Kubelet) recreate(ctx context.Context, old *corev1.Pod) {
	np := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            old.Name,
			Namespace:       old.Namespace,
			Labels:          old.Labels,
			Annotations:     old.Annotations,
			OwnerReferences: old.OwnerReferences,
		},
		Spec: *old.Spec.DeepCopy(),
	}
	created, err := k.cs.CoreV1().Pods(np.Namespace).Create(ctx, np, metav1.CreateOptions{})
	if err != nil {
		k.logf("recreating %s/%s: %v", np.Namespace, np.Name, err)
		return
	}
	k.logf("recreated %s/%s (uid %s)", created.Namespace, created.Name, created.UID)
	k.mu.Lock()
	outcome := k.onRestart[podKey{created.Namespace, created.Name}]
	k.mu.Unlock()
	if outcome.CrashLog != "" {
		err = k.CrashLoop(ctx, created.Namespace, created.Name, outcome.CrashLog)
	} else {
		err = k.Ready(ctx, created.Namespace, created.Name)
	}
	if err != nil {
		k.logf("starting recreated %s/%s: %v", created.Namespace, created.Name, err)
	}
}

// CrashLoop makes the Kafka container of pod namespace/name (the one named
// "kafka", else the first) wait in CrashLoopBackOff after exiting with code
// 1, with log as its previous instance's log (and, as the kubelet serves
// the last instance's log while the new one waits, its current log too).
func (k *Kubelet) CrashLoop(ctx context.Context, namespace, name, log string) error {
	var container string
	err := k.updateStatus(ctx, namespace, name, func(pod *corev1.Pod) error {
		container = kafkaContainer(pod)
		return SetCrashLooping(pod, container, time.Now())
	})
	if err != nil {
		return fmt.Errorf("making %s/%s crash-loop: %w", namespace, name, err)
	}
	k.logs.Set(namespace, name, container, true, log)
	k.logs.Set(namespace, name, container, false, log)
	return nil
}

// Ready makes every container of pod namespace/name run and be ready.
func (k *Kubelet) Ready(ctx context.Context, namespace, name string) error {
	err := k.updateStatus(ctx, namespace, name, func(pod *corev1.Pod) error {
		SetReady(pod, time.Now())
		return nil
	})
	if err != nil {
		return fmt.Errorf("making %s/%s ready: %w", namespace, name, err)
	}
	return nil
}

func kafkaContainer(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == "kafka" {
			return c.Name
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Name
	}
	return ""
}

// updateStatus applies change to the pod's latest version and writes its
// status through pods/status, retrying on conflicts.
func (k *Kubelet) updateStatus(ctx context.Context, namespace, name string, change func(*corev1.Pod) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := k.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := change(pod); err != nil {
			return err
		}
		_, err = k.cs.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

// runDebugPod runs a debug pod's command and reports its end in the pod's
// status and log.
func (k *Kubelet) runDebugPod(ctx context.Context, pod *corev1.Pod) {
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	k.mu.Lock()
	k.running[podID(pod)] = runningPod{cancel: cancel, done: done}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.running, podID(pod))
		k.mu.Unlock()
		cancel()
		close(done)
	}()

	if err := k.updateStatus(ctx, pod.Namespace, pod.Name, func(p *corev1.Pod) error {
		if p.UID != pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		SetRunning(p, time.Now())
		return nil
	}); err != nil {
		k.logf("starting debug pod %s/%s: %v", pod.Namespace, pod.Name, err)
		return
	}
	k.logf("running debug pod %s/%s", pod.Namespace, pod.Name)
	res := k.runner.Run(runCtx, pod, func(claim string) (string, bool) {
		k.mu.Lock()
		defer k.mu.Unlock()
		dir, ok := k.claimDirs[podKey{pod.Namespace, claim}]
		return dir, ok
	})
	if runCtx.Err() != nil && res.Reason == "" {
		return // deleted while running: nothing left to report on
	}
	k.logs.Set(pod.Namespace, pod.Name, pod.Spec.Containers[0].Name, false, res.Output)
	err := k.updateStatus(ctx, pod.Namespace, pod.Name, func(p *corev1.Pod) error {
		if p.UID != pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		SetTerminated(p, res.ExitCode, res.Reason, res.Message, res.Started, res.Finished)
		return nil
	})
	if err != nil && !apierrors.IsNotFound(err) {
		k.logf("reporting debug pod %s/%s: %v", pod.Namespace, pod.Name, err)
		return
	}
	k.logf("debug pod %s/%s exited %d", pod.Namespace, pod.Name, res.ExitCode)
}

// ProvisionClaim creates a bound PersistentVolumeClaim whose contents are
// host directory dir, as a storage provisioner would (there is none in a
// bare API server): phase Bound, the requested capacity and access modes.
func (k *Kubelet) ProvisionClaim(ctx context.Context, namespace, name, dir string, size string, modes ...corev1.PersistentVolumeAccessMode) (*corev1.PersistentVolumeClaim, error) {
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	qty, err := resource.ParseQuantity(size)
	if err != nil {
		return nil, fmt.Errorf("claim %s/%s size %q: %w", namespace, name, size, err)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: modes,
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: qty}},
			VolumeName:  "pv-" + namespace + "-" + name,
		},
	}
	created, err := k.cs.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating claim %s/%s: %w", namespace, name, err)
	}
	created.Status = corev1.PersistentVolumeClaimStatus{
		Phase:       corev1.ClaimBound,
		AccessModes: modes,
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: qty},
	}
	bound, err := k.cs.CoreV1().PersistentVolumeClaims(namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("binding claim %s/%s: %w", namespace, name, err)
	}
	k.SetVolumeDir(namespace, name, dir)
	return bound, nil
}
