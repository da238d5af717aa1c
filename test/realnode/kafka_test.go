// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/ociimage"
)

// The real Kafka cluster of a scenario: Bitnami's chart layout (volume at
// /bitnami/kafka, log dir /bitnami/kafka/data, uid 1001, node ids
// KAFKA_MIN_ID + ordinal, labels app.kubernetes.io/component), run from the
// image test/realnode/cmd/mkkafkaimage built for the version, with listeners
// on pod IPs. There is no DNS on the node: the controllers' addresses reach
// every node through a file the test writes at each volume's root once the
// controller pods have IPs (KAFKABOT_TEST_VOTERS_FILE, read by the image's
// entrypoint), the only test-specific part of the layout.
const (
	kafkaImageRepo = "kafkabot.local/kafka"
	// kafkaClusterID is the cluster id every node is formatted with.
	kafkaClusterID = "p8fFEbKGQ22B6M_Da_vCBw"
	votersFile     = "kafkabot-test-voters"
	// topic is the scenarios' topic: 3 partitions, replication factor 3
	// (every broker's, in a cluster of fewer brokers).
	topic      = "orders"
	topicParts = 3
	// records is how many records are written before each fault.
	records = 300
)

// kafkaLayout is how a cluster's nodes lay out their volumes, as a
// distribution does.
type kafkaLayout int

const (
	// bitnamiLayout: one volume at /bitnami/kafka, the log dir data on it,
	// node ids KAFKA_MIN_ID + ordinal (brokers from 100), labels
	// app.kubernetes.io/component.
	bitnamiLayout kafkaLayout = iota
	// strimziJBOD: Strimzi's KRaft layout. Brokers have two volumes
	// (/var/lib/kafka/data-0 and data-1, JBOD) with the log dir
	// kafka-log<node id> on each and the metadata log on the first;
	// controllers have data-0 only. The node id is the pod name's ordinal
	// (the broker StatefulSet's ordinals start at 100, as a Strimzi node
	// pool's ids can), and the pods carry Strimzi's labels.
	strimziJBOD
	// bitnamiAtRoot: Bitnami's layout with log.dirs at the volume root
	// (/bitnami/kafka), which Kafka accepts and where the repair has no
	// place outside the log dir for its backup.
	bitnamiAtRoot
)

// kafkaCluster is one real KRaft cluster in the kafka namespace: three
// controllers (ids 0-2) and brokers (ids 100+), or, combined, three
// broker+controller nodes (ids 0-2).
type kafkaCluster struct {
	t        *testing.T
	name     string
	version  string
	image    ociimage.Ref
	tools    string // hack/fetch-kafka.sh's run.sh for the version
	brokers  int
	combined bool
	layout   kafkaLayout
	// written holds the records written so far; topicCreated says the
	// topic exists.
	written      []string
	topicCreated bool
}

// on points the cluster's helpers at t (a subtest) until the returned
// function is called.
func (k *kafkaCluster) on(t *testing.T) func() {
	prev := k.t
	k.t = t
	return func() { k.t = prev }
}

// newKafkaCluster deploys a cluster and waits until Kafka's own tools see
// every node: a quorum leader, the controllers as voters, the brokers
// registered. It is removed when the test ends.
func newKafkaCluster(t *testing.T, name, version string, brokers int, combined bool, layout kafkaLayout) *kafkaCluster {
	t.Helper()
	img, ok := env.kafkaImages[version]
	if !ok {
		t.Fatalf("no Kafka %s image (hack/realnode.sh up builds REALNODE_KAFKA_VERSIONS)", version)
	}
	k := &kafkaCluster{t: t, name: name, version: version, image: img, brokers: brokers, combined: combined, layout: layout,
		tools: filepath.Join(env.repoRoot, ".cache", "kafka", version, "run.sh")}
	if _, err := os.Stat(k.tools); err != nil {
		t.Fatalf("Kafka %s's tools: %v (run hack/fetch-kafka.sh %s)", version, err, version)
	}
	t.Cleanup(k.remove)
	k.deploy()
	return k
}

