// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// kubeletVersion is what the Node reports; it is not a real kubelet.
const kubeletVersion = "v1.37.2-kubesim"

func nodeLabels(name string) map[string]string {
	return map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
}

// RegisterNode creates (or refreshes) Node name as a ready node at
// 127.0.0.1 whose kubelet listens on port (0: no kubelet API). The API
// server reaches a kubelet at the Node's address of a preferred type
// (--kubelet-preferred-address-types=InternalIP) and its
// status.daemonEndpoints.kubeletEndpoint.port.
func RegisterNode(ctx context.Context, cs kubernetes.Interface, name string, port int) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nodeLabels(name)}}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering node %s: %w", name, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status = corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: hostIP},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubesim is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
			}},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("16Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: kubeletVersion, OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: "kubesim://1",
			},
		}
		cur.Status.Allocatable = cur.Status.Capacity
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting status of node %s: %w", name, err)
	}
	return nil
}

// Schedulable reports whether a pending pod may run on a node with these
// labels (and the name in its hostname label): its nodeSelector matches
// and, when it has a required node affinity, one of its terms matches.
// Tolerations are not checked: the stand-in node has no taints.
func Schedulable(pod *corev1.Pod, nodeLabels map[string]string) bool {
	if pod.Spec.SchedulerName != "" && pod.Spec.SchedulerName != corev1.DefaultSchedulerName {
		return false
	}
	for k, v := range pod.Spec.NodeSelector {
		if nodeLabels[k] != v {
			return false
		}
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	name := nodeLabels[corev1.LabelHostname]
	return slices.ContainsFunc(aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
		func(term corev1.NodeSelectorTerm) bool { return termMatches(term, name, nodeLabels) })
}

// termMatches: every requirement of the term holds (an empty term matches
// nothing, as in the scheduler).
func termMatches(term corev1.NodeSelectorTerm, name string, nodeLabels map[string]string) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, f := range term.MatchFields {
		if !requirementMatches(f, map[string]string{"metadata.name": name}) {
			return false
		}
	}
	for _, e := range term.MatchExpressions {
		if !requirementMatches(e, nodeLabels) {
			return false
		}
	}
	return true
}

func requirementMatches(r corev1.NodeSelectorRequirement, set map[string]string) bool {
	var op selection.Operator
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		op = selection.In
	case corev1.NodeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.NodeSelectorOpExists:
		op = selection.Exists
	case corev1.NodeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	case corev1.NodeSelectorOpGt:
		op = selection.GreaterThan
	case corev1.NodeSelectorOpLt:
		op = selection.LessThan
	default:
		return false
	}
	req, err := labels.NewRequirement(r.Key, op, r.Values)
	if err != nil {
		return false
	}
	return req.Matches(labels.Set(set))
}
