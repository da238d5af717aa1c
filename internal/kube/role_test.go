// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

func roleEnv(kv ...string) []corev1.EnvVar {
	var env []corev1.EnvVar
	for i := 0; i+1 < len(kv); i += 2 {
		env = append(env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return env
}

// roleStrimziPod is a Strimzi node-pool pod (no env: Strimzi configures
// Kafka through a file).
func roleStrimziPod(name string, broker, controller string) *corev1.Pod {
	p := findFixturePod("kafka", name, map[string]string{
		"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "my-cluster", "strimzi.io/name": "my-cluster-kafka",
		"strimzi.io/broker-role": broker, "strimzi.io/controller-role": controller,
	})
	p.Spec.Containers = []corev1.Container{{Name: "kafka", Image: "quay.io/strimzi/kafka:0.45.0-kafka-3.9.0"}}
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "StrimziPodSet", Name: name[:strings.LastIndexByte(name, '-')], Controller: new(true)}}
	return p
}

func rolePlainPod(name string, owner string, env ...corev1.EnvVar) *corev1.Pod {
	p := findFixturePod("kafka", name, map[string]string{"app": "kafka"})
	p.Spec.Containers = []corev1.Container{{Name: "kafka", Image: "apache/kafka:3.9.0", Env: env}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "StatefulSet", Name: owner, Controller: new(true)}}
	}
	return p
}

