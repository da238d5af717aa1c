// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

const bitnamiDigest = "docker.io/bitnami/kafka@sha256:3f1a4c0e9b8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29"

// bitnamiBroker is a crash-looping broker pod shaped like the Bitnami
// chart's foobar-kafka-broker-0 (uid 1001, fsGroup 1001).
func bitnamiBroker() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "foobar-kafka-broker-0", Namespace: "kafka", UID: "0b7e6c1e-5d1f-4c1a-9a53-2f3c8f6d1e01"},
		Spec: corev1.PodSpec{
			NodeName:          "node-a.example.internal",
			PriorityClassName: "kafka-high",
			ImagePullSecrets:  []corev1.LocalObjectReference{{Name: "regcred"}},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "kafka", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
			},
			SecurityContext: &corev1.PodSecurityContext{
				FSGroup:             ptr.To(int64(1001)),
				FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeAlways),
				SupplementalGroups:  []int64{4000},
				SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-foobar-kafka-broker-0"}}},
				{Name: "scripts", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "scripts"}}}},
			},
			Containers: []corev1.Container{
				{Name: "jmx-exporter", Image: "docker.io/bitnami/jmx-exporter:1.1.0"},
				{
					Name:  "kafka",
					Image: "docker.io/bitnami/kafka:3.5.1-debian-11-r44",
					SecurityContext: &corev1.SecurityContext{
						RunAsUser: ptr.To(int64(1001)), RunAsGroup: ptr.To(int64(1001)), RunAsNonRoot: ptr.To(true),
						ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
					},
				},
			},
		},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "jmx-exporter", ImageID: "docker.io/bitnami/jmx-exporter@sha256:aaaa"},
			{Name: "kafka", Image: "docker.io/bitnami/kafka:3.5.1-debian-11-r44", ImageID: bitnamiDigest},
		}},
	}
}

func bitnamiInput() DebugPodInput {
	return DebugPodInput{
		Broker:         bitnamiBroker(),
		KafkaContainer: "kafka",
		ClaimNames:     []string{"data-foobar-kafka-broker-0"},
		ClaimAccessModes: map[string][]corev1.PersistentVolumeAccessMode{
			"data-foobar-kafka-broker-0": {corev1.ReadWriteOnce},
		},
		RepairID: "a1b2c3d4",
		Script: ScriptInput{
			Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "100",
			BackupName: "kafkabot-backup-20250428T082201Z-a1b2c3d4",
		},
		Deadline: 3 * time.Minute,
	}
}

