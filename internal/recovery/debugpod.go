// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Annotations on the debug pod, naming what it does and for which approval.
const (
	AnnotationApprovalID   = "kafkabot/approval-id"
	AnnotationAction       = "kafkabot/action"
	AnnotationTarget       = "kafkabot/target"
	AnnotationBackupName   = "kafkabot/backup-name"
	AnnotationMode         = "kafkabot/mode"
	AnnotationBrokerUID    = "kafkabot/broker-uid"
	AnnotationImageSource  = "kafkabot/image-source"
	AnnotationSecurityNote = "kafkabot/security-note"
	// AnnotationGo is the go signal: the bot sets it to the repair id on
	// its own debug pod once it has re-read the broker and seen Kafka
	// stopped; the script reads it through a downwardAPI volume and moves
	// nothing before it appears. After the pod starts it is the bot's only
	// write to the pod.
	AnnotationGo = "kafkabot/go"
	// AnnotationStatusRefresh is the bot's one write to a broker pod before
	// it deletes it: "<repair id>.<restart count>", set once per Kafka stop
	// while the interlock waits, so the kubelet syncs the pod and publishes
	// its current back-off (see refreshKubeletStatus). deploy/'s admission
	// policy admits no other change to a broker pod.
	AnnotationStatusRefresh = "kafkabot/status-refresh"
)

// goVolume is the debug pod's downwardAPI volume holding the go signal,
// mounted at <MountRoot>/kafkabot-go (the script reads <...>/kafkabot-go/go).
const (
	goVolume  = "kafkabot-go"
	goDirName = "kafkabot-go"
)

// goRoom is how much of the debug pod's deadline the script keeps after it
// stops waiting for the go signal: the kubelet counts activeDeadlineSeconds
// from the pod's start, before the image is ready and the script runs, and a
// go that arrives at the end of the wait still needs time for the move and
// the result line. It is at most half the deadline (short test deadlines);
// deploy/'s admission policy refuses a KB_GO_WAIT that leaves less.
const goRoom = 2 * time.Minute

// goWaitFor is KB_GO_WAIT for a debug pod deadline: the deadline less
// min(goRoom, deadline/2).
func goWaitFor(deadline time.Duration) time.Duration {
	return deadline - min(goRoom, deadline/2)
}

// meshOptOut are the annotations (and the Istio label) that keep a service
// mesh from injecting a sidecar into the debug pod: a sidecar would never
// exit (the pod would never finish) and our own admission policy would
// refuse its extra container.
var meshOptOut = map[string]string{
	"sidecar.istio.io/inject":   "false",
	"linkerd.io/inject":         "disabled",
	"kuma.io/sidecar-injection": "disabled",
}

// Where the debug pod's image came from (AnnotationImageSource).
const (
	ImageSourceOverride = "override"      // DEBUG_IMAGE
	ImageSourceDigest   = "broker-digest" // the broker's image, by the digest the kubelet resolved
	ImageSourceTag      = "broker-spec"   // the broker's image as written in its spec
)

// DebugContainerName names the debug pod's one container.
const DebugContainerName = "repair"

// DefaultDebugDeadline bounds a debug pod whose input has no Deadline.
const DefaultDebugDeadline = 5 * time.Minute

// maxDebugDeadline is the longest a debug pod may live: the script is a
// handful of stat calls and one rename.
const maxDebugDeadline = time.Hour

// rootSecurityNote explains why a debug pod for a root broker is not
// restricted-PSA compliant.
const rootSecurityNote = "the broker runs as uid 0 and ALLOW_ROOT_BROKER is set, so the debug pod runs as root too, to own the same files: " +
	"it cannot satisfy the restricted Pod Security Standard (runAsNonRoot); " +
	"all capabilities are still dropped, privilege escalation is off and the root filesystem is read-only"

