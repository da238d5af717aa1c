// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
)

// Cluster is the demo's in-process Kubernetes: client-go's fake clientset
// made to behave like an API server where the bot can tell (UIDs and
// creation times on new objects, pods/log served from the kubelet's
// store), driven by kubesim's kubelet stand-in.
type Cluster struct {
	// Clientset is what the bot and the scenario talk to.
	Clientset *fake.Clientset
	// Kubelet runs pods, serves logs and recreates deleted brokers.
	Kubelet *kubesim.Kubelet

	mu          sync.Mutex
	restartLogs map[string]string // namespace/pod -> current log of a recreated pod
}

// ClusterOptions configure StartCluster.
type ClusterOptions struct {
	// Namespace is the one namespace the kubelet stand-in watches.
	Namespace string
	// Busybox is the busybox (or stand-in) binary for debug pods.
	Busybox string
	// WorkDir holds the kubelet's applet links; the caller removes it.
	WorkDir string
	// Logf receives the kubelet's actions (nil: discarded).
	Logf func(format string, args ...any)
}

// StartCluster creates the fake clientset, installs its reactors and
// starts the kubelet stand-in. Stop undoes it.
func StartCluster(ctx context.Context, opts ClusterOptions) (*Cluster, error) {
	cs := fake.NewClientset()
	c := &Cluster{Clientset: cs, restartLogs: map[string]string{}}
	fakeapi.Install(cs)
	k, err := kubesim.New(cs, kubesim.Options{
		NodeName:   "kind-worker",
		Namespaces: []string{opts.Namespace},
		Busybox:    opts.Busybox,
		WorkDir:    opts.WorkDir,
		Logf:       opts.Logf,
	})
	if err != nil {
		return nil, fmt.Errorf("preparing the kubelet stand-in: %w", err)
	}
	if err := k.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the kubelet stand-in: %w", err)
	}
	c.Kubelet = k
	return c, nil
}

// Stop stops the kubelet stand-in and waits for its work to end.
func (c *Cluster) Stop() {
	if c.Kubelet != nil {
		c.Kubelet.Stop()
	}
}

// SetRestartLog makes text the log of pod's container once the pod has
// been deleted and recreated (the kubelet drops a deleted pod's logs; a
// real broker writes a fresh startup log).
func (c *Cluster) SetRestartLog(namespace, pod, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restartLogs[namespace+"/"+pod] = text
}

func (c *Cluster) restartLog(namespace, pod string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	text, ok := c.restartLogs[namespace+"/"+pod]
	return text, ok
}

// currentLogAfterRestart is the startup log of a recreated pod: only once
// the pod that crash-looped is gone and its replacement is Ready.
func (c *Cluster) currentLogAfterRestart(namespace, pod string) (string, bool) {
	text, ok := c.restartLog(namespace, pod)
	if !ok {
		return "", false
	}
	obj, err := c.Clientset.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), namespace, pod)
	if err != nil {
		return "", false
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || !podReady(p) {
		return "", false
	}
	return text, true
}

// podReady reports whether a pod's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