func TestDebugPodBitnami(t *testing.T) {
	in := bitnamiInput()
	pod, err := DebugPod(in)
	if err != nil {
		t.Fatal(err)
	}
	spec := pod.Spec

	// Identity and placement.
	if pod.Namespace != "kafka" {
		t.Errorf("namespace %q", pod.Namespace)
	}
	if pod.Name != DebugPodName("foobar-kafka-broker-0") || pod.Name != "kafkabot-repair-foobar-kafka-broker-0" {
		t.Errorf("name %q", pod.Name)
	}
	if spec.NodeName != "" {
		t.Errorf("nodeName %q set: it would bypass the scheduler", spec.NodeName)
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || len(terms[0].MatchFields) != 1 {
		t.Fatalf("node affinity terms %+v", terms)
	}
	if f := terms[0].MatchFields[0]; f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn ||
		len(f.Values) != 1 || f.Values[0] != "node-a.example.internal" {
		t.Errorf("node affinity %+v does not pin node-a.example.internal", f)
	}
	if len(spec.Tolerations) != 2 || spec.Tolerations[0].Key != "dedicated" || *spec.Tolerations[1].TolerationSeconds != 300 {
		t.Errorf("tolerations %+v", spec.Tolerations)
	}
	if len(spec.ImagePullSecrets) != 1 || spec.ImagePullSecrets[0].Name != "regcred" {
		t.Errorf("imagePullSecrets %+v", spec.ImagePullSecrets)
	}
	if spec.PriorityClassName != "kafka-high" {
		t.Errorf("priorityClassName %q", spec.PriorityClassName)
	}

	// Lifetime and API access.
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", spec.RestartPolicy)
	}
	if spec.ActiveDeadlineSeconds == nil || *spec.ActiveDeadlineSeconds != 180 {
		t.Errorf("activeDeadlineSeconds %v", spec.ActiveDeadlineSeconds)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the service account token is mounted")
	}
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Error("service links are enabled")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Error("host namespaces are shared")
	}

	// Pod security context: the broker's identity, locked down.
	psc := spec.SecurityContext
	if *psc.RunAsUser != 1001 || *psc.RunAsGroup != 1001 || !*psc.RunAsNonRoot || *psc.FSGroup != 1001 {
		t.Errorf("pod identity %+v", psc)
	}
	if len(psc.SupplementalGroups) != 1 || psc.SupplementalGroups[0] != 4000 {
		t.Errorf("supplementalGroups %v", psc.SupplementalGroups)
	}
	if *psc.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch {
		t.Errorf("fsGroupChangePolicy %v: the kubelet would re-chown the whole volume", *psc.FSGroupChangePolicy)
	}
	if psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccomp %v", psc.SeccompProfile)
	}

	// The container.
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("want one container, got %d (+%d init)", len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	if c.Image != bitnamiDigest || c.ImagePullPolicy != corev1.PullIfNotPresent || pod.Annotations[AnnotationImageSource] != ImageSourceDigest {
		t.Errorf("image %q policy %q source %q", c.Image, c.ImagePullPolicy, pod.Annotations[AnnotationImageSource])
	}
	if len(c.Command) != 3 || c.Command[0] != "sh" || c.Command[1] != "-c" || c.Command[2] != Script || len(c.Args) != 0 {
		t.Errorf("command %q", c.Command)
	}
	sc := c.SecurityContext
	if *sc.RunAsUser != 1001 || *sc.RunAsGroup != 1001 || !*sc.RunAsNonRoot {
		t.Errorf("container identity %+v", sc)
	}
	if *sc.AllowPrivilegeEscalation || *sc.Privileged || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("container hardening %+v", sc)
	}
	if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 {
		t.Errorf("capabilities %+v", sc.Capabilities)
	}
	if sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container seccomp %v", sc.SeccompProfile)
	}
	if c.Resources.Requests.Cpu().Cmp(resource.MustParse("10m")) != 0 || c.Resources.Limits.Memory().Cmp(resource.MustParse("64Mi")) != 0 {
		t.Errorf("resources %+v", c.Resources)
	}
	if len(c.EnvFrom) != 0 {
		t.Error("envFrom set: the script must see only its validated variables")
	}
	wantEnv, _ := ScriptInput{Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "100",
		MountRoot: DefaultMountRoot, BackupName: "kafkabot-backup-20250428T082201Z-a1b2c3d4",
		GoSignal: "a1b2c3d4", GoWait: 90 * time.Second}.Env() // 3m less min(2m, 3m/2)
	if len(c.Env) != len(wantEnv) {
		t.Fatalf("env %+v, want %+v", c.Env, wantEnv)
	}
	for i := range wantEnv {
		if c.Env[i] != wantEnv[i] {
			t.Errorf("env[%d] = %+v, want %+v", i, c.Env[i], wantEnv[i])
		}
	}

	// Volumes: the claim at /kafka-data/0, and the go signal's downwardAPI
	// volume (read-only) at /kafka-data/kafkabot-go; nothing else.
	if len(spec.Volumes) != 2 || spec.Volumes[0].PersistentVolumeClaim == nil ||
		spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-foobar-kafka-broker-0" || spec.Volumes[0].PersistentVolumeClaim.ReadOnly {
		t.Errorf("volumes %+v", spec.Volumes)
	}
	if len(c.VolumeMounts) != 2 || c.VolumeMounts[0].MountPath != "/kafka-data/0" || c.VolumeMounts[0].Name != spec.Volumes[0].Name ||
		c.VolumeMounts[0].SubPath != "" || c.VolumeMounts[0].ReadOnly {
		t.Errorf("volumeMounts %+v", c.VolumeMounts)
	}
	if d := spec.Volumes[1].DownwardAPI; d == nil || len(d.Items) != 1 || d.Items[0].Path != "go" ||
		d.Items[0].FieldRef == nil || d.Items[0].FieldRef.FieldPath != "metadata.annotations['kafkabot/go']" {
		t.Errorf("go volume %+v", spec.Volumes[1])
	}
	if m := c.VolumeMounts[1]; m.Name != spec.Volumes[1].Name || m.MountPath != "/kafka-data/kafkabot-go" || !m.ReadOnly {
		t.Errorf("go mount %+v", m)
	}

	// Labels and annotations.
	wantLabels := map[string]string{
		"app.kubernetes.io/managed-by": "kafkabot", "kafkabot/repair-id": "a1b2c3d4", "kafkabot/broker": "foobar-kafka-broker-0",
	}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	wantAnn := map[string]string{
		AnnotationApprovalID: "a1b2c3d4", AnnotationAction: diagnose.ActionMoveMetadataLog, AnnotationTarget: "__cluster_metadata-0",
		AnnotationBackupName: "kafkabot-backup-20250428T082201Z-a1b2c3d4", AnnotationMode: ModeApply,
		AnnotationBrokerUID: "0b7e6c1e-5d1f-4c1a-9a53-2f3c8f6d1e01",
	}
	for k, v := range wantAnn {
		if pod.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, pod.Annotations[k], v)
		}
	}
	if note, ok := pod.Annotations[AnnotationSecurityNote]; ok {
		t.Errorf("unexpected security note for a non-root broker: %s", note)
	}

	// The input was not modified (the broker pod is shared with the caller).
	if in.Broker.Spec.SecurityContext.FSGroupChangePolicy == nil || *in.Broker.Spec.SecurityContext.FSGroupChangePolicy != corev1.FSGroupChangeAlways {
		t.Error("DebugPod modified the broker pod")
	}
	in.Broker.Spec.Tolerations[0].Key = "changed"
	if pod.Spec.Tolerations[0].Key != "dedicated" {
		t.Error("the debug pod shares the broker's tolerations slice")
	}
}