func TestRoleOf(t *testing.T) {
	bitnamiNoEnv := func(name, component string) *corev1.Pod {
		return inspBitnamiPod("kafka", name, component)
	}
	valueFromRoles := rolePlainPod("kafka-0", "")
	valueFromRoles.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "KAFKA_PROCESS_ROLES", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "kafka"}, Key: "roles"}}}}
	controllerMinZero := bitnamiNoEnv("foobar-kafka-controller-1", "controller-eligible")
	controllerMinZero.Spec.InitContainers[0].Env = roleEnv("KAFKA_MIN_ID", "0")

	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantRole   diagnose.Role
		wantNodeID string
		wantSource []string // substrings of source
	}{
		{
			name: "seed incident: Bitnami broker with env", pod: inspSeedPod(),
			wantRole: diagnose.RoleBroker, wantNodeID: "100",
			wantSource: []string{"env KAFKA_CFG_PROCESS_ROLES=broker", "label app.kubernetes.io/component=broker", "node id: env KAFKA_CFG_NODE_ID"},
		},
		{
			name: "Bitnami broker without env: label, KAFKA_MIN_ID + ordinal", pod: bitnamiNoEnv("foobar-kafka-broker-2", "broker"),
			wantRole: diagnose.RoleBroker, wantNodeID: "102",
			wantSource: []string{"role: label app.kubernetes.io/component=broker", "Bitnami KAFKA_MIN_ID=100 + pod ordinal 2"},
		},
		{
			name: "Bitnami controller-eligible without env is controller or combined: unknown", pod: controllerMinZero,
			wantRole: diagnose.RoleUnknown, wantNodeID: "1",
			wantSource: []string{"controller-eligible", "controller or combined"},
		},
		{
			name:     "Bitnami controller-only",
			pod:      inspBitnamiPod("kafka", "foobar-kafka-controller-0", "controller-eligible", roleEnv("KAFKA_CFG_PROCESS_ROLES", "controller", "KAFKA_CFG_NODE_ID", "0")...),
			wantRole: diagnose.RoleController, wantNodeID: "0",
			wantSource: []string{"env KAFKA_CFG_PROCESS_ROLES=controller"},
		},
		{
			name:     "Bitnami controller-eligible, combined",
			pod:      inspBitnamiPod("kafka", "foobar-kafka-controller-0", "controller-eligible", roleEnv("KAFKA_CFG_PROCESS_ROLES", "broker,controller")...),
			wantRole: diagnose.RoleCombined, wantNodeID: "100",
		},
		{
			name: "Strimzi broker", pod: roleStrimziPod("my-cluster-brokers-5", "true", "false"),
			wantRole: diagnose.RoleBroker, wantNodeID: "5",
			wantSource: []string{`strimzi.io/broker-role="true"`, "Strimzi pod-name suffix"},
		},
		{
			name: "Strimzi controller", pod: roleStrimziPod("my-cluster-controllers-0", "false", "true"),
			wantRole: diagnose.RoleController, wantNodeID: "0",
		},
		{
			name: "Strimzi dual-role", pod: roleStrimziPod("my-cluster-dual-role-12", "true", "true"),
			wantRole: diagnose.RoleCombined, wantNodeID: "12",
		},
		{
			name: "Strimzi pool named broker but labelled dual-role: labels win over the owner name",
			pod:  roleStrimziPod("my-cluster-broker-7", "true", "true"), wantRole: diagnose.RoleCombined, wantNodeID: "7",
		},
		{
			name:     "env combined, any order and spacing",
			pod:      rolePlainPod("kafka-0", "kafka", roleEnv("KAFKA_PROCESS_ROLES", "controller, broker", "KAFKA_NODE_ID", "3")...),
			wantRole: diagnose.RoleCombined, wantNodeID: "3",
			wantSource: []string{"env KAFKA_PROCESS_ROLES=controller, broker", "env KAFKA_NODE_ID"},
		},
		{
			name: "owner name ignored when a label speaks",
			pod: func() *corev1.Pod {
				p := bitnamiNoEnv("foobar-kafka-controller-0", "controller-eligible")
				p.OwnerReferences[0].Name = "misnamed-broker"
				return p
			}(),
			wantRole: diagnose.RoleUnknown, wantNodeID: "100", wantSource: []string{"controller or combined"},
		},
		{
			name:     "env and label conflict: unknown, both named",
			pod:      inspBitnamiPod("kafka", "foobar-kafka-broker-0", "broker", roleEnv("KAFKA_CFG_PROCESS_ROLES", "controller")...),
			wantRole: diagnose.RoleUnknown, wantNodeID: "100",
			wantSource: []string{"conflicting", "KAFKA_CFG_PROCESS_ROLES=controller", "component=broker"},
		},
		{
			name:     "ZooKeeper mode",
			pod:      inspBitnamiPod("kafka", "foobar-kafka-broker-0", "broker", roleEnv("KAFKA_CFG_ZOOKEEPER_CONNECT", "zk:2181", "KAFKA_CFG_BROKER_ID", "0")...),
			wantRole: diagnose.RoleZooKeeper, wantNodeID: "0",
			wantSource: []string{"KAFKA_CFG_ZOOKEEPER_CONNECT"},
		},
		{
			name:     "unparseable process.roles",
			pod:      rolePlainPod("kafka-0", "kafka", roleEnv("KAFKA_PROCESS_ROLES", "brokers")...),
			wantRole: diagnose.RoleUnknown, wantSource: []string{`"brokers"`},
		},
		{
			name: "process.roles from a ConfigMap is not resolved", pod: valueFromRoles,
			wantRole: diagnose.RoleUnknown, wantSource: []string{"unknown"},
		},
		{
			name: "nothing to go on", pod: rolePlainPod("kafka-0", "kafka"),
			wantRole: diagnose.RoleUnknown, wantNodeID: "", wantSource: []string{"no process.roles env or role label"},
		},
		{
			name:     "conflicting node ids: none",
			pod:      rolePlainPod("kafka-0", "", roleEnv("KAFKA_PROCESS_ROLES", "broker", "KAFKA_NODE_ID", "1", "KAFKA_BROKER_ID", "2")...),
			wantRole: diagnose.RoleBroker, wantNodeID: "", wantSource: []string{"conflicting env KAFKA_NODE_ID, env KAFKA_BROKER_ID: 1, 2"},
		},
		{
			name:     "agreeing node ids",
			pod:      rolePlainPod("kafka-0", "", roleEnv("KAFKA_PROCESS_ROLES", "broker", "KAFKA_NODE_ID", "4", "KAFKA_BROKER_ID", "4")...),
			wantRole: diagnose.RoleBroker, wantNodeID: "4",
		},
		{
			name:     "non-numeric node id: none",
			pod:      rolePlainPod("kafka-0", "", roleEnv("KAFKA_PROCESS_ROLES", "broker", "KAFKA_NODE_ID", "$(POD_ORDINAL)")...),
			wantRole: diagnose.RoleBroker, wantNodeID: "", wantSource: []string{"not a number"},
		},
		{
			name: "plain pod: no ordinal rule, no node id", pod: rolePlainPod("kafka-2", "kafka", roleEnv("KAFKA_PROCESS_ROLES", "broker")...),
			wantRole: diagnose.RoleBroker, wantNodeID: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			role, nodeID, source := RoleOf(tt.pod)
			if role != tt.wantRole || nodeID != tt.wantNodeID {
				t.Errorf("RoleOf = %q, node id %q; want %q, %q (source %q)", role, nodeID, tt.wantRole, tt.wantNodeID, source)
			}
			for _, s := range tt.wantSource {
				if !strings.Contains(source, s) {
					t.Errorf("source %q does not contain %q", source, s)
				}
			}
		})
	}
}