func (k *kafkaCluster) controllerSet() string { return k.name + "-kafka-controller" }
func (k *kafkaCluster) brokerSet() string     { return k.name + "-kafka-broker" }

// pods lists the cluster's pod names: the controllers, then the brokers.
func (k *kafkaCluster) pods() []string {
	var out []string
	for i := range 3 {
		out = append(out, fmt.Sprintf("%s-%d", k.controllerSet(), i))
	}
	for i := range k.brokers {
		out = append(out, k.brokerPod(i))
	}
	return out
}

// templates are the volume claim templates of a pod's StatefulSet, the
// one holding the metadata log first, and mountPath where each is mounted.
func (k *kafkaCluster) templates(pod string) []string {
	switch {
	case k.layout != strimziJBOD:
		return []string{"data"}
	case strings.HasPrefix(pod, k.brokerSet()) || k.combined:
		return []string{"data-0", "data-1"}
	}
	return []string{"data-0"}
}
func (k *kafkaCluster) mountPath(template string) string {
	if k.layout != strimziJBOD {
		return "/bitnami/kafka"
	}
	return "/var/lib/kafka/" + template
}

// volumes are a pod's volumes on the node's disk, the one holding the
// metadata log first; volume is that one, claim its PersistentVolumeClaim,
// and logDir the Kafka log dir on it.
func (k *kafkaCluster) volumes(pod string) []string {
	var out []string
	for _, tpl := range k.templates(pod) {
		out = append(out, filepath.Join(env.stateDir, "volumes", tpl+"-"+pod))
	}
	return out
}
func (k *kafkaCluster) volume(pod string) string { return k.volumes(pod)[0] }
func (k *kafkaCluster) claim(pod string) string  { return k.templates(pod)[0] + "-" + pod }
func (k *kafkaCluster) logDir(pod string) string {
	switch k.layout {
	case bitnamiAtRoot:
		return k.volume(pod)
	case bitnamiLayout:
		return filepath.Join(k.volume(pod), "data")
	}
	return filepath.Join(k.volume(pod), "kafka-log"+strconv.Itoa(k.nodeID(pod)))
}

// brokerPod is the name of broker i's pod and nodeID its node id.
func (k *kafkaCluster) brokerPod(i int) string {
	if k.layout == strimziJBOD {
		i += 100
	}
	return fmt.Sprintf("%s-%d", k.brokerSet(), i)
}
func (k *kafkaCluster) nodeID(pod string) int {
	n, _ := strconv.Atoi(pod[strings.LastIndex(pod, "-")+1:])
	if k.layout != strimziJBOD && strings.HasPrefix(pod, k.brokerSet()) {
		return 100 + n
	}
	return n
}

// scenario is the existing scenario helpers' view of one node of the
// cluster (its crash loop, back-off, pod).
func (k *kafkaCluster) scenario(pod string) *scenario {
	return &scenario{t: k.t, cluster: k.name, layout: bitnami, nodeID: strconv.Itoa(k.nodeID(pod)), broker: pod}
}

func (k *kafkaCluster) ctx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	k.t.Cleanup(cancel)
	return ctx
}