// imageUserNote explains runAsNonRoot on a debug pod whose broker names no uid.
const imageUserNote = "the broker sets no runAsUser: the debug pod runs as its image's user with runAsNonRoot, " +
	"so the kubelet refuses to start it if that user is root"

// RootBrokerError says the broker runs as uid 0 and running the debug pod as
// root was not allowed (kube.CheckRootBroker, which the diagnosis runs too).
type RootBrokerError = kube.RootBrokerError

// NoDigestError says no image pinned by digest is known for the debug pod:
// the admission policy admits only repo@sha256:... images, so a tag (which
// can be re-pointed) is never used.
type NoDigestError struct {
	Image string
}

func (e *NoDigestError) Error() string {
	return fmt.Sprintf("image %q is not pinned by digest and the kubelet reported no digest for the broker's image: "+
		"set DEBUG_IMAGE to an image by digest (repo@sha256:...)", e.Image)
}

// digestRefRE is an image reference pinned by sha256 digest.
var digestRefRE = regexp.MustCompile(`^[^\s@]+@sha256:[0-9a-f]{64}$`)

// DebugPodInput is what the debug pod of one repair is built from.
type DebugPodInput struct {
	// Broker is the crash-looping broker pod, as read just before the repair.
	Broker *corev1.Pod
	// KafkaContainer names the broker's Kafka container.
	KafkaContainer string
	// ClaimNames are the broker's data PVCs, mounted at MountRoot/<index>.
	ClaimNames []string
	// ClaimAccessModes are the claims' access modes, by claim name, when the
	// caller read them; a ReadWriteOncePod claim makes DebugPod refuse.
	ClaimAccessModes map[string][]corev1.PersistentVolumeAccessMode
	// Image overrides the image (DEBUG_IMAGE). Empty means the broker's own
	// image, by digest when its container status has one: it is already on
	// the node, so air-gapped clusters need no pull.
	Image string
	// RepairID identifies the repair (the approval id); it must be a valid
	// label value and makes the pod name deterministic.
	RepairID string
	// Script is what the pod runs. An empty MountRoot means DefaultMountRoot.
	Script ScriptInput
	// Deadline is the pod's activeDeadlineSeconds (DefaultDebugDeadline if 0).
	Deadline time.Duration
	// AllowRoot lets the debug pod run as uid 0 when the broker does
	// (ALLOW_ROOT_BROKER). Without it such a broker gets a *RootBrokerError
	// (kube.CheckRootBroker).
	AllowRoot bool
}

// ReadWriteOncePodError says a claim is ReadWriteOncePod: the scheduler lets
// only one pod use it, and the broker pod holds it for as long as it exists,
// even while its container is crash-looping. A second pod would stay Pending
// (or, with a higher priority, preempt the broker). Repair it by deleting the
// broker pod first (with its controller kept from recreating it) or through
// an ephemeral container added to the broker pod itself.
type ReadWriteOncePodError struct {
	Claim string
}

func (e *ReadWriteOncePodError) Error() string {
	return fmt.Sprintf("claim %s is ReadWriteOncePod: no second pod can mount it while the broker pod exists; "+
		"use an ephemeral container in the broker pod, or stop the broker pod first and repair by hand", e.Claim)
}

