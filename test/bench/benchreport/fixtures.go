// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
)

// seedLog is the seed incident's real crash log (testdata/SOURCES.md).
//
//go:embed testdata/34-kraft-metadata-log-unexpected-append-offset.log
var seedLog string

// The Bitnami-style cluster every scenario uses.
const (
	kafkaNS     = "kafka"
	clusterName = "foobar"
	seedBroker  = "foobar-kafka-broker-0"
	seedNodeID  = "100"
	kafkaImage  = "docker.io/bitnami/kafka:3.9.0"
	nodeName    = "node-a"
)

// The Slack side.
const (
	channel       = "C0KAFKAOPS"
	approver      = "U0APPROVER"
	actionApprove = "kafkabot.approve"
)

// approvalSecret signs approval buttons in the benchmark only.
var approvalSecret = []byte("benchreport-only-approval-secret-0123456789")

// kafkaPod is one Kafka node of the cluster as the Bitnami chart creates
// it: component "broker" or "controller-eligible", roles for
// KAFKA_CFG_PROCESS_ROLES, and a data claim for brokers.
func kafkaPod(name, component, roles, nodeID string) *corev1.Pod {
	sts := "foobar-kafka-broker"
	if component != "broker" {
		sts = "foobar-kafka-controller"
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: kafkaNS, UID: types.UID("uid-" + name),
			Labels: map[string]string{
				"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": clusterName,
				"app.kubernetes.io/component": component,
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts,
				UID: types.UID("uid-" + sts), Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: ptr.To[int64](1001), RunAsGroup: ptr.To[int64](1001), FSGroup: ptr.To[int64](1001),
				RunAsNonRoot: ptr.To(true),
			},
			Containers: []corev1.Container{{
				Name: "kafka", Image: kafkaImage,
				Env: []corev1.EnvVar{
					{Name: "KAFKA_CFG_PROCESS_ROLES", Value: roles},
					{Name: "KAFKA_CFG_NODE_ID", Value: nodeID},
					{Name: "KAFKA_CFG_LOG_DIRS", Value: "/bitnami/kafka/data"},
				},
			}},
		},
	}
	if component == "broker" {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}}
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}}
	}
	return p
}

// staticCluster returns the seed incident as API objects, without a
// kubelet: three Ready controllers, broker-0 crash-looping, its bound
// claim, and an event, on node-a.
func staticCluster(now time.Time) []runtime.Object {
	var objs []runtime.Object
	for i := range 3 {
		c := kafkaPod(fmt.Sprintf("foobar-kafka-controller-%d", i), "controller-eligible", "controller", fmt.Sprint(i))
		c.Spec.NodeName = nodeName
		kubesim.SetReady(c, now)
		objs = append(objs, c)
	}
	b := kafkaPod(seedBroker, "broker", "broker", seedNodeID)
	b.Spec.NodeName = nodeName
	if err := setCrashLooping(b, now); err != nil {
		panic(err) // the pod above has a kafka container
	}
	objs = append(objs, b)
	objs = append(objs, claimAndBackOff(seedBroker, b.UID, now)...)
	return objs
}

// newBrokerVolume lays out a host directory like a Bitnami broker's volume
// (log dir data/) for node nodeID, in a parent directory of its own, and
// returns it. Segment contents are filler bytes.
func newBrokerVolume(parent, nodeID string) (string, error) {
	vol := filepath.Join(parent, "pv-data-broker")
	filler := func(n int) []byte { return []byte(strings.Repeat("k", n)) }
	files := map[string][]byte{
		"data/meta.properties":                                 []byte("node.id=" + nodeID + "\ndirectory.id=0U9tWjkzT3yJwTqN-YmQ1g\nversion=1\ncluster.id=p8fFEbKGQ22B6M_Da_vCBw\n"),
		"data/.lock":                                           nil,
		"data/recovery-point-offset-checkpoint":                []byte("0\n1\norders 0 1187\n"),
		"data/__cluster_metadata-0/00000000000057054787.log":   filler(8192),
		"data/__cluster_metadata-0/00000000000057054787.index": filler(512),
		"data/__cluster_metadata-0/leader-epoch-checkpoint":    []byte("0\n1\n12 57054787\n"),
		"data/__cluster_metadata-0/partition.metadata":         []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n"),
		"data/__cluster_metadata-0/quorum-state":               []byte(`{"clusterId":"","leaderId":1,"leaderEpoch":12,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":0},{"voterId":1},{"voterId":2}],"data_version":0}` + "\n"),
		"data/orders-0/00000000000000000000.log":               filler(16384),
		"data/orders-0/partition.metadata":                     []byte("version: 0\ntopic_id: 9Jc0mZ0sQ1e1Qd3Xb8wM2A\n"),
	}
	for rel, data := range files {
		path := filepath.Join(vol, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o775); err != nil {
			return "", fmt.Errorf("laying out the broker volume: %w", err)
		}
		if err := os.WriteFile(path, data, 0o664); err != nil {
			return "", fmt.Errorf("laying out the broker volume: %w", err)
		}
	}
	return vol, nil
}

// setCrashLooping makes a pod's kafka container crash-loop (12 restarts).
// claimAndBackOff is what a crash-looping broker pod name has beside it: its
// Bound data claim and the kubelet's BackOff event.
func claimAndBackOff(name string, uid types.UID, now time.Time) []runtime.Object {
	return []runtime.Object{
		&corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data-" + name, Namespace: kafkaNS},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Gi")}},
			},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		},
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name + ".back-off", Namespace: kafkaNS},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: kafkaNS, Name: name, UID: uid},
			Reason:         "BackOff", Type: corev1.EventTypeWarning, Count: 40,
			Message:        "Back-off restarting failed container kafka in pod " + name,
			FirstTimestamp: metav1.NewTime(now.Add(-time.Hour)), LastTimestamp: metav1.NewTime(now),
		},
	}
}

func setCrashLooping(p *corev1.Pod, now time.Time) error {
	if err := kubesim.SetCrashLooping(p, "kafka", now); err != nil {
		return fmt.Errorf("making %s crash-loop: %w", p.Name, err)
	}
	p.Status.ContainerStatuses[0].RestartCount = 12
	return nil
}

// setReady makes every container of a pod run and be ready.
func setReady(p *corev1.Pod, now time.Time) { kubesim.SetReady(p, now) }