func TestDebugPodStrimziJBODRootAndOverrides(t *testing.T) {
	in := bitnamiInput()
	b := in.Broker
	b.Name = "my-cluster-broker-pool-0"
	// Strimzi JBOD: two claims, identity at pod level only, fsGroup 0.
	b.Spec.Volumes = []corev1.Volume{
		{Name: "data-0", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-0-my-cluster-broker-pool-0"}}},
		{Name: "data-1", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-1-my-cluster-broker-pool-0"}}},
	}
	b.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1001)), FSGroup: ptr.To(int64(0))}
	b.Spec.Containers[1].SecurityContext = nil
	in.ClaimNames = []string{"data-0-my-cluster-broker-pool-0", "data-1-my-cluster-broker-pool-0"}
	in.ClaimAccessModes = nil // not read by the caller: cannot refuse RWOP, must still work
	in.Script.MountRoot = "/mnt/kb"
	in.Image = "registry.local/tools/busybox@sha256:" + strings.Repeat("c", 64)
	in.Deadline = 0

	pod, err := DebugPod(in)
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if len(c.VolumeMounts) != 3 || c.VolumeMounts[0].MountPath != "/mnt/kb/0" || c.VolumeMounts[1].MountPath != "/mnt/kb/1" ||
		c.VolumeMounts[2].MountPath != "/mnt/kb/kafkabot-go" {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
	if pod.Spec.Volumes[1].PersistentVolumeClaim.ClaimName != "data-1-my-cluster-broker-pool-0" {
		t.Errorf("volumes %+v", pod.Spec.Volumes)
	}
	for _, e := range c.Env {
		if e.Name == EnvMountRoot && e.Value != "/mnt/kb" {
			t.Errorf("%s = %q", EnvMountRoot, e.Value)
		}
	}
	psc := pod.Spec.SecurityContext
	if *psc.RunAsUser != 1001 || psc.RunAsGroup != nil || !*psc.RunAsNonRoot || *psc.FSGroup != 0 {
		t.Errorf("pod identity %+v", psc)
	}
	if c.Image != "registry.local/tools/busybox@sha256:"+strings.Repeat("c", 64) || pod.Annotations[AnnotationImageSource] != ImageSourceOverride {
		t.Errorf("image %q source %q", c.Image, pod.Annotations[AnnotationImageSource])
	}
	if *pod.Spec.ActiveDeadlineSeconds != int64(DefaultDebugDeadline/time.Second) {
		t.Errorf("default deadline %d", *pod.Spec.ActiveDeadlineSeconds)
	}

	// A broker that runs as root: refused (the manual runbook applies)
	// unless root is allowed; then the debug pod runs as root too, and says
	// it is not restricted.
	root := bitnamiInput()
	root.Broker.Spec.Containers[1].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To(int64(0))}
	var rootErr *RootBrokerError
	if _, err := DebugPod(root); !errors.As(err, &rootErr) || !strings.Contains(err.Error(), "manual runbook") {
		t.Fatalf("root broker without AllowRoot: err %v, want a RootBrokerError naming the manual runbook", err)
	}
	root.AllowRoot = true
	pod, err = DebugPod(root)
	if err != nil {
		t.Fatal(err)
	}
	sc := pod.Spec.Containers[0].SecurityContext
	if *sc.RunAsUser != 0 || *sc.RunAsNonRoot || *pod.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("root broker: container %+v", sc)
	}
	if *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("root broker: hardening dropped %+v", sc)
	}
	if !strings.Contains(pod.Annotations[AnnotationSecurityNote], "restricted Pod Security Standard") {
		t.Errorf("root broker: security note %q", pod.Annotations[AnnotationSecurityNote])
	}
}

