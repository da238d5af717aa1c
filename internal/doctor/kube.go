// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/botuses"
	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/guard"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

// kubeTimeout bounds each cluster's checks.
const kubeTimeout = time.Minute

// imageAllowListAnnotation is the bot namespace's annotation the
// admission policy reads the debug-image allow-list from.
const imageAllowListAnnotation = "kafkabot.io/debug-image-repositories"

// checkCluster checks one cluster: the bot's RBAC in every namespace it
// works in, each Kafka namespace's presence, the admission policy, and
// the debug image of every Kafka pod against the policy's allow-list.
func checkCluster(ctx context.Context, cfg *config.Config, c Cluster) []Result {
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout)
	defer cancel()
	res := func(area string, sev Severity, msg, fix string) Result {
		return Result{Area: area, Cluster: c.Name, Severity: sev, Message: msg, Fix: fix}
	}
	namespaces := c.KafkaNamespaces
	if len(namespaces) == 0 {
		namespaces = cfg.KafkaNamespaces
	}
	if len(namespaces) == 0 {
		return []Result{res("namespace", Problem, "no Kafka namespace is configured (KAFKA_NAMESPACES is empty), so the bot would need cluster-wide RBAC that deploy/ never grants",
			"set KAFKA_NAMESPACES (the chart's kafkaNamespaces) to the namespaces of your Kafka clusters")}
	}
	var out []Result
	reachable := true
	usable := map[string]bool{}
	for _, ns := range append([]string{cfg.PodNamespace}, namespaces...) {
		scope := botuses.InKafka
		if ns == cfg.PodNamespace && !slices.Contains(namespaces, ns) {
			scope = botuses.InBot
		}
		r, ok, err := checkRBAC(ctx, c, ns, scope)
		if err != nil {
			out = append(out, res("rbac", Problem, "the API server could not be asked about the bot's permissions: "+err.Error(),
				"check the API server address and the network path to it (KUBECONFIG, or the pod's service account)"))
			reachable = false
			break
		}
		out = append(out, r...)
		if scope == botuses.InKafka {
			usable[ns] = ok
		}
	}
	if !reachable {
		return out
	}
	client := kube.New(c.Client, kube.Options{Namespaces: namespaces, Selector: cfg.KafkaSelector, AllowRootBroker: cfg.AllowRootBroker, DebugImage: cfg.DebugImage})
	for _, ns := range namespaces {
		if !usable[ns] {
			continue // the RBAC check said why
		}
		check := client.CheckAdmission(ctx, ns)
		switch {
		case check.Enforced():
			out = append(out, res("admission", OK, check.String(), ""))
		case check.State == kube.AdmissionMissing && cfg.AcceptNoPolicy:
			out = append(out, res("admission", Note, check.String()+"; repairs run anyway (ACKNOWLEDGE_NO_ADMISSION_POLICY=true)", guard.Fix(check.State)))
			continue
		default:
			out = append(out, res("admission", Problem, check.String()+": repairs are disabled there", guard.Fix(check.State)))
			continue
		}
		out = append(out, checkImages(ctx, cfg, client, c, ns)...)
	}
	return out
}