func (k *kafkaCluster) deploy() {
	t := k.t
	t.Helper()
	start := time.Now()
	ctx := k.ctx(10 * time.Minute)
	for _, p := range k.pods() {
		for i, v := range k.volumes(p) {
			if err := os.RemoveAll(v); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(v, 0o775); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(v, kafkaUID, kafkaUID); err != nil {
				t.Fatal(err)
			}
			k.createPV(ctx, k.templates(p)[i]+"-"+p, v)
		}
	}
	ctrlRoles := "controller"
	if k.combined {
		ctrlRoles = "broker,controller"
	}
	sets := []*appsv1.StatefulSet{k.statefulSet(k.controllerSet(), 3, ctrlRoles, "controller-eligible", 0)}
	if k.brokers > 0 {
		sets = append(sets, k.statefulSet(k.brokerSet(), int32(k.brokers), "broker", "broker", 100))
	}
	if k.layout == strimziJBOD {
		// Strimzi's node ids are the pod ordinals: the brokers' start at 100.
		sets[len(sets)-1].Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 100}
	}
	for _, s := range sets {
		if _, err := env.admin.AppsV1().StatefulSets(kafkaNS).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The controllers' pod IPs, written where every node's entrypoint waits
	// for them.
	ips := make([]string, 3)
	if err := waitFor(ctx, 2*time.Minute, func() (bool, error) {
		for i := range ips {
			p, err := env.admin.CoreV1().Pods(kafkaNS).Get(ctx, fmt.Sprintf("%s-%d", k.controllerSet(), i), metav1.GetOptions{})
			if err != nil || p.Status.PodIP == "" {
				return false, nil
			}
			ips[i] = p.Status.PodIP
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the controllers got no pod IPs: %v", err)
	}
	var voters []string
	for i, ip := range ips {
		voters = append(voters, fmt.Sprintf("%d@%s:9093", i, ip))
	}
	for _, p := range k.pods() {
		path := filepath.Join(k.volume(p), votersFile)
		if err := os.WriteFile(path, []byte(strings.Join(voters, ",")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, kafkaUID, kafkaUID); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitFor(ctx, 6*time.Minute, func() (bool, error) {
		for _, p := range k.pods() {
			pod, err := env.admin.CoreV1().Pods(kafkaNS).Get(ctx, p, metav1.GetOptions{})
			if err != nil || !kube.PodReady(pod) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		k.dump()
		t.Fatalf("the Kafka %s pods did not become Ready: %v", k.version, err)
	}
	ready := time.Since(start)
	// Kafka's own view: every broker registered and unfenced.
	if err := waitFor(ctx, 3*time.Minute, func() (bool, error) {
		return len(k.unfencedBrokers()) == k.brokerCount(), nil
	}); err != nil {
		k.dump()
		t.Fatalf("Kafka %s: brokers %v registered and unfenced, want %d", k.version, k.unfencedBrokers(), k.brokerCount())
	}
	measure(t, "Kafka "+k.version+" cluster: deploy to every pod Ready", ready)
	measure(t, "Kafka "+k.version+" cluster: deploy to every broker unfenced", time.Since(start))
}

// brokerCount is how many nodes have the broker role.
func (k *kafkaCluster) brokerCount() int {
	if k.combined {
		return 3
	}
	return k.brokers
}

// replicationFactor is the topics' replication factor: 3, or every broker
// of a smaller cluster; minISR is their min.insync.replicas: 2, or 1 with a
// single replica.
func (k *kafkaCluster) replicationFactor() int { return min(3, k.brokerCount()) }
func (k *kafkaCluster) minISR() int            { return min(2, k.replicationFactor()) }

// replicas is how many nodes the StatefulSet set runs when none is stopped.
func (k *kafkaCluster) replicas(set string) int32 {
	if set == k.brokerSet() {
		return int32(k.brokers)
	}
	return 3
}

// brokerPods are the pods with the broker role.
func (k *kafkaCluster) brokerPods() []string {
	if k.combined {
		return k.pods()[:3]
	}
	return k.pods()[3:]
}

// createPV creates the local PersistentVolume at path on the node's disk,
// bound to claim.
func (k *kafkaCluster) createPV(ctx context.Context, claim, path string) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "realnode-" + claim},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              storageClass,
			ClaimRef:                      &corev1.ObjectReference{Namespace: kafkaNS, Name: claim},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{env.nodeName}}},
			}}}},
		},
	}
	if _, err := env.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// statefulSet is a StatefulSet of real Kafka nodes as the cluster's