func TestDebugPodImage(t *testing.T) {
	tests := []struct {
		name, imageID, override, want, source string
	}{
		{"containerd digest", bitnamiDigest, "", bitnamiDigest, ImageSourceDigest},
		{"docker-pullable", "docker-pullable://" + bitnamiDigest, "", bitnamiDigest, ImageSourceDigest},
		{"bare image id is not pullable: refused", "sha256:3f1a4c0e9b8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29", "", "", ""},
		{"not started yet, tag only: refused", "", "", "", ""},
		{"override by tag: refused", bitnamiDigest, "busybox:1.36", "", ""},
		{"override wins", bitnamiDigest, "busybox@sha256:" + strings.Repeat("b", 64), "busybox@sha256:" + strings.Repeat("b", 64), ImageSourceOverride},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bitnamiInput()
			in.Broker.Status.ContainerStatuses[1].ImageID = tc.imageID
			in.Image = tc.override
			pod, err := DebugPod(in)
			if tc.want == "" {
				var nd *NoDigestError
				if !errors.As(err, &nd) {
					t.Fatalf("err %v, want a NoDigestError (the admission policy admits only images by digest)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := pod.Spec.Containers[0].Image; got != tc.want || pod.Annotations[AnnotationImageSource] != tc.source {
				t.Errorf("image %q (%s), want %q (%s)", got, pod.Annotations[AnnotationImageSource], tc.want, tc.source)
			}
		})
	}
}