func TestKafkaContainerName(t *testing.T) {
	pod := func(containers ...corev1.Container) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: containers}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"named kafka among sidecars", pod(corev1.Container{Name: "jmx-exporter", Image: "bitnami/jmx-exporter"}, corev1.Container{Name: "kafka", Image: "bitnami/kafka"}), "kafka"},
		{"named broker", pod(corev1.Container{Name: "istio-proxy", Image: "istio/proxyv2"}, corev1.Container{Name: "broker", Image: "x/y"}), "broker"},
		{"by image, exporter skipped", pod(corev1.Container{Name: "exporter", Image: "danielqsj/kafka-exporter"}, corev1.Container{Name: "main", Image: "confluentinc/cp-kafka:7.6.0"}), "main"},
		{"only container", pod(corev1.Container{Name: "server", Image: "registry.local/streaming:1"}), "server"},
		{"two candidates by image: unsure", pod(corev1.Container{Name: "a", Image: "apache/kafka"}, corev1.Container{Name: "b", Image: "apache/kafka"}), ""},
		{"nothing recognisable", pod(corev1.Container{Name: "a", Image: "x"}, corev1.Container{Name: "b", Image: "y"}), ""},
	}
	for _, tt := range tests {
		if got := KafkaContainerName(tt.pod); got != tt.want {
			t.Errorf("%s: KafkaContainerName = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// RoleOf must answer the same from a pod slimmed to RoleEnvNames (what an
// informer cache keeps) as from the full pod.
func TestRoleOfNeedsOnlyRoleEnvNames(t *testing.T) {
	keep := map[string]bool{}
	for _, n := range RoleEnvNames() {
		keep[n] = true
	}
	slim := func(cs []corev1.Container) {
		for i := range cs {
			var env []corev1.EnvVar
			for _, e := range cs[i].Env {
				if keep[e.Name] {
					env = append(env, e)
				}
			}
			cs[i].Env = env
		}
	}
	for _, full := range []*corev1.Pod{
		inspSeedPod(),
		inspBitnamiPod("kafka", "foobar-kafka-broker-3", "broker", roleEnv("KAFKA_HEAP_OPTS", "-Xmx1g")...),
		rolePlainPod("kafka-0", "", roleEnv("KAFKA_PROCESS_ROLES", "broker,controller", "KAFKA_NODE_ID", "2", "KAFKA_LISTENERS", "x")...),
	} {
		p := full.DeepCopy()
		slim(p.Spec.Containers)
		slim(p.Spec.InitContainers)
		r1, id1, s1 := RoleOf(full)
		r2, id2, s2 := RoleOf(p)
		if r1 != r2 || id1 != id2 || s1 != s2 {
			t.Errorf("%s: full pod %q %q %q, slimmed %q %q %q", full.Name, r1, id1, s1, r2, id2, s2)
		}
		if id1 == "" {
			t.Errorf("%s: fixture has no node id; the test would prove nothing about it", full.Name)
		}
	}
}

func TestKafkaContainerNameAnnotation(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka"}, {Name: "server", Image: "custom/streaming"}}}}
	p.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "server"}
	if got := KafkaContainerName(p); got != "server" {
		t.Errorf("KafkaContainerName = %q, want the annotated container", got)
	}
	p.Annotations["kubectl.kubernetes.io/default-container"] = "missing"
	if got := KafkaContainerName(p); got != "kafka" {
		t.Errorf("annotation naming no container: KafkaContainerName = %q, want kafka", got)
	}
}

// TestSafety05_StatefulSetNameIsNotRoleEvidence: a pod whose only clue is
// its StatefulSet's name ("…-broker") must not be taken for a broker-only
// node, since a set of combined nodes can carry any name; before the fix
// RoleOf answered RoleBroker and the automated move was offered.
func TestSafety05_StatefulSetNameIsNotRoleEvidence(t *testing.T) {
	for _, owner := range []string{"events-broker", "events-controller"} {
		pod := rolePlainPod(owner+"-1", owner)
		role, _, source := RoleOf(pod)
		if role != diagnose.RoleUnknown {
			t.Errorf("owner %s alone: role %s, want unknown (source %q)", owner, role, source)
		}
		if !strings.Contains(source, "owner StatefulSet "+owner) || !strings.Contains(source, "not evidence") {
			t.Errorf("owner %s alone: source %q does not say the name is not evidence", owner, source)
		}
	}
}

func TestClusterIDOf(t *testing.T) {
	tests := []struct {
		name string
		env  []corev1.EnvVar
		want string
	}{
		{"bitnami", roleEnv("KAFKA_KRAFT_CLUSTER_ID", "kJg2V9xTRAeZ3vjY0Qh5Mw"), "kJg2V9xTRAeZ3vjY0Qh5Mw"},
		{"apache", roleEnv("CLUSTER_ID", "p8fFEbKGQ22B6M_Da_vCBw"), "p8fFEbKGQ22B6M_Da_vCBw"},
		{"two that agree", roleEnv("CLUSTER_ID", "a1", "KAFKA_CLUSTER_ID", "a1"), "a1"},
		{"two that disagree: none", roleEnv("CLUSTER_ID", "a1", "KAFKA_CLUSTER_ID", "b2"), ""},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		if got := ClusterIDOf(rolePlainPod("kafka-0", "", tt.env...)); got != tt.want {
			t.Errorf("%s: ClusterIDOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