// layout has them: Bitnami's chart (component, KAFKA_MIN_ID), or
// Strimzi's node pool (labels, KAFKA_LAYOUT=strimzi; the node id is the
// ordinal, which the caller sets).
func (k *kafkaCluster) statefulSet(name string, replicas int32, roles, component string, minID int) *appsv1.StatefulSet {
	labels := map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": k.name, "app.kubernetes.io/component": component}
	pod := name + "-0"
	logDirs := "/bitnami/kafka/data"
	if k.layout == bitnamiAtRoot {
		logDirs = "/bitnami/kafka"
	}
	layoutVars := []corev1.EnvVar{{Name: "KAFKA_MIN_ID", Value: strconv.Itoa(minID)}, {Name: "KAFKA_CFG_LOG_DIRS", Value: logDirs}}
	if k.layout == strimziJBOD {
		broker, controller := strings.Contains(roles, "broker"), strings.Contains(roles, "controller")
		pool := "controller"
		if broker {
			pool, pod = "broker", name+"-100"
		}
		labels = map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": k.name,
			"strimzi.io/cluster": k.name, "strimzi.io/kind": "Kafka", "strimzi.io/name": k.name + "-kafka", "strimzi.io/pool-name": pool,
			"strimzi.io/broker-role": strconv.FormatBool(broker), "strimzi.io/controller-role": strconv.FormatBool(controller)}
		layoutVars = []corev1.EnvVar{{Name: "KAFKA_LAYOUT", Value: "strimzi"}}
	}
	vars := append([]corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "KAFKA_CFG_PROCESS_ROLES", Value: roles},
		{Name: "KAFKA_KRAFT_CLUSTER_ID", Value: kafkaClusterID},
		{Name: "KAFKABOT_TEST_VOTERS_FILE", Value: k.mountPath(k.templates(pod)[0]) + "/" + votersFile}},
		layoutVars...)
	vars = append(vars, []corev1.EnvVar{
		{Name: "KAFKA_CFG_CONTROLLER_LISTENER_NAMES", Value: "CONTROLLER"},
		{Name: "KAFKA_CFG_LISTENER_SECURITY_PROTOCOL_MAP", Value: "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"},
		{Name: "KAFKA_CFG_OFFSETS_TOPIC_REPLICATION_FACTOR", Value: strconv.Itoa(k.replicationFactor())},
		{Name: "KAFKA_CFG_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", Value: strconv.Itoa(k.replicationFactor())},
		{Name: "KAFKA_CFG_TRANSACTION_STATE_LOG_MIN_ISR", Value: strconv.Itoa(k.minISR())},
		{Name: "KAFKA_CFG_AUTO_CREATE_TOPICS_ENABLE", Value: "false"},
		{Name: "KAFKA_CFG_BROKER_RACK", Value: "$(POD_NAME)"},
		{Name: "KAFKA_CFG_REPLICA_SELECTOR_CLASS", Value: "org.apache.kafka.common.replica.RackAwareReplicaSelector"},
		// Kafka's quorum and session timeouts (defaults 2 s fetch, 1 s
		// election, 2 s request, 9 s broker session) are for an idle
		// machine: on this loaded 2-core node a CI run's fresh 4.4.0
		// cluster changed leaders and timed out broker registrations for 4
		// minutes and never became Ready. Longer quorum timeouts let it form;
		// the broker session only doubles, as a restarted broker cannot
		// register again before its previous session has expired.
		{Name: "KAFKA_CFG_CONTROLLER_QUORUM_FETCH_TIMEOUT_MS", Value: "10000"},
		{Name: "KAFKA_CFG_CONTROLLER_QUORUM_ELECTION_TIMEOUT_MS", Value: "5000"},
		{Name: "KAFKA_CFG_CONTROLLER_QUORUM_REQUEST_TIMEOUT_MS", Value: "10000"},
		{Name: "KAFKA_CFG_BROKER_SESSION_TIMEOUT_MS", Value: "18000"},
		{Name: "KAFKA_HEAP_OPTS", Value: "-Xmx256m -Xms64m"},
		{Name: "KAFKA_OPTS", Value: "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k"},
	}...)
	var listeners, ports []string
	if strings.Contains(roles, "broker") {
		listeners = append(listeners, "PLAINTEXT://$(POD_IP):9092")
		ports = append(ports, "9092")
		vars = append(vars,
			corev1.EnvVar{Name: "KAFKA_CFG_ADVERTISED_LISTENERS", Value: "PLAINTEXT://$(POD_IP):9092"},
			corev1.EnvVar{Name: "KAFKA_CFG_INTER_BROKER_LISTENER_NAME", Value: "PLAINTEXT"})
	}
	if strings.Contains(roles, "controller") {
		listeners = append(listeners, "CONTROLLER://$(POD_IP):9093")
		ports = append(ports, "9093")
	}
	vars = append(vars, corev1.EnvVar{Name: "KAFKA_CFG_LISTENERS", Value: strings.Join(listeners, ",")})
	probePort := int32(9093)
	if ports[0] == "9092" {
		probePort = 9092
	}
	c := corev1.Container{
		Name:            "kafka",
		Image:           kafkaImageRepo + "@" + k.image.ManifestDigest,
		ImagePullPolicy: corev1.PullNever,
		Env:             vars,
		Ports:           []corev1.ContainerPort{{Name: "kafka", ContainerPort: probePort}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(probePort)}},
			PeriodSeconds: 2, FailureThreshold: 3,
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "empty-dir", MountPath: "/tmp"}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			RunAsNonRoot:             ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         name + "-headless",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsUser: ptr.To[int64](kafkaUID), RunAsGroup: ptr.To[int64](kafkaUID), FSGroup: ptr.To[int64](kafkaUID),
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{c},
					Volumes:    []corev1.Volume{{Name: "empty-dir", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
	for _, tpl := range k.templates(pod) {
		c := &sts.Spec.Template.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tpl, MountPath: k.mountPath(tpl)})
		sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: tpl},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(storageClass),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
	}
	return sts
}

