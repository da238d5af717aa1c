// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Names a Kafka container commonly has, most specific first.
var kafkaContainerNames = []string{"kafka", "broker", "controller", "kafka-broker", "kafka-controller"}

// defaultContainerAnnotation names a pod's main container (kubectl's
// convention); when set it names the Kafka container.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// KafkaContainerName returns the name of the container that runs Kafka:
// the one the kubectl.kubernetes.io/default-container annotation names;
// else the one named kafka, broker or controller; else the only one whose
// image mentions kafka (exporters excluded); else the pod's only
// container; else "" (the pod does not say).
func KafkaContainerName(pod *corev1.Pod) string {
	cs := pod.Spec.Containers
	if want := pod.Annotations[defaultContainerAnnotation]; want != "" {
		for _, c := range cs {
			if c.Name == want {
				return c.Name
			}
		}
	}
	for _, want := range kafkaContainerNames {
		for _, c := range cs {
			if c.Name == want {
				return c.Name
			}
		}
	}
	var byImage []string
	for _, c := range cs {
		img := strings.ToLower(c.Image)
		if strings.Contains(img, "kafka") && !strings.Contains(img, "exporter") {
			byImage = append(byImage, c.Name)
		}
	}
	if len(byImage) == 1 {
		return byImage[0]
	}
	if len(cs) == 1 {
		return cs[0].Name
	}
	return ""
}

// roleSet is a set of roles a piece of evidence allows.
type roleSet uint8

const (
	roleSetBroker roleSet = 1 << iota
	roleSetController
	roleSetCombined
	roleSetZooKeeper
)

var roleSetNames = []struct {
	bit  roleSet
	role diagnose.Role
}{
	{roleSetBroker, diagnose.RoleBroker},
	{roleSetController, diagnose.RoleController},
	{roleSetCombined, diagnose.RoleCombined},
	{roleSetZooKeeper, diagnose.RoleZooKeeper},
}

// single returns the one role of the set, or false when it holds zero or
// several.
func (s roleSet) single() (diagnose.Role, bool) {
	for _, r := range roleSetNames {
		if s == r.bit {
			return r.role, true
		}
	}
	return diagnose.RoleUnknown, false
}

