// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The seed incident's cluster: the Bitnami chart's release "foobar" in
// KRaft mode, three controller-eligible nodes (ids 0-2) and two
// broker-only nodes (ids 100 and 101).
const (
	Namespace    = "kafka"
	Release      = "foobar"
	BrokerPod    = "foobar-kafka-broker-0"
	NeighbourPod = "foobar-kafka-broker-1"
	// BrokerNodeID is the crashing broker's node.id (KAFKA_MIN_ID 100 +
	// ordinal 0): the id in the seed incident's log.
	BrokerNodeID = 100
	// MetadataLog is the directory the repair moves out of the log dir.
	MetadataLog = "__cluster_metadata-0"
	// KafkaImage is the broker image of the seed incident's era.
	KafkaImage = "docker.io/bitnami/kafka:3.5.1-debian-11-r1"
	// MountPath is where the Bitnami chart mounts the data volume; the
	// log dir is its data/ sub-directory.
	MountPath = "/bitnami/kafka"

	brokerSet     = "foobar-kafka-broker"
	controllerSet = "foobar-kafka-controller"
	brokerMinID   = 100
	controllers   = 3
	brokers       = 2
	clusterID     = "oTs5c9wWQfKqkLr1OtpeLw"
)

//go:embed logs/*.log
var logFiles embed.FS

// CrashLog is the seed incident's log: the previous container of
// foobar-kafka-broker-0 (logs/SOURCES.md).
func CrashLog() string { return mustLog("34-kraft-metadata-log-unexpected-append-offset.log") }

// composePrefix is the service-name column docker compose prints before
// each line of a container's output; a pod's log has no such column.
var composePrefix = regexp.MustCompile(`(?m)^[A-Za-z0-9_.-]+ +\| `)

// StartupLog is a real broker-only KRaft node's startup log (RECOVERY ->
// RUNNING, "Kafka Server started"), shown as the recreated broker's log.
// It is another cluster's node (id 4), kept as recorded except for the
// docker compose prefix.
func StartupLog() string {
	return composePrefix.ReplaceAllString(mustLog("08-kraft-broker-only-node-startup-autocreate-no-hw-checkpoint.log"), "")
}

func mustLog(name string) string {
	b, err := logFiles.ReadFile("logs/" + name)
	if err != nil {
		panic(fmt.Sprintf("demo: embedded log %s: %v", name, err)) // a build defect, not a runtime condition
	}
	return string(b)
}

// SeedOptions configure Seed.
type SeedOptions struct {
	// VolumeRoot is the host directory under which each claim's contents
	// live (one sub-directory per claim).
	VolumeRoot string
	// CrashLog is the crashing broker's previous log (default CrashLog()).
	CrashLog string
}

// Seed creates the incident in c: namespace, StatefulSets, Ready
// controllers, a crash-looping broker-0 with the seed incident's log, a
// healthy broker-1, bound claims whose contents are host directories laid
// out like the Bitnami volume. Once deleted, broker-0 comes back Ready and
// logs StartupLog().
func Seed(ctx context.Context, c *Cluster, opts SeedOptions) error {
	if opts.CrashLog == "" {
		opts.CrashLog = CrashLog()
	}
	cs := c.Clientset
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	type set struct {
		name, component string
		replicas, minID int
	}
	for _, s := range []set{{controllerSet, "controller-eligible", controllers, 0}, {brokerSet, "broker", brokers, brokerMinID}} {
		sts, err := cs.AppsV1().StatefulSets(Namespace).Create(ctx, statefulSet(s.name, s.component, s.replicas), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating StatefulSet %s: %w", s.name, err)
		}
		for ordinal := range s.replicas {
			name := fmt.Sprintf("%s-%d", s.name, ordinal)
			claim := "data-" + name
			dir := filepath.Join(opts.VolumeRoot, claim)
			if err := layOutVolume(dir, s.minID+ordinal, s.component); err != nil {
				return err
			}
			if _, err := c.Kubelet.ProvisionClaim(ctx, Namespace, claim, dir, "8Gi"); err != nil {
				return err
			}
			pod := bitnamiPod(sts, name, s.component, s.minID, c.Kubelet.NodeName())
			if _, err := cs.CoreV1().Pods(Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating pod %s: %w", name, err)
			}
			if name == BrokerPod {
				err = c.Kubelet.CrashLoop(ctx, Namespace, name, opts.CrashLog)
			} else {
				err = c.Kubelet.Ready(ctx, Namespace, name)
			}
			if err != nil {
				return err
			}
		}
	}
	c.SetRestartLog(Namespace, BrokerPod, StartupLog())
	return nil
}