func TestDebugPodRefusals(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*DebugPodInput)
		want   string
	}{
		{"no broker", func(in *DebugPodInput) { in.Broker = nil }, "no broker pod"},
		{"not scheduled", func(in *DebugPodInput) { in.Broker.Spec.NodeName = "" }, "not scheduled"},
		{"no repair id", func(in *DebugPodInput) { in.RepairID = "" }, "repair id"},
		{"repair id not a label", func(in *DebugPodInput) { in.RepairID = "a/b c" }, "repair id"},
		{"no kafka container", func(in *DebugPodInput) { in.KafkaContainer = "broker" }, `no container "broker"`},
		{"no claims", func(in *DebugPodInput) { in.ClaimNames = nil }, "no claim"},
		{"foreign claim", func(in *DebugPodInput) { in.ClaimNames = []string{"data-other-broker-1"} }, "not mounted by the broker"},
		{"claim twice", func(in *DebugPodInput) {
			in.ClaimNames = []string{"data-foobar-kafka-broker-0", "data-foobar-kafka-broker-0"}
		}, "listed twice"},
		{"invalid script input", func(in *DebugPodInput) { in.Script.Target = "../etc" }, "invalid repair script input"},
		{"deadline too long", func(in *DebugPodInput) { in.Deadline = 2 * time.Hour }, "deadline"},
		{"override with spaces", func(in *DebugPodInput) { in.Image = "busybox; reboot" }, "white space"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bitnamiInput()
			tc.modify(&in)
			pod, err := DebugPod(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DebugPod = %v, %v; want an error containing %q", pod, err, tc.want)
			}
		})
	}
}

func TestDebugPodRefusesReadWriteOncePod(t *testing.T) {
	in := bitnamiInput()
	in.ClaimAccessModes["data-foobar-kafka-broker-0"] = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
	_, err := DebugPod(in)
	var rwop *ReadWriteOncePodError
	if !errors.As(err, &rwop) {
		t.Fatalf("DebugPod error %v, want a *ReadWriteOncePodError", err)
	}
	if rwop.Claim != "data-foobar-kafka-broker-0" {
		t.Errorf("claim %q", rwop.Claim)
	}
	for _, want := range []string{"ReadWriteOncePod", "ephemeral container", "broker pod"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestDebugPodName: one name per broker pod, the same for every repair
// (deploy/'s policy admits no other, which bounds debug pods to one per
// broker pod at a time), and a valid pod name for every broker name that is
// a label value (DebugPod refuses others).
func TestDebugPodName(t *testing.T) {
	names := map[string]bool{}
	for _, broker := range []string{"foobar-kafka-broker-0", "my-cluster-brokers-3", strings.Repeat("b", 63), "kafka.broker.1"} {
		name := DebugPodName(broker)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("DebugPodName(%q) = %q: %v", broker, name, errs)
		}
		if name != "kafkabot-repair-"+broker {
			t.Errorf("DebugPodName(%q) = %q, want kafkabot-repair-%s", broker, name, broker)
		}
		if names[name] {
			t.Errorf("name %q repeats for different brokers", name)
		}
		names[name] = true
	}
	a, b := bitnamiInput(), bitnamiInput()
	a.RepairID, b.RepairID = "a1b2c3d4", "e5f6a7b8"
	pa, errA := DebugPod(a)
	pb, errB := DebugPod(b)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if pa.Name != pb.Name {
		t.Errorf("two repairs of one broker got two debug pod names %q and %q: both could run at once", pa.Name, pb.Name)
	}
}

func TestDebugEphemeralContainerForReadWriteOncePod(t *testing.T) {
	in := bitnamiInput()
	in.ClaimAccessModes["data-foobar-kafka-broker-0"] = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
	ec, err := DebugEphemeralContainer(in)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validation.IsDNS1123Label(ec.Name); len(errs) > 0 || !strings.HasPrefix(ec.Name, "kafkabot-repair-") {
		t.Errorf("name %q: %v", ec.Name, errs)
	}
	if again, _ := DebugEphemeralContainer(in); again.Name != ec.Name {
		t.Errorf("name not deterministic: %q, %q", ec.Name, again.Name)
	}
	if ec.Image != bitnamiDigest || ec.Command[2] != Script {
		t.Errorf("image %q command %q", ec.Image, ec.Command[:2])
	}
	// The broker pod's own volume, by its volume name, whole (no subPath).
	if len(ec.VolumeMounts) != 1 || ec.VolumeMounts[0].Name != "data" || ec.VolumeMounts[0].MountPath != "/kafka-data/0" || ec.VolumeMounts[0].SubPath != "" {
		t.Errorf("mounts %+v", ec.VolumeMounts)
	}
	sc := ec.SecurityContext
	if *sc.RunAsUser != 1001 || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("security context %+v", sc)
	}
	if len(ec.Ports) != 0 || ec.Resources.Limits != nil || ec.TargetContainerName != "" {
		t.Errorf("fields ephemeral containers may not or need not set: %+v", ec)
	}

	in.ClaimNames = []string{"data-other"}
	if _, err := DebugEphemeralContainer(in); err == nil {
		t.Error("accepted a claim the broker does not mount")
	}
}