func (s roleSet) String() string {
	var names []string
	for _, r := range roleSetNames {
		if s&r.bit != 0 {
			names = append(names, string(r.role))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " or ")
}

// roleClue is one piece of evidence about a pod's role.
type roleClue struct {
	allows roleSet
	from   string // e.g. "env KAFKA_CFG_PROCESS_ROLES=broker"
}

// Environment variables that carry process.roles, node.id and
// zookeeper.connect in the Bitnami, Apache and Confluent images.
var (
	processRolesEnv = []string{"KAFKA_CFG_PROCESS_ROLES", "KAFKA_PROCESS_ROLES"}
	nodeIDEnv       = []string{"KAFKA_CFG_NODE_ID", "KAFKA_NODE_ID", "KAFKA_CFG_BROKER_ID", "KAFKA_BROKER_ID"}
	zooKeeperEnv    = []string{"KAFKA_CFG_ZOOKEEPER_CONNECT", "KAFKA_ZOOKEEPER_CONNECT"}
)

// bitnamiMinIDEnv is the Bitnami chart's base node id, set on its init container.
const bitnamiMinIDEnv = "KAFKA_MIN_ID"

// RoleEnvNames returns the environment variables RoleOf reads: those of
// the Kafka container, and KAFKA_MIN_ID of any container. A cache that
// slims pods must keep their literal values for RoleOf to answer the same.
func RoleEnvNames() []string {
	names := slices.Concat(processRolesEnv, nodeIDEnv, zooKeeperEnv)
	return append(names, bitnamiMinIDEnv)
}

// RoleOf tells a Kafka pod's KRaft role and node id from the pod object
// alone, and says where they came from. It never guesses: evidence that
// conflicts, or that allows several roles (a Bitnami "controller-eligible"
// pod is a controller or a combined node), gives RoleUnknown, and a node
// id is only given when the pod states it or a layout's rule fixes it.
//
// Role evidence, all of which must agree:
//   - process.roles in the Kafka container's literal env
//     (KAFKA_CFG_PROCESS_ROLES, KAFKA_PROCESS_ROLES): "broker,controller"
//     is combined; zookeeper.connect without process.roles is ZooKeeper mode;
//   - Strimzi labels strimzi.io/broker-role and strimzi.io/controller-role;
//   - Bitnami label app.kubernetes.io/component: broker or controller-eligible.
//
// The name of the controlling StatefulSet or StrimziPodSet ("…-broker") is
// not evidence: anyone can name a set of combined nodes "kafka-broker", so a
// pod with nothing but such a name is RoleUnknown (the source says so).
//
// Node id: KAFKA_CFG_NODE_ID, KAFKA_NODE_ID or *BROKER_ID env; Strimzi's
// pod-name suffix; Bitnami's KAFKA_MIN_ID + pod ordinal.
func RoleOf(pod *corev1.Pod) (role diagnose.Role, nodeID string, source string) {
	env := kafkaLiteralEnv(pod)
	role, roleFrom := roleFromClues(pod, env)
	nodeID, idFrom := nodeIDOf(pod, env)
	source = "role: " + roleFrom
	if idFrom != "" {
		source += "; node id: " + idFrom
	}
	return role, nodeID, source
}

// roleFromClues combines the role evidence of a pod.
func roleFromClues(pod *corev1.Pod, env map[string]string) (diagnose.Role, string) {
	clues := roleClues(pod, env)
	if len(clues) == 0 {
		if owner := roleNamedOwner(pod); owner != "" {
			return diagnose.RoleUnknown, "unknown (no process.roles env or role label; " + owner + " is only a name, not evidence of role)"
		}
		return diagnose.RoleUnknown, "unknown (no process.roles env or role label)"
	}
	allowed := roleSetBroker | roleSetController | roleSetCombined | roleSetZooKeeper
	from := make([]string, len(clues))
	for i, c := range clues {
		allowed &= c.allows
		from[i] = c.from
	}
	evidence := strings.Join(from, ", ")
	if r, ok := allowed.single(); ok {
		return r, evidence
	}
	if allowed == 0 && len(clues) == 1 {
		return diagnose.RoleUnknown, "unknown (" + evidence + ")"
	}
	if allowed == 0 {
		details := make([]string, len(clues))
		for i, c := range clues {
			details[i] = fmt.Sprintf("%s says %s", c.from, c.allows)
		}
		return diagnose.RoleUnknown, "unknown (conflicting evidence: " + strings.Join(details, "; ") + ")"
	}
	return diagnose.RoleUnknown, fmt.Sprintf("unknown (%s: %s)", evidence, allowed)
}

// roleClues gathers the role evidence of a pod, strongest first.
func roleClues(pod *corev1.Pod, env map[string]string) []roleClue {
	var clues []roleClue
	if name, v, ok := firstEnv(env, processRolesEnv); ok {
		if s, ok := parseProcessRoles(v); ok {
			clues = append(clues, roleClue{s, fmt.Sprintf("env %s=%s", name, v)})
		} else {
			clues = append(clues, roleClue{0, fmt.Sprintf("env %s=%q (not a process.roles value)", name, v)})
		}
	}
	l := pod.Labels
	b, hasB := l["strimzi.io/broker-role"]
	c, hasC := l["strimzi.io/controller-role"]
	if hasB || hasC {
		var s roleSet
		switch {
		case b == "true" && c == "true":
			s = roleSetCombined
		case b == "true":
			s = roleSetBroker
		case c == "true":
			s = roleSetController
		}
		clues = append(clues, roleClue{s, fmt.Sprintf("labels strimzi.io/broker-role=%q, strimzi.io/controller-role=%q", b, c)})
	}
	if l["app.kubernetes.io/name"] == "kafka" {
		switch comp := l["app.kubernetes.io/component"]; comp {
		case "broker":
			clues = append(clues, roleClue{roleSetBroker, "label app.kubernetes.io/component=broker"})
		case "controller-eligible":
			clues = append(clues, roleClue{roleSetController | roleSetCombined, "label app.kubernetes.io/component=controller-eligible"})
		}
	}
	// ZooKeeper mode: a broker without process.roles that is told where
	// ZooKeeper is.
	if _, _, hasRoles := firstEnv(env, processRolesEnv); !hasRoles {
		if name, _, ok := firstEnv(env, zooKeeperEnv); ok {
			zk := roleClue{roleSetZooKeeper, "env " + name + " set, no process.roles"}
			for i := range clues {
				if clues[i].allows&roleSetBroker != 0 {
					clues[i].allows |= roleSetZooKeeper // a ZooKeeper-mode node is a broker
				}
			}
			clues = append(clues, zk)
		}
	}
	return clues
}

// roleNamedOwner names the StatefulSet or StrimziPodSet controlling the pod
// when its name looks like a role ("…-broker", "…-controller"), for the
// explanation only: a name is never taken as the role.
func roleNamedOwner(pod *corev1.Pod) string {
	for _, o := range pod.OwnerReferences {
		if (o.Kind == "StatefulSet" || o.Kind == "StrimziPodSet") &&
			(strings.HasSuffix(o.Name, "-broker") || strings.HasSuffix(o.Name, "-controller")) {
			return fmt.Sprintf("owner %s %s", o.Kind, o.Name)
		}
	}
	return ""
}

// parseProcessRoles maps a process.roles value to a role set.
func parseProcessRoles(v string) (roleSet, bool) {
	var broker, controller bool
	for _, part := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(part)) {
		case "broker":
			broker = true
		case "controller":
			controller = true
		default:
			return 0, false
		}
	}
	switch {
	case broker && controller:
		return roleSetCombined, true
	case broker:
		return roleSetBroker, true
	case controller:
		return roleSetController, true
	}
	return 0, false
}