// remove deletes the StatefulSets, claims and volumes.
func (k *kafkaCluster) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, s := range []string{k.brokerSet(), k.controllerSet()} {
		_ = env.admin.AppsV1().StatefulSets(kafkaNS).Delete(ctx, s, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
	}
	_ = waitFor(ctx, 2*time.Minute, func() (bool, error) {
		list, err := env.admin.CoreV1().Pods(kafkaNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + k.name})
		return err == nil && len(list.Items) == 0, nil
	})
	for _, p := range k.pods() {
		for _, tpl := range k.templates(p) {
			_ = env.admin.CoreV1().PersistentVolumeClaims(kafkaNS).Delete(ctx, tpl+"-"+p, metav1.DeleteOptions{})
			_ = env.admin.CoreV1().PersistentVolumes().Delete(ctx, "realnode-"+tpl+"-"+p, metav1.DeleteOptions{})
		}
	}
}

// dump prints the cluster's pods and the last lines of each node's log.
func (k *kafkaCluster) dump() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := env.run(ctx, "-n", kafkaNS, "get", "pods", "-o", "wide", "-l", "app.kubernetes.io/instance="+k.name)
	k.t.Logf("pods:\n%s", out)
	for _, p := range k.pods() {
		out, _ := env.run(ctx, "-n", kafkaNS, "logs", p, "--tail=25")
		k.t.Logf("--- %s:\n%s", p, out)
	}
}

// ---- Kafka's own tools -----------------------------------------------------

// tool runs a Kafka main class of the cluster's version against the
// cluster, with stdin, and returns its stdout (stderr on failure).
func (k *kafkaCluster) tool(timeout time.Duration, stdin string, class string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir := filepath.Dir(k.tools)
	logging, err := toolLogging(dir)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "java"), append([]string{"-Xmx128m", "-XX:TieredStopAtLevel=1",
		"-XX:+UseSerialGC", logging, "-cp", filepath.Join(dir, "libs", "*"), class}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s%s", class, strings.Join(args, " "), err, stdout.String(), lastLines(stderr.String(), 15))
	}
	return stdout.String(), nil
}

