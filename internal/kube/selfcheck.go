// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// AdmissionPolicyName is the ValidatingAdmissionPolicy (and binding) that
// deploy/ installs to narrow what the bot's ServiceAccount may write.
const AdmissionPolicyName = "kafka-bot-guard"

// AdmissionState is what the admission self-check found in one namespace.
type AdmissionState string

const (
	// AdmissionEnforced: the policy refused the probe pod.
	AdmissionEnforced AdmissionState = "enforced"
	// AdmissionMissing: the probe pod was admitted. The policy is not
	// installed, not bound to this ServiceAccount (its namespace lacks the
	// parameter label), or the cluster cannot run it (before 1.30).
	AdmissionMissing AdmissionState = "missing"
	// AdmissionNoAccess: RBAC refused the probe; the bot cannot create pods
	// in this namespace at all, so no repair can run there.
	AdmissionNoAccess AdmissionState = "no-access"
	// AdmissionUnreachable: the API server did not answer (connection
	// refused, timeout, unavailable); try again later.
	AdmissionUnreachable AdmissionState = "unreachable"
	// AdmissionUnknown: the check was refused by something else (another
	// admission plugin or webhook) or failed with another API error.
	AdmissionUnknown AdmissionState = "unknown"
)

// AdmissionCheck is the self-check's result for one namespace.
type AdmissionCheck struct {
	Namespace string
	State     AdmissionState
	// Detail says what was seen: the refusal, or the error.
	Detail string
}

// Enforced reports whether the policy guarded the namespace.
func (c AdmissionCheck) Enforced() bool { return c.State == AdmissionEnforced }

// String is a one-line summary for logs and Slack.
func (c AdmissionCheck) String() string {
	switch c.State {
	case AdmissionEnforced:
		return fmt.Sprintf("namespace %s: admission policy %s enforced", c.Namespace, AdmissionPolicyName)
	case AdmissionMissing:
		return fmt.Sprintf("namespace %s: admission policy %s NOT enforced (a pod it must refuse was admitted: "+
			"the policy is missing, not bound to this ServiceAccount, or unsupported before Kubernetes 1.30)", c.Namespace, AdmissionPolicyName)
	case AdmissionNoAccess:
		return fmt.Sprintf("namespace %s: the bot may not create pods here (RBAC), so it cannot repair here: %s", c.Namespace, c.Detail)
	case AdmissionUnreachable:
		return fmt.Sprintf("namespace %s: the admission self-check could not reach the API server: %s", c.Namespace, c.Detail)
	default:
		return fmt.Sprintf("namespace %s: the admission self-check failed: %s", c.Namespace, c.Detail)
	}
}

// unreachable reports whether err means the API server gave no answer:
// no API status at all (connection refused, DNS, TLS), a timeout, or a
// server that says it is unavailable or overloaded.
func unreachable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsTooManyRequests(err)
}

// admissionProbeName names the probe pod; it is never stored (dry run).
const admissionProbeName = "kafkabot-repair-admission-self-check"

// AdmissionProbe is the pod the self-check asks to create in namespace: it
// looks like the bot's debug pod and passes the restricted Pod Security
// Standard (so Pod Security admission does not refuse it first), but runs a
// command other than the repair script, which the policy must refuse.
func AdmissionProbe(namespace string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: admissionProbeName, Namespace: namespace,
			Labels: map[string]string{LabelManagedBy: ManagedByBot, LabelRepairID: "admission-self-check", LabelBroker: "admission-self-check"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:        ptr.To[int64](1),
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:    "repair",
				Image:   "registry.invalid/kafkabot-admission-self-check@sha256:" + strings.Repeat("0", 64),
				Command: []string{"sh", "-c", "echo the admission policy let this pod through"},
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}},
		},
	}
}

// CheckAdmission asks the API server to create AdmissionProbe in namespace
// as a server-side dry run (admission runs, nothing is stored) and reports
// whether deploy/'s admission policy refused it.
func (c *Client) CheckAdmission(ctx context.Context, namespace string) AdmissionCheck {
	check := AdmissionCheck{Namespace: namespace}
	_, err := c.cs.CoreV1().Pods(namespace).Create(ctx, AdmissionProbe(namespace), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil:
		check.State = AdmissionMissing
		check.Detail = "the probe pod was admitted"
	case (apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) &&
		strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+AdmissionPolicyName+"'"):
		check.State = AdmissionEnforced
		check.Detail = err.Error()
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot create resource"):
		check.State = AdmissionNoAccess
		check.Detail = err.Error()
	case unreachable(err):
		check.State = AdmissionUnreachable
		check.Detail = err.Error()
	default:
		// Refused by something else (another admission plugin or webhook),
		// or no answer: the policy's presence is unknown, so do not claim it.
		check.State = AdmissionUnknown
		check.Detail = err.Error()
	}
	return check
}