// TestDebugPodWithoutUIDRunsNonRoot: a broker that names no uid runs as its
// image's user; the debug pod then requires a non-root user (the admission
// policy admits nothing else) and says why.
func TestDebugPodWithoutUIDRunsNonRoot(t *testing.T) {
	in := bitnamiInput()
	in.Broker.Spec.SecurityContext = nil
	for i := range in.Broker.Spec.Containers {
		in.Broker.Spec.Containers[i].SecurityContext = nil
	}
	pod, err := DebugPod(in)
	if err != nil {
		t.Fatal(err)
	}
	sc := pod.Spec.Containers[0].SecurityContext
	if sc.RunAsUser != nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || !*pod.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("container %+v: want no uid and runAsNonRoot true", sc)
	}
	if pod.Annotations[AnnotationSecurityNote] != imageUserNote {
		t.Errorf("security note %q", pod.Annotations[AnnotationSecurityNote])
	}
}

// TestDebugPodRootRefusalIsTheDiagnosisCheck: the debug pod refuses a root
// broker exactly when kube.CheckRootBroker, which the diagnosis runs before
// it offers Approve, does: never an Approve for a repair that this refusal
// ends, never a refusal the diagnosis did not announce.
func TestDebugPodRootRefusalIsTheDiagnosisCheck(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pod, container *int64
		wantRefused    bool
	}{
		{"pod 1001", ptr.To(int64(1001)), nil, false},
		{"container 0", ptr.To(int64(1001)), ptr.To(int64(0)), true},
		{"pod 0", ptr.To(int64(0)), nil, true},
		{"pod 0, container 1001", ptr.To(int64(0)), ptr.To(int64(1001)), false},
		{"no uid (the image's user)", nil, nil, false},
	} {
		for _, allow := range []bool{false, true} {
			in := bitnamiInput()
			in.AllowRoot = allow
			kafka := &in.Broker.Spec.Containers[1]
			if kafka.Name != in.KafkaContainer {
				t.Fatalf("fixture: container 1 is %q", kafka.Name)
			}
			if in.Broker.Spec.SecurityContext == nil {
				in.Broker.Spec.SecurityContext = &corev1.PodSecurityContext{}
			}
			in.Broker.Spec.SecurityContext.RunAsUser = tc.pod
			if kafka.SecurityContext == nil {
				kafka.SecurityContext = &corev1.SecurityContext{}
			}
			kafka.SecurityContext.RunAsUser = tc.container
			_, err := DebugPod(in)
			var rb *RootBrokerError
			refused := errors.As(err, &rb)
			diagnosis := kube.CheckRootBroker(in.Broker, in.KafkaContainer, allow) != nil
			if refused != diagnosis || refused != (tc.wantRefused && !allow) {
				t.Errorf("%s, allow root %t: debug pod refused %t (err %v), diagnosis check refused %t, want %t",
					tc.name, allow, refused, err, diagnosis, tc.wantRefused && !allow)
			}
		}
	}
}