// toolLogging writes a log config for Kafka's tools of the version in dir
// that sends warnings and errors to stderr (run.sh's config logs INFO to
// stdout, where the tools print their results), and returns the java flag
// that selects it.
func toolLogging(dir string) (string, error) {
	path := filepath.Join(os.TempDir(), "kafkabot-realnode-tools-log4j2.properties")
	flag, config := "-Dlog4j2.configurationFile="+path, "status = warn\n"+
		"appender.err.type = Console\nappender.err.name = STDERR\nappender.err.target = SYSTEM_ERR\n"+
		"appender.err.layout.type = PatternLayout\nappender.err.layout.pattern = [%d] %p %m (%c)%n\n"+
		"rootLogger.level = WARN\nrootLogger.appenderRef.err.ref = STDERR\n"
	if _, err := os.Stat(filepath.Join(dir, "log4j.properties")); err == nil {
		path = filepath.Join(os.TempDir(), "kafkabot-realnode-tools-log4j.properties")
		flag, config = "-Dlog4j.configuration=file:"+path, "log4j.rootLogger=WARN, stderr\n"+
			"log4j.appender.stderr=org.apache.log4j.ConsoleAppender\nlog4j.appender.stderr.Target=System.err\n"+
			"log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"+
			"log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
	}
	return flag, os.WriteFile(path, []byte(config), 0o644)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// class names a tool's main class in the cluster's version.
func (k *kafkaCluster) class(tool string) string {
	v3 := strings.HasPrefix(k.version, "3.")
	switch tool {
	case "producer":
		if v3 {
			return "kafka.tools.ConsoleProducer"
		}
		return "org.apache.kafka.tools.ConsoleProducer"
	case "consumer":
		if v3 {
			return "kafka.tools.ConsoleConsumer"
		}
		return "org.apache.kafka.tools.consumer.ConsoleConsumer"
	case "apiversions":
		if v3 {
			return "kafka.admin.BrokerApiVersionsCommand"
		}
		return "org.apache.kafka.tools.BrokerApiVersionsCommand"
	}
	return "org.apache.kafka.tools." + tool
}

// bootstrap is every Ready broker's address but skip's (a crash-looping
// broker's address would make a tool's first connection fail).
func (k *kafkaCluster) bootstrap(skip ...string) string {
	var out []string
	for _, p := range k.brokerPods() {
		if containsString(skip, p) {
			continue
		}
		pod, err := env.admin.CoreV1().Pods(kafkaNS).Get(context.Background(), p, metav1.GetOptions{})
		if err == nil && pod.Status.PodIP != "" && kube.PodReady(pod) {
			out = append(out, pod.Status.PodIP+":9092")
		}
	}
	return strings.Join(out, ",")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unfencedBrokers lists the node ids in the metadata a broker serves (a
// fenced or unregistered broker is not in it), by BrokerApiVersionsCommand.
func (k *kafkaCluster) unfencedBrokers() []int {
	out, err := k.tool(time.Minute, "", k.class("apiversions"), "--bootstrap-server", k.bootstrap())
	if err != nil {
		return nil
	}
	var ids []int
	// "IP:9092 (id: 102 rack: R) -> (" (3.x, unfenced brokers only), or
	// "(id: 102 rack: R isFenced: false) -> (" (4.x lists fenced ones too).
	for _, m := range regexp.MustCompile(`\(id: (\d+) rack: ([^)]*)\) -> \(`).FindAllStringSubmatch(out, -1) {
		if strings.Contains(m[2], "isFenced: true") {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		ids = append(ids, n)
	}
	sort.Ints(ids)
	return ids
}

// quorumReplica is one row of `kafka-metadata-quorum describe --replication`.
type quorumReplica struct {
	NodeID int
	LEO    int64
	Lag    int64
	Status string // Leader, Follower, Observer
}

// replication reads the metadata quorum's replication state.
func (k *kafkaCluster) replication() ([]quorumReplica, error) {
	out, err := k.tool(time.Minute, "", k.class("MetadataQuorumCommand"), "--bootstrap-server", k.bootstrap(), "describe", "--replication")
	if err != nil {
		return nil, err
	}
	var rows []quorumReplica
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		// NodeId [DirectoryId] LogEndOffset Lag LastFetchTimestamp LastCaughtUpTimestamp Status
		var r quorumReplica
		r.NodeID, _ = strconv.Atoi(f[0])
		i := 1
		if len(f) >= 7 {
			i = 2 // 3.9+: a DirectoryId column
		}
		r.LEO, _ = strconv.ParseInt(f[i], 10, 64)
		r.Lag, _ = strconv.ParseInt(f[i+1], 10, 64)
		r.Status = f[len(f)-1]
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("describe --replication printed no rows:\n%s", out)
	}
	return rows, nil
}

// isr returns each partition's in-sync replicas of the topic.
func (k *kafkaCluster) isr() (map[int][]int, error) {
	out, err := k.tool(time.Minute, "", k.class("TopicCommand"), "--bootstrap-server", k.bootstrap(), "--describe", "--topic", topic)
	if err != nil {
		return nil, err
	}
	res := map[int][]int{}
	re := regexp.MustCompile(`Partition: (\d+)\s+Leader: \S+\s+Replicas: \S+\s+Isr: (\S+)`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[1])
		for _, id := range strings.Split(m[2], ",") {
			n, err := strconv.Atoi(id)
			if err == nil {
				res[p] = append(res[p], n)
			}
		}
	}
	if len(res) != topicParts {
		return nil, fmt.Errorf("describe shows %d partitions:\n%s", len(res), out)
	}
	return res, nil
}

// writeData creates the topic (replication factor 3, min ISR 2) the first
// time and writes records tagged tag with acks=all.
func (k *kafkaCluster) writeData(tag string) {
	t := k.t
	t.Helper()
	if !k.topicCreated {
		if out, err := k.tool(2*time.Minute, "", k.class("TopicCommand"), "--bootstrap-server", k.bootstrap(), "--create", "--topic", topic,
			"--partitions", strconv.Itoa(topicParts), "--replication-factor", strconv.Itoa(k.replicationFactor()),
			"--config", "min.insync.replicas="+strconv.Itoa(k.minISR())); err != nil {
			t.Fatalf("creating %s: %v\n%s", topic, err, out)
		}
		k.topicCreated = true
	}
	var in strings.Builder
	for i := range records {
		rec := fmt.Sprintf("%s-%s-record-%04d", k.name, tag, i)
		k.written = append(k.written, rec)
		in.WriteString(rec + "\n")
	}
	if out, err := k.tool(2*time.Minute, in.String(), k.class("producer"), "--bootstrap-server", k.bootstrap(), "--topic", topic,
		"--producer-property", "acks=all", "--producer-property", "linger.ms=5"); err != nil {
		t.Fatalf("producing: %v\n%s", err, out)
	}
	isr, err := k.isr()
	if err != nil {
		t.Fatal(err)
	}
	for p, r := range isr {
		if len(r) != k.replicationFactor() {
			t.Fatalf("partition %d's ISR is %v after the writes", p, r)
		}
	}
}

// readBack reads the topic from the beginning, fetching from pod's replica
// (client.rack is the pod's broker.rack, with the rack-aware replica
// selector), and checks every record written before the fault is there.
func (k *kafkaCluster) readBack(pod string) {
	t := k.t
	t.Helper()
	out, err := k.tool(2*time.Minute, "", k.class("consumer"), "--bootstrap-server", k.bootstrap(), "--topic", topic,
		"--from-beginning", "--max-messages", strconv.Itoa(len(k.written)), "--timeout-ms", "60000",
		"--consumer-property", "client.rack="+pod)
	if err != nil {
		t.Fatalf("reading %s back: %v", topic, err)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			got[l] = true
		}
	}
	missing := 0
	for _, r := range k.written {
		if !got[r] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d records written before the fault were not read back", missing, len(k.written))
	}
}

// scale sets the replicas of the StatefulSet set and returns; with fewer
// replicas the highest ordinals stop (Kafka's controlled shutdown, SIGTERM),
// which waitGone waits for. The StatefulSet controller writes the object's
// status meanwhile, so the update is retried on a conflict (CI saw "the
// object has been modified" here).
func (k *kafkaCluster) scale(set string, replicas int32) {
	ctx := k.ctx(3 * time.Minute)
	sets := env.admin.AppsV1().StatefulSets(kafkaNS)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := sets.Get(ctx, set, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = ptr.To(replicas)
		_, err = sets.Update(ctx, s, metav1.UpdateOptions{})
		return err
	}); err != nil {
		k.t.Fatalf("scaling %s to %d: %v", set, replicas, err)
	}
}