// checkRBAC asks the API server, as the bot, whether it may make each
// request of botuses.All with scope in namespace ns. ok is false when the
// bot may do nothing there at all (then one result says so).
func checkRBAC(ctx context.Context, c Cluster, ns string, scope botuses.Scope) (out []Result, ok bool, err error) {
	var denied []string
	asked := 0
	for _, u := range botuses.All {
		if u.Scope != scope {
			continue
		}
		resource, sub, _ := strings.Cut(u.Resource, "/")
		for _, verb := range u.Verbs {
			attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Group: u.Group, Resource: resource, Subresource: sub, Verb: verb}
			if resource == "configmaps" && verb != "create" {
				attrs.Name = botuses.StateConfigMap // granted by name only
			}
			review, err := c.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
				&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}},
				metav1.CreateOptions{})
			if err != nil {
				return nil, false, err
			}
			asked++
			if !review.Status.Allowed {
				denied = append(denied, fmt.Sprintf("%s %s (%s)", verb, groupResource(u.Group, u.Resource), u.UsedBy))
			}
		}
	}
	res := func(area string, sev Severity, msg, fix string) Result {
		return Result{Area: area, Cluster: c.Name, Severity: sev, Message: msg, Fix: fix}
	}
	kind, role := "Kafka namespace", "deploy/'s Role and RoleBinding for Kafka namespaces (the chart's kafkaNamespaces; kustomize: a kafka-namespace-<n> component)"
	if scope == botuses.InBot {
		kind, role = "bot namespace (POD_NAMESPACE)", "deploy/'s Role and RoleBinding for the bot's namespace (installed with the bot)"
	}
	switch {
	case asked > 0 && len(denied) == asked:
		return []Result{res("namespace", Problem, fmt.Sprintf("%s %s: the bot may do nothing there: the namespace does not exist, or the bot's Role is not bound in it", kind, ns),
			fmt.Sprintf("check it exists (kubectl get namespace %s) and is the right name; then install %s in it", ns, role))}, false, nil
	case len(denied) > 0:
		for _, d := range denied {
			out = append(out, res("rbac", Problem, fmt.Sprintf("%s %s: the bot may not %s", kind, ns, d), "install "+role+" as shipped (a grant was removed or edited)"))
		}
		return out, true, nil
	}
	return []Result{res("rbac", OK, fmt.Sprintf("%s %s: the bot may make each of its %d requests", kind, ns, asked), "")}, true, nil
}