// DebugPod builds the pod that runs Script against the broker's claims.
//
// Placement: the pod must run on the broker's node (a ReadWriteOnce volume is
// attached to one node). It is pinned with a required node affinity on the
// node's name (matchFields metadata.name, as the DaemonSet controller does)
// rather than spec.nodeName: nodeName skips the scheduler, so taints,
// resource fit and the scheduler's volume checks (including ReadWriteOncePod)
// would be bypassed and the kubelet would reject or start the pod on its own.
// With affinity the scheduler either places it on that node or leaves it
// Pending, which the deadline and the caller report. The broker's
// tolerations are copied so the same taints are tolerated, and its priority
// class, so the pod can never preempt the broker.
//
// Identity: the broker's uid, gid, fsGroup, supplemental groups and SELinux
// options, so renames are allowed and no ownership changes; fsGroupChangePolicy
// OnRootMismatch so the kubelet does not walk the volume re-chowning files.
// Everything else is locked down to the restricted Pod Security Standard and
// to what deploy/'s admission policy admits: runAsNonRoot always, except for
// a broker that runs as root when in.AllowRoot is set (see the
// AnnotationSecurityNote annotation; without it DebugPod returns a
// *RootBrokerError), and an image pinned by digest (else a *NoDigestError).
func DebugPod(in DebugPodInput) (*corev1.Pod, error) {
	broker := in.Broker
	if broker == nil {
		return nil, errors.New("building debug pod: no broker pod")
	}
	if broker.Spec.NodeName == "" {
		return nil, fmt.Errorf("building debug pod for %s/%s: the broker pod is not scheduled to a node", broker.Namespace, broker.Name)
	}
	if errs := validation.IsValidLabelValue(in.RepairID); in.RepairID == "" || len(errs) > 0 {
		return nil, fmt.Errorf("building debug pod for %s/%s: repair id %q is not a label value", broker.Namespace, broker.Name, in.RepairID)
	}
	if errs := validation.IsValidLabelValue(broker.Name); len(errs) > 0 {
		return nil, fmt.Errorf("building debug pod: broker name %q is not a label value: %s", broker.Name, strings.Join(errs, "; "))
	}
	kafka := findContainer(broker.Spec.Containers, in.KafkaContainer)
	if kafka == nil {
		return nil, fmt.Errorf("building debug pod for %s/%s: no container %q", broker.Namespace, broker.Name, in.KafkaContainer)
	}
	deadline := in.Deadline
	if deadline == 0 {
		deadline = DefaultDebugDeadline
	}
	if deadline < time.Second || deadline > maxDebugDeadline {
		return nil, fmt.Errorf("building debug pod: deadline %s is outside 1s..%s", deadline, maxDebugDeadline)
	}
	script := in.Script
	if script.MountRoot == "" {
		script.MountRoot = DefaultMountRoot
	}
	if !script.CheckOnly {
		script.GoSignal = in.RepairID
		script.GoWait = goWaitFor(deadline)
	}
	env, err := script.Env()
	if err != nil {
		return nil, fmt.Errorf("building debug pod for %s/%s: %w", broker.Namespace, broker.Name, err)
	}
	volumes, mounts, err := claimVolumes(broker, in.ClaimNames, in.ClaimAccessModes, script.MountRoot)
	if err != nil {
		return nil, fmt.Errorf("building debug pod for %s/%s: %w", broker.Namespace, broker.Name, err)
	}
	volumes = append(volumes, corev1.Volume{Name: goVolume, VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
		Items: []corev1.DownwardAPIVolumeFile{{Path: "go", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + AnnotationGo + "']"}}},
	}}})
	mounts = append(mounts, corev1.VolumeMount{Name: goVolume, MountPath: script.MountRoot + "/" + goDirName, ReadOnly: true})
	image, imageSource, err := debugImage(in.Image, broker, kafka)
	if err != nil {
		return nil, fmt.Errorf("building debug pod for %s/%s: %w", broker.Namespace, broker.Name, err)
	}
	if err := checkShell(in.Image, image, kafka); err != nil {
		return nil, fmt.Errorf("building debug pod for %s/%s: %w", broker.Namespace, broker.Name, err)
	}
	// The same check the diagnosis ran before it offered Approve.
	if err := kube.CheckRootBroker(broker, kafka.Name, in.AllowRoot); err != nil {
		return nil, err
	}
	podSC, containerSC, note := debugSecurityContexts(broker.Spec.SecurityContext, kafka.SecurityContext)

	mode := ModeApply
	if script.CheckOnly {
		mode = ModeCheck
	}
	annotations := map[string]string{
		AnnotationApprovalID:  in.RepairID,
		AnnotationAction:      script.Action,
		AnnotationTarget:      script.Target,
		AnnotationBackupName:  script.BackupName,
		AnnotationMode:        mode,
		AnnotationBrokerUID:   string(broker.UID),
		AnnotationImageSource: imageSource,
	}
	if note != "" {
		annotations[AnnotationSecurityNote] = note
	}
	for k, v := range meshOptOut {
		annotations[k] = v
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      DebugPodName(broker.Name),
			Namespace: broker.Namespace,
			Labels: map[string]string{
				kube.LabelManagedBy: kube.ManagedByBot,
				kube.LabelRepairID:  in.RepairID,
				kube.LabelBroker:    broker.Name,
				// Istio's revision-based injection reads the label.
				"sidecar.istio.io/inject": "false",
			},
			Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         ptr.To(int64(deadline / time.Second)),
			TerminationGracePeriodSeconds: ptr.To(int64(10)),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			Affinity:                      nodeAffinity(broker.Spec.NodeName),
			Tolerations:                   slices.Clone(broker.Spec.Tolerations),
			ImagePullSecrets:              slices.Clone(broker.Spec.ImagePullSecrets),
			PriorityClassName:             broker.Spec.PriorityClassName,
			SecurityContext:               podSC,
			Volumes:                       volumes,
			Containers: []corev1.Container{{
				Name:                     DebugContainerName,
				Image:                    image,
				ImagePullPolicy:          corev1.PullIfNotPresent,
				Command:                  []string{"sh", "-c", Script},
				Env:                      env,
				VolumeMounts:             mounts,
				SecurityContext:          containerSC,
				Resources:                debugResources(),
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
		},
	}
	return pod, nil
}