// waitGone waits until the pods no longer exist.
func (k *kafkaCluster) waitGone(pods ...string) {
	ctx := k.ctx(3 * time.Minute)
	if err := waitFor(ctx, 3*time.Minute, func() (bool, error) {
		for _, p := range pods {
			if _, err := env.admin.CoreV1().Pods(kafkaNS).Get(ctx, p, metav1.GetOptions{}); err == nil {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		k.t.Fatalf("%v did not stop: %v", pods, err)
	}
}

// recovered proves with Kafka's own tools that the node behind pod is back:
// registered and unfenced, an observer (or voter) of the metadata quorum
// with lag 0, every partition's ISR back to every broker but the ones down
// (known to be down meanwhile: every replica when none is), and every record
// written before the fault read back from its replica. It returns when
// that held.
func (k *kafkaCluster) recovered(pod string, timeout time.Duration, down ...string) time.Time {
	t := k.t
	t.Helper()
	id := k.nodeID(pod)
	var up []int
	for _, p := range k.brokerPods() {
		if !containsString(down, p) {
			up = append(up, k.nodeID(p))
		}
	}
	var last string
	ctx := k.ctx(timeout + time.Minute)
	if err := waitFor(ctx, timeout, func() (bool, error) {
		if !containsInt(k.unfencedBrokers(), id) {
			last = fmt.Sprintf("node %d is not registered and unfenced", id)
			return false, nil
		}
		rows, err := k.replication()
		if err != nil {
			last = err.Error()
			return false, nil
		}
		found := false
		for _, r := range rows {
			if r.NodeID == id {
				found = true
				if r.Lag != 0 {
					last = fmt.Sprintf("node %d's metadata lag is %d", id, r.Lag)
					return false, nil
				}
				if !k.combined && r.Status != "Observer" {
					last = fmt.Sprintf("node %d is a %s of the quorum, want Observer", id, r.Status)
					return false, nil
				}
			}
		}
		if !found {
			last = fmt.Sprintf("node %d is not in describe --replication: %+v", id, rows)
			return false, nil
		}
		isr, err := k.isr()
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for p, r := range isr {
			for _, n := range up {
				if !containsInt(r, n) {
					last = fmt.Sprintf("partition %d's ISR is %v, want %v in it", p, r, up)
					return false, nil
				}
			}
		}
		return true, nil
	}); err != nil {
		k.dump()
		t.Fatalf("node %d (%s) did not recover: %s", id, pod, last)
	}
	at := time.Now()
	k.readBack(pod)
	return at
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// kafkaImagesFile is what mkkafkaimage writes beside images.json.
func readKafkaImages(dir string) (map[string]ociimage.Ref, error) {
	b, err := os.ReadFile(filepath.Join(dir, "kafka-images.json"))
	if err != nil {
		return nil, fmt.Errorf("reading the Kafka image list (hack/realnode.sh up writes it): %w", err)
	}
	var refs []ociimage.Ref
	if err := json.Unmarshal(b, &refs); err != nil {
		return nil, err
	}
	out := map[string]ociimage.Ref{}
	for _, r := range refs {
		out[strings.TrimPrefix(r.Name, kafkaImageRepo+":")] = r
	}
	return out, nil
}