// groupResource is "resource" or "resource.group".
func groupResource(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// checkImages reports ProbeImages' verdicts for namespace ns as results.
func checkImages(ctx context.Context, cfg *config.Config, client *kube.Client, c Cluster, ns string) []Result {
	res := func(sev Severity, msg, fix string) Result {
		return Result{Area: "images", Cluster: c.Name, Severity: sev, Message: msg, Fix: fix}
	}
	verdicts, err := ProbeImages(ctx, client, cfg.DebugImage, cfg.AllowRootBroker, ns)
	if err != nil {
		return []Result{res(Problem, "namespace "+ns+": the Kafka pods could not be listed: "+err.Error(), "check KAFKA_POD_SELECTOR and the bot's RBAC")}
	}
	if len(verdicts) == 0 {
		return []Result{res(Note, "namespace "+ns+": no Kafka pod found, so no image is checked", "check KAFKA_POD_SELECTOR if Kafka runs there")}
	}
	var out []Result
	for _, v := range verdicts {
		switch {
		case v.NotBuilt != "":
			out = append(out, res(Note, fmt.Sprintf("%s/%s: %s", ns, v.Pod, v.NotBuilt), ""))
		case v.OutsideAllowList:
			out = append(out, res(Problem, fmt.Sprintf("%s/%s runs image %s, which is not in the debug-image allow-list: the admission policy would refuse its repair after Approve", ns, v.Pod, v.Repository),
				allowListFix(v.Repository)))
		case v.Refusal != "":
			out = append(out, res(Problem, fmt.Sprintf("%s/%s: %s", ns, v.Pod, v.Refusal), "compare the broker's pod with deploy/base/admission-policy.yaml's rules"))
		case v.Err != nil:
			out = append(out, res(Problem, fmt.Sprintf("%s/%s: its repair's debug pod could not be checked: %v", ns, v.Pod, v.Err), "run bot doctor again"))
		default:
			out = append(out, res(OK, fmt.Sprintf("%s/%s: its repair's debug pod (image %s) is admitted", ns, v.Pod, v.Repository), ""))
		}
	}
	return out
}

// allowListFix says how to allow a debug image repository.
func allowListFix(repo string) string {
	return fmt.Sprintf("add %s to the bot namespace's annotation %s (the chart's admissionPolicy.debugImageRepositories), or set DEBUG_IMAGE to an allowed image by digest",
		repo, imageAllowListAnnotation)
}

// ImageVerdict is the admission policy's answer to the debug pod a repair
// of one Kafka pod would create (the first pod of each image repository).
type ImageVerdict struct {
	// Pod is the Kafka pod; Repository the debug image's repository.
	Pod, Repository string
	// OutsideAllowList: the policy refused the image's repository.
	OutsideAllowList bool
	// Refusal is the policy's refusal for another reason, in one sentence.
	Refusal string
	// NotBuilt says why no debug pod could be built (a root broker, no
	// image by digest): the repair itself would refuse before the policy.
	NotBuilt string
	// Err is an error of the dry run itself (no answer).
	Err error
}

// ProbeImages asks the admission policy, by a server-side dry run (nothing
// is stored) of the debug pod a repair of one Kafka pod per image
// repository in namespace would create, whether that repair would be
// admitted, and records each verdict in client (RecordImageVerdict), so a
// diagnosis of a broker whose image the allow-list does not name (a
// bitnamilegacy/kafka or mirrored image) offers no Approve and says why.
// `bot doctor` reports the verdicts; `bot serve` probes at start and every
// few minutes.
func ProbeImages(ctx context.Context, client *kube.Client, debugImage string, allowRoot bool, namespace string) ([]ImageVerdict, error) {
	pods, err := client.ListKafkaPods(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []ImageVerdict
	seen := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		debug, err := recovery.DebugPod(debugInput(debugImage, allowRoot, pod))
		if err != nil {
			v := ImageVerdict{Pod: pod.Name, NotBuilt: "no automated repair could be built for it: " + err.Error()}
			var root *kube.RootBrokerError
			if errors.As(err, &root) {
				v.NotBuilt = "it runs as root, so it gets the manual runbook, not the automated repair"
			}
			out = append(out, v)
			continue
		}
		repo, _, _ := strings.Cut(debug.Spec.Containers[0].Image, "@")
		if seen[repo] {
			continue
		}
		seen[repo] = true
		v := ImageVerdict{Pod: pod.Name, Repository: repo}
		_, err = client.Clientset().CoreV1().Pods(namespace).Create(ctx, debug, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case err == nil:
			client.RecordImageVerdict(namespace, repo, "")
		case strings.Contains(err.Error(), imageAllowListAnnotation):
			v.OutsideAllowList = true
			client.RecordImageVerdict(namespace, repo, fmt.Sprintf("the admission policy would refuse the repair's debug pod: its image repository %s is not in the debug-image allow-list; to allow it, %s",
				repo, allowListFix(repo)))
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			v.Refusal = "the admission policy would refuse its repair's debug pod: " + err.Error()
		default:
			v.Err = err
		}
		out = append(out, v)
	}
	return out, nil
}

// debugInput is the debug pod a repair of pod would create, for a move of
// the metadata log (the script's input does not change what the policy
// checks: image, claims, identity, command).
func debugInput(debugImage string, allowRoot bool, pod *corev1.Pod) recovery.DebugPodInput {
	container := kube.KafkaContainerName(pod)
	return recovery.DebugPodInput{
		Broker: pod, KafkaContainer: container, ClaimNames: mountedClaims(pod, container),
		Image: debugImage, RepairID: "doctor", AllowRoot: allowRoot,
		Script: recovery.ScriptInput{
			Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0", NodeID: "0",
			BackupName: recovery.BackupName("doctor", time.Now()),
		},
	}
}

// mountedClaims are the PVCs the container mounts.
func mountedClaims(pod *corev1.Pod, container string) []string {
	claimOf := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claimOf[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	var out []string
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name != container {
			continue
		}
		for _, m := range ctr.VolumeMounts {
			if claim, ok := claimOf[m.Name]; ok && !slices.Contains(out, claim) {
				out = append(out, claim)
			}
		}
	}
	return out
}