// nodeIDOf returns the node id and where it came from, or "" for both.
func nodeIDOf(pod *corev1.Pod, env map[string]string) (string, string) {
	var ids []string
	var from []string
	for _, name := range nodeIDEnv {
		if v, ok := env[name]; ok {
			if !isNodeID(v) {
				return "", fmt.Sprintf("unknown (env %s=%q is not a number)", name, v)
			}
			ids = append(ids, v)
			from = append(from, "env "+name)
		}
	}
	if len(ids) > 0 {
		if uniq := slices.Compact(slices.Sorted(slices.Values(ids))); len(uniq) > 1 {
			return "", fmt.Sprintf("unknown (conflicting %s: %s)", strings.Join(from, ", "), strings.Join(ids, ", "))
		}
		return ids[0], strings.Join(from, ", ")
	}
	ordinal, hasOrdinal := podOrdinal(pod)
	if isStrimziKafkaNode(pod.Labels) && hasOrdinal {
		return strconv.Itoa(ordinal), "Strimzi pod-name suffix (Strimzi sets node.id to it)"
	}
	if minID, ok := bitnamiMinID(pod); ok && hasOrdinal {
		return strconv.Itoa(minID + ordinal), fmt.Sprintf(
			"Bitnami KAFKA_MIN_ID=%d + pod ordinal %d (the chart's rule; a meta.properties already on the volume wins)", minID, ordinal)
	}
	return "", ""
}

func isNodeID(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n >= 0 && strconv.Itoa(n) == v
}

// podOrdinal returns a StatefulSet-style pod's ordinal: the
// apps.kubernetes.io/pod-index label, else the name's numeric suffix.
func podOrdinal(pod *corev1.Pod) (int, bool) {
	if v, ok := pod.Labels["apps.kubernetes.io/pod-index"]; ok && isNodeID(v) {
		n, _ := strconv.Atoi(v)
		return n, true
	}
	_, n, ok := splitOrdinal(pod.Name)
	return n, ok
}

// bitnamiMinID returns KAFKA_MIN_ID from any container of a Bitnami Kafka
// pod (the chart sets it on its init container).
func bitnamiMinID(pod *corev1.Pod) (int, bool) {
	if pod.Labels["app.kubernetes.io/name"] != "kafka" {
		return 0, false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, e := range c.Env {
				if e.Name == bitnamiMinIDEnv && e.ValueFrom == nil && isNodeID(e.Value) {
					n, _ := strconv.Atoi(e.Value)
					return n, true
				}
			}
		}
	}
	return 0, false
}

// kafkaLiteralEnv returns the literal env values of the Kafka container.
// Values from ConfigMaps, Secrets or the downward API are not resolved.
func kafkaLiteralEnv(pod *corev1.Pod) map[string]string {
	name := KafkaContainerName(pod)
	env := map[string]string{}
	for _, c := range pod.Spec.Containers {
		if c.Name != name {
			continue
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				env[e.Name] = strings.TrimSpace(e.Value)
			}
		}
	}
	return env
}

// firstEnv returns the first of names present in env.
func firstEnv(env map[string]string, names []string) (name, value string, ok bool) {
	for _, n := range names {
		if v, ok := env[n]; ok {
			return n, v, true
		}
	}
	return "", "", false
}

// clusterIDEnv are the literal env variables that carry a KRaft cluster id
// in the Bitnami (KAFKA_KRAFT_CLUSTER_ID) and Apache (CLUSTER_ID) images.
var clusterIDEnv = []string{"KAFKA_KRAFT_CLUSTER_ID", "KAFKA_CLUSTER_ID", "CLUSTER_ID"}

// ClusterIDOf returns the cluster id the pod's Kafka container is told in
// its literal env, or "" when it is not told one, or told two different
// ones. The repair script then only checks that the volume's log dirs agree.
func ClusterIDOf(pod *corev1.Pod) string {
	env := kafkaLiteralEnv(pod)
	id := ""
	for _, name := range clusterIDEnv {
		v, ok := env[name]
		if !ok || v == "" {
			continue
		}
		if id != "" && v != id {
			return ""
		}
		id = v
	}
	return id
}