// DebugPodName is the debug pod's name for a broker pod:
// "kafkabot-repair-<broker>". One name per broker pod, whatever the repair:
// deploy/'s admission policy admits no other, so at most one debug pod per
// broker pod can exist at a time (a second create fails with AlreadyExists,
// and kube.CreateRepairPod refuses a pod of that name from another repair).
// A resumed repair finds its pod by the same name.
func DebugPodName(broker string) string {
	return debugPodPrefix + broker
}

// debugPodPrefix starts the name of every debug pod.
const debugPodPrefix = "kafkabot-repair-"

// findContainer returns the container called name, or nil.
func findContainer(containers []corev1.Container, name string) *corev1.Container {
	for i := range containers {
		if containers[i].Name == name {
			return &containers[i]
		}
	}
	return nil
}

// claimVolumes returns one volume and mount per claim, the n-th claim at
// mountRoot/<n>. Each claim must be one the broker pod mounts (so the bot
// cannot be pointed at another volume) and must not be ReadWriteOncePod.
func claimVolumes(broker *corev1.Pod, claims []string, modes map[string][]corev1.PersistentVolumeAccessMode, mountRoot string) ([]corev1.Volume, []corev1.VolumeMount, error) {
	if len(claims) == 0 {
		return nil, nil, errors.New("no claim to mount")
	}
	brokerClaims := claimVolumeNames(broker)
	ephemeral := map[string]string{}
	for _, v := range broker.Spec.Volumes {
		if v.Ephemeral != nil {
			ephemeral[broker.Name+"-"+v.Name] = v.Name
		}
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for i, claim := range claims {
		if _, ok := brokerClaims[claim]; !ok {
			return nil, nil, fmt.Errorf("claim %q is not mounted by the broker pod", claim)
		}
		if slices.Contains(claims[:i], claim) {
			return nil, nil, fmt.Errorf("claim %q is listed twice", claim)
		}
		if slices.Contains(modes[claim], corev1.ReadWriteOncePod) {
			return nil, nil, &ReadWriteOncePodError{Claim: claim}
		}
		if vol, ok := ephemeral[claim]; ok {
			return nil, nil, &EphemeralVolumeError{Claim: claim, Volume: vol}
		}
		name := "claim-" + strconv.Itoa(i)
		volumes = append(volumes, corev1.Volume{
			Name:         name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}},
		})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: mountRoot + "/" + strconv.Itoa(i)})
	}
	return volumes, mounts, nil
}

