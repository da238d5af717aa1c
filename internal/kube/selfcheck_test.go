// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestCheckAdmissionReadsTheAnswer(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name   string
		answer error
		want   AdmissionState
	}{
		{"admitted: the policy is missing", nil, AdmissionMissing},
		{"refused by the policy", apierrors.NewForbidden(pods, admissionProbeName,
			errors.New("ValidatingAdmissionPolicy 'kafka-bot-guard' with binding 'kafka-bot-guard' denied request: debug pods run only the bot's embedded repair script")), AdmissionEnforced},
		{"refused by another policy", apierrors.NewForbidden(pods, admissionProbeName,
			errors.New("ValidatingAdmissionPolicy 'site-policy' with binding 'x' denied request: no")), AdmissionUnknown},
		{"refused by RBAC", apierrors.NewForbidden(pods, admissionProbeName,
			errors.New(`User "system:serviceaccount:kafka-bot:kafka-bot" cannot create resource "pods" in API group "" in the namespace "kafka"`)), AdmissionNoAccess},
		{"refused by Pod Security", apierrors.NewForbidden(pods, admissionProbeName,
			errors.New(`violates PodSecurity "restricted:latest"`)), AdmissionUnknown},
		{"API server unreachable", errors.New("dial tcp: connection refused"), AdmissionUnreachable},
		{"API server unavailable", apierrors.NewServiceUnavailable("etcd is down"), AdmissionUnreachable},
		{"API server timeout", apierrors.NewTimeoutError("slow", 1), AdmissionUnreachable},
		{"another API error", apierrors.NewBadRequest("odd"), AdmissionUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			var created []*corev1.Pod
			var dryRun [][]string
			cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				ca := a.(k8stesting.CreateActionImpl)
				created = append(created, ca.GetObject().(*corev1.Pod))
				dryRun = append(dryRun, ca.CreateOptions.DryRun)
				return true, ca.GetObject(), tt.answer
			})
			got := New(cs, Options{}).CheckAdmission(t.Context(), "kafka")
			if got.State != tt.want || got.Namespace != "kafka" {
				t.Errorf("state %s in %q, want %s", got.State, got.Namespace, tt.want)
			}
			if len(created) != 1 || !slices.Equal(dryRun[0], []string{metav1.DryRunAll}) {
				t.Fatalf("the probe must be one server-side dry run; creates %d, dryRun %v", len(created), dryRun)
			}
			if got.Enforced() != (tt.want == AdmissionEnforced) {
				t.Errorf("Enforced() = %v", got.Enforced())
			}
		})
	}
}

// TestAdmissionProbeIsRefusedOnlyForItsCommand: the probe passes the
// restricted Pod Security Standard's checks that Pod Security admission
// runs before the policy, so only the policy can refuse it.
func TestAdmissionProbeIsRefusedOnlyForItsCommand(t *testing.T) {
	p := AdmissionProbe("kafka")
	c := p.Spec.Containers[0]
	sc := c.SecurityContext
	switch {
	case p.Labels[LabelManagedBy] != ManagedByBot:
		t.Error("the probe must look like the bot's debug pod")
	case sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("the probe must be non-root without privilege escalation")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}):
		t.Error("the probe must drop ALL capabilities")
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("the probe must use seccomp RuntimeDefault")
	case len(p.Spec.Volumes) != 0 || p.Spec.HostNetwork || p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken:
		t.Error("the probe must not mount anything")
	case len(c.Command) != 3 || c.Command[2] == "":
		t.Error("the probe runs a command that is not the repair script")
	}
}
