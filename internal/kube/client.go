// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package kube is everything that talks to the Kubernetes API: finding
// brokers, reading their status, logs and claims, informers, debug pods,
// events and leases. Other packages never import client-go directly for
// cluster access; they go through a *Client.
package kube

import (
	"fmt"
	"slices"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options are the limits and scope of a Client.
type Options struct {
	// Namespaces the bot may read and repair; empty means all it can read.
	Namespaces []string
	// LogTailBytes and LogTailLines bound every log read.
	LogTailBytes int64
	LogTailLines int64
	// Selector is a label selector for Kafka pods; empty means the built-in ones.
	Selector string
	// AllowRootBroker (ALLOW_ROOT_BROKER) is the repair's setting, for the
	// diagnosis: without it a broker running as uid 0 is read with a
	// Snapshot.RepairRefusal (CheckRootBroker), so no Approve is offered.
	AllowRootBroker bool
	// DebugImage (DEBUG_IMAGE) is the repair's debug image override, for
	// the diagnosis's check of the image against the recorded admission
	// verdicts (RecordImageVerdict).
	DebugImage string
}

// Client is the bot's access to one cluster.
type Client struct {
	cs   kubernetes.Interface
	opts Options
	// handoff passes the pod FindPod read to the Inspect that follows.
	handoff *podHandoff
	// lists are the recent pod lists ResolvePod shares between callers.
	lists *sharedLists
	// images are the admission verdicts on debug images (RecordImageVerdict).
	images imageVerdicts
}

// New wraps a clientset (a real one, or client-go's fake in tests).
func New(cs kubernetes.Interface, opts Options) *Client {
	if opts.LogTailBytes <= 0 {
		opts.LogTailBytes = 256 << 10
	}
	if opts.LogTailLines <= 0 {
		opts.LogTailLines = 2000
	}
	return &Client{cs: cs, opts: opts, handoff: newPodHandoff(), lists: newSharedLists()}
}

// Clientset returns the underlying clientset.
func (c *Client) Clientset() kubernetes.Interface { return c.cs }

// Options returns the client's scope and limits.
func (c *Client) Options() Options { return c.opts }

// NamespaceAllowed reports whether ns is inside KAFKA_NAMESPACES (always
// true when that list is empty).
func (c *Client) NamespaceAllowed(ns string) bool {
	return len(c.opts.Namespaces) == 0 || slices.Contains(c.opts.Namespaces, ns)
}

// RESTConfig loads a REST config from kubeconfig (the KUBECONFIG value: a
// path list) with kubectl's rules, falling back to the in-cluster config;
// see LoadConnection. It is for the commands that take no connection
// flags (bot serve), so its errors point at KUBECONFIG.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	c, err := LoadConnection(kubeconfig, ConfigFlags{EnvOnly: true})
	if err != nil {
		return nil, fmt.Errorf("loading Kubernetes client configuration: %w", err)
	}
	return c.REST, nil
}
