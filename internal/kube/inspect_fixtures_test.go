// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Fixtures shared by the find, inspect and status tests: the seed incident
// (Bitnami broker foobar-kafka-broker-0, node id 100, crash-looping on
// UnexpectedAppendOffsetException) and a few neighbours.

const inspSeedCrashLog = "testdata/inspect/34-kraft-metadata-log-unexpected-append-offset.log"

func inspReadCrashLog(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(inspSeedCrashLog))
	if err != nil {
		t.Fatalf("reading seed crash log: %v", err)
	}
	return b
}

var inspCrashTime = time.Date(2025, 4, 28, 8, 22, 1, 0, time.UTC)

// inspBitnamiPod is a Bitnami-chart Kafka pod of release "foobar" in role
// component ("broker" or "controller-eligible"), ordinal n.
func inspBitnamiPod(ns, name, component string, env ...corev1.EnvVar) *corev1.Pod {
	sts := "foobar-kafka-broker"
	if component == "controller-eligible" {
		sts = "foobar-kafka-controller"
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name),
			Labels: map[string]string{
				"app.kubernetes.io/name":      "kafka",
				"app.kubernetes.io/instance":  "foobar",
				"app.kubernetes.io/component": component,
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts, Controller: new(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-a",
			InitContainers: []corev1.Container{{
				Name: "kafka-init", Image: "docker.io/bitnami/kafka:3.5.1-debian-11-r1",
				Env: []corev1.EnvVar{{Name: "KAFKA_MIN_ID", Value: "100"}},
			}},
			Containers: []corev1.Container{{
				Name:  "kafka",
				Image: "docker.io/bitnami/kafka:3.5.1-debian-11-r1",
				Env:   env,
				VolumeMounts: []corev1.VolumeMount{
					{Name: "data", MountPath: "/bitnami/kafka"},
					{Name: "kafka-config", MountPath: "/opt/bitnami/kafka/config"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}},
				{Name: "kafka-config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "kafka", Ready: true, Image: "docker.io/bitnami/kafka:3.5.1-debian-11-r1",
				ImageID: "docker.io/bitnami/kafka@sha256:4f0a2c4d1e6b8a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c",
				State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			}},
		},
	}
}

// inspSeedPod is the seed incident's pod: crash-looping, 12 restarts, last
// exit 1, process.roles=broker, node id 100.
func inspSeedPod() *corev1.Pod {
	p := inspBitnamiPod("kafka", "foobar-kafka-broker-0", "broker",
		corev1.EnvVar{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "broker"},
		corev1.EnvVar{Name: "KAFKA_CFG_NODE_ID", Value: "100"},
		corev1.EnvVar{Name: "KAFKA_CLIENT_PASSWORDS", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "foobar-kafka-user-passwords"}, Key: "client-passwords"}}},
	)
	st := &p.Status.ContainerStatuses[0]
	st.Ready = false
	st.RestartCount = 12
	st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason:  "CrashLoopBackOff",
		Message: "back-off 5m0s restarting failed container=kafka pod=foobar-kafka-broker-0_kafka(uid-kafka-foobar-kafka-broker-0)",
	}}
	st.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 1, Reason: "Error",
		StartedAt:  metav1.NewTime(inspCrashTime.Add(-40 * time.Second)),
		FinishedAt: metav1.NewTime(inspCrashTime),
	}}
	return p
}

func inspPVC(ns, name string, phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
	if phase == corev1.ClaimBound {
		pvc.Status.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return pvc
}

func inspEvent(pod *corev1.Pod, name string, uid types.UID, reason, msg string, count int32, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: uid},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: msg, Count: count,
		LastTimestamp: metav1.NewTime(last),
	}
}

// inspSeedObjects is the seed pod with its claim and events: two about
// this pod instance, one about an earlier pod of the same name (other UID),
// one about another pod.
func inspSeedObjects() []runtime.Object {
	pod := inspSeedPod()
	other := inspBitnamiPod("kafka", "foobar-kafka-broker-1", "broker")
	return []runtime.Object{
		pod,
		inspPVC("kafka", "data-foobar-kafka-broker-0", corev1.ClaimBound),
		inspEvent(pod, "ev-backoff", pod.UID, "BackOff", "Back-off restarting failed container kafka in pod foobar-kafka-broker-0_kafka", 42, inspCrashTime.Add(time.Minute)),
		inspEvent(pod, "ev-pulled", pod.UID, "Pulled", "Container image \"docker.io/bitnami/kafka:3.5.1-debian-11-r1\" already present on machine", 13, inspCrashTime),
		inspEvent(pod, "ev-old-pod", "uid-of-an-earlier-pod", "FailedMount", "an event about an earlier pod of the same name", 1, inspCrashTime),
		inspEvent(other, "ev-other-pod", other.UID, "Unhealthy", "an event about another pod", 1, inspCrashTime),
	}
}

// inspLogServer answers pods/log requests of a fake clientset and records
// the options they carried.
type inspLogServer struct {
	previous, current []byte
	previousErr       error
	currentErr        error
	// honourLimits makes the server cut its answer at limitBytes, as the
	// kubelet does (from the start of the tail window).
	honourLimits bool
	requests     []corev1.PodLogOptions
}

func (s *inspLogServer) answer(body []byte, opts corev1.PodLogOptions) *runtime.Unknown {
	if s.honourLimits && opts.LimitBytes != nil && int64(len(body)) > *opts.LimitBytes {
		body = body[:*opts.LimitBytes]
	}
	return &runtime.Unknown{Raw: body}
}

func (s *inspLogServer) install(cs *fake.Clientset) {
	cs.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ga, ok := a.(k8stesting.GenericAction)
		if !ok || a.GetSubresource() != "log" {
			return false, nil, nil
		}
		opts := *ga.GetValue().(*corev1.PodLogOptions)
		s.requests = append(s.requests, opts)
		if opts.Previous {
			if s.previousErr != nil {
				return true, nil, s.previousErr
			}
			return true, s.answer(s.previous, opts), nil
		}
		if s.currentErr != nil {
			return true, nil, s.currentErr
		}
		return true, s.answer(s.current, opts), nil
	})
}

// inspActionList renders a fake clientset's requests as "verb resource[/sub]".
func inspActionList(cs *fake.Clientset) []string {
	var out []string
	for _, a := range cs.Actions() {
		r := a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		out = append(out, a.GetVerb()+" "+r)
	}
	return out
}