// claimVolumeNames maps each claim the broker pod mounts to its volume name.
func claimVolumeNames(broker *corev1.Pod) map[string]string {
	names := map[string]string{}
	for _, v := range broker.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			names[v.PersistentVolumeClaim.ClaimName] = v.Name
		case v.Ephemeral != nil:
			// A generic ephemeral volume's claim is named <pod>-<volume>.
			names[broker.Name+"-"+v.Name] = v.Name
		}
	}
	return names
}

// debugImage picks the image: the override, else the broker's image by the
// digest the kubelet resolved (imageID), else the broker's spec image. Each
// must be pinned by digest (repo@sha256:...).
func debugImage(override string, broker *corev1.Pod, kafka *corev1.Container) (image, source string, err error) {
	if override != "" {
		if strings.ContainsAny(override, " \t\r\n") {
			return "", "", fmt.Errorf("debug image %q contains white space", override)
		}
		if !digestRefRE.MatchString(override) {
			return "", "", &NoDigestError{Image: override}
		}
		return override, ImageSourceOverride, nil
	}
	for _, st := range broker.Status.ContainerStatuses {
		if st.Name != kafka.Name {
			continue
		}
		// Docker-shim reported "docker-pullable://repo@sha256:..."; containerd
		// and CRI-O report "repo@sha256:...", or a bare image id ("sha256:...")
		// for images without a repo digest, which is not pullable.
		ref := strings.TrimPrefix(st.ImageID, "docker-pullable://")
		if digestRefRE.MatchString(ref) {
			return ref, ImageSourceDigest, nil
		}
	}
	if kafka.Image == "" {
		return "", "", fmt.Errorf("container %s has no image", kafka.Name)
	}
	if !digestRefRE.MatchString(kafka.Image) {
		return "", "", &NoDigestError{Image: kafka.Image}
	}
	return kafka.Image, ImageSourceTag, nil
}

// nodeAffinity requires the node with this exact name.
func nodeAffinity(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{
					Key:      "metadata.name",
					Operator: corev1.NodeSelectorOpIn,
					Values:   []string{node},
				}},
			}},
		},
	}}
}

// debugSecurityContexts copies the broker's identity (container settings win
// over pod settings, as in Kubernetes) and locks down everything else. note
// is non-empty when the result cannot meet the restricted Pod Security
// Standard.
func debugSecurityContexts(pod *corev1.PodSecurityContext, ctr *corev1.SecurityContext) (*corev1.PodSecurityContext, *corev1.SecurityContext, string) {
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if ctr == nil {
		ctr = &corev1.SecurityContext{}
	}
	uid := firstNonNil(ctr.RunAsUser, pod.RunAsUser)
	gid := firstNonNil(ctr.RunAsGroup, pod.RunAsGroup)
	var nonRoot *bool
	var note string
	switch {
	case uid != nil && *uid == 0:
		nonRoot = ptr.To(false)
		note = rootSecurityNote
	case uid != nil:
		nonRoot = ptr.To(true)
	default:
		// No uid anywhere: the image's USER applies, as it did for the broker
		// when the image is the same. runAsNonRoot makes the kubelet refuse a
		// root image user instead of running the script as root.
		nonRoot = ptr.To(true)
		if broker := firstNonNil(ctr.RunAsNonRoot, pod.RunAsNonRoot); broker == nil || !*broker {
			note = imageUserNote
		}
	}
	podSC := &corev1.PodSecurityContext{
		RunAsUser:          uid,
		RunAsGroup:         gid,
		RunAsNonRoot:       nonRoot,
		FSGroup:            pod.FSGroup,
		SupplementalGroups: slices.Clone(pod.SupplementalGroups),
		SELinuxOptions:     firstNonNil(ctr.SELinuxOptions, pod.SELinuxOptions),
		SeccompProfile:     &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if pod.FSGroup != nil {
		podSC.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	}
	ctrSC := &corev1.SecurityContext{
		RunAsUser:                uid,
		RunAsGroup:               gid,
		RunAsNonRoot:             nonRoot,
		AllowPrivilegeEscalation: ptr.To(false),
		Privileged:               ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	return podSC, ctrSC, note
}

// firstNonNil returns a copy of the first non-nil pointer's value, or nil.
func firstNonNil[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			v := *p
			return &v
		}
	}
	return nil
}