func labels(component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "kafka",
		"app.kubernetes.io/instance":  Release,
		"app.kubernetes.io/component": component,
		"app.kubernetes.io/part-of":   "kafka",
	}
}

func statefulSet(name, component string, replicas int) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels(component)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(int32(replicas)),
			ServiceName: name + "-headless",
			Selector:    &metav1.LabelSelector{MatchLabels: labels(component)},
		},
	}
}

// bitnamiPod is a pod as the Bitnami chart's StatefulSet creates it: the
// base node id on the init container, the data claim at /bitnami/kafka,
// uid/gid 1001.
func bitnamiPod(owner *appsv1.StatefulSet, name, component string, minID int, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: Namespace, Labels: labels(component),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			InitContainers: []corev1.Container{{
				Name: "kafka-init", Image: KafkaImage,
				Env: []corev1.EnvVar{{Name: "KAFKA_MIN_ID", Value: fmt.Sprint(minID)}},
			}},
			Containers: []corev1.Container{{
				Name: "kafka", Image: KafkaImage,
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: MountPath}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser: ptr.To(int64(1001)), RunAsGroup: ptr.To(int64(1001)), FSGroup: ptr.To(int64(1001)),
			},
		},
	}
}

// layOutVolume writes what a KRaft node's data volume holds under the
// Bitnami chart: the log dir data/ with meta.properties, checkpoint files,
// the metadata log and, on brokers, topic partitions. Segment contents
// are filler bytes: only names, sizes and layout matter to the repair.
func layOutVolume(root string, nodeID int, component string) error {
	logDir := filepath.Join(root, "data")
	files := map[string]string{
		"meta.properties":                                           fmt.Sprintf("#\n#Mon Apr 28 07:51:22 UTC 2025\nnode.id=%d\nversion=1\ncluster.id=%s\n", nodeID, clusterID),
		"bootstrap.checkpoint":                                      filler(2 << 10),
		"recovery-point-offset-checkpoint":                          "0\n0\n",
		"replication-offset-checkpoint":                             "0\n0\n",
		"log-start-offset-checkpoint":                               "0\n0\n",
		"cleaner-offset-checkpoint":                                 "0\n0\n",
		MetadataLog + "/00000000000057054787.log":                   filler(96 << 10),
		MetadataLog + "/00000000000057054787.index":                 filler(10 << 10),
		MetadataLog + "/00000000000057054787.timeindex":             filler(10 << 10),
		MetadataLog + "/00000000000057800000-0000000012.checkpoint": filler(24 << 10),
		MetadataLog + "/leader-epoch-checkpoint":                    "0\n1\n12 57054787\n",
		MetadataLog + "/partition.metadata":                         "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n",
		MetadataLog + "/quorum-state":                               `{"clusterId":"","leaderId":1,"leaderEpoch":12,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":0},{"voterId":1},{"voterId":2}],"data_version":0}` + "\n",
	}
	if component == "broker" {
		for _, p := range []string{"orders-0", "orders-1", "__consumer_offsets-12"} {
			files[p+"/00000000000000000000.log"] = filler(32 << 10)
			files[p+"/00000000000000000000.index"] = filler(10 << 10)
			files[p+"/00000000000000000000.timeindex"] = filler(10 << 10)
			files[p+"/leader-epoch-checkpoint"] = "0\n1\n0 0\n"
			files[p+"/partition.metadata"] = "version: 0\ntopic_id: 5cLdA0tnTmKn8HPK2wLl2Q\n"
		}
	}
	for rel, content := range files {
		path := filepath.Join(logDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("laying out volume %s: %w", root, err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("laying out volume %s: %w", root, err)
		}
	}
	return nil
}

// filler is n bytes of segment-file stand-in.
func filler(n int) string { return strings.Repeat("\x00", n) }