// debugResources are small fixed requests and limits: the script runs a few
// stat calls and one rename.
func debugResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("16Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("200m"),
			corev1.ResourceMemory:           resource.MustParse("64Mi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("16Mi"),
		},
	}
}

// DebugEphemeralContainer builds the same repair as DebugPod as an ephemeral
// container to add to the broker pod itself (pods/ephemeralcontainers). It is
// the path for ReadWriteOncePod claims, which no second pod can mount: the
// container joins the pod that already has the volumes, on the node that has
// them, and inherits the pod's fsGroup, supplemental groups and seccomp.
// ClaimAccessModes are not consulted. Its limits: it cannot be removed once
// added (it ends with the pod), it gets no resources of its own and no
// deadline (the caller must time it out), and volumes are mounted whole
// (subPath is not allowed). The name is deterministic per repair, so a resumed
// repair finds the container it added.
func DebugEphemeralContainer(in DebugPodInput) (*corev1.EphemeralContainer, error) {
	broker := in.Broker
	if broker == nil {
		return nil, errors.New("building debug container: no broker pod")
	}
	if in.RepairID == "" {
		return nil, fmt.Errorf("building debug container for %s/%s: no repair id", broker.Namespace, broker.Name)
	}
	kafka := findContainer(broker.Spec.Containers, in.KafkaContainer)
	if kafka == nil {
		return nil, fmt.Errorf("building debug container for %s/%s: no container %q", broker.Namespace, broker.Name, in.KafkaContainer)
	}
	script := in.Script
	if script.MountRoot == "" {
		script.MountRoot = DefaultMountRoot
	}
	env, err := script.Env()
	if err != nil {
		return nil, fmt.Errorf("building debug container for %s/%s: %w", broker.Namespace, broker.Name, err)
	}
	volumeOf := claimVolumeNames(broker)
	if len(in.ClaimNames) == 0 {
		return nil, fmt.Errorf("building debug container for %s/%s: no claim to mount", broker.Namespace, broker.Name)
	}
	var mounts []corev1.VolumeMount
	for i, claim := range in.ClaimNames {
		name, ok := volumeOf[claim]
		if !ok || slices.Contains(in.ClaimNames[:i], claim) {
			return nil, fmt.Errorf("building debug container for %s/%s: claim %q is not mounted by the broker pod or is listed twice",
				broker.Namespace, broker.Name, claim)
		}
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: script.MountRoot + "/" + strconv.Itoa(i)})
	}
	image, _, err := debugImage(in.Image, broker, kafka)
	if err != nil {
		return nil, fmt.Errorf("building debug container for %s/%s: %w", broker.Namespace, broker.Name, err)
	}
	_, sc, _ := debugSecurityContexts(broker.Spec.SecurityContext, kafka.SecurityContext)
	sum := sha256.Sum256([]byte(in.RepairID))
	return &corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name:                     "kafkabot-repair-" + hex.EncodeToString(sum[:])[:10],
		Image:                    image,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		Command:                  []string{"sh", "-c", Script},
		Env:                      env,
		VolumeMounts:             mounts,
		SecurityContext:          sc,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}}, nil
}
