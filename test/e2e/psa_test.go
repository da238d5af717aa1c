// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// restrictedPSA enforces the restricted Pod Security Standard on a namespace.
var restrictedPSA = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
}

// TestDebugPodAcceptedUnderRestrictedPSA: in a namespace that enforces the
// restricted Pod Security Standard, the debug pod the bot builds for the
// non-root broker (uid 1001) is admitted by the real API server (Pod
// Security admission, then deploy/'s ValidatingAdmissionPolicy), and the
// repair goes through.
func TestDebugPodAcceptedUnderRestrictedPSA(t *testing.T) {
	w := newWorld(t, "kafka-e2e-psa", worldOptions{namespaceLabels: restrictedPSA})

	// The namespace does enforce: a pod that may run as root is refused.
	rootPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "may-run-as-root"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36", Command: []string{"true"}}}},
	}
	_, err := w.admin.CoreV1().Pods(w.ns).Create(w.ctx(), rootPod, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("creating a pod that may run as root in a restricted namespace: err = %v, want a PodSecurity refusal", err)
	}

	old, vol := w.seedCluster()
	before := readTree(t, vol)
	debugPods := w.recordDebugPods()
	w.startBot("kafkabot-0")

	m := w.diagnose("diagnose broker-0")
	w.click(m, actionApprove, approver)
	th := w.waitRepairEnd(m)
	if !threadHas(th, "Repair succeeded: the broker is back") {
		t.Fatalf("the repair did not succeed under restricted Pod Security; the thread reads:\n%s", strings.Join(th, "\n---\n"))
	}

	// The admitted debug pod runs as the broker does, and no more.
	pod := checkOneDebugPod(t, w, debugPods)
	psc := pod.Spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != kafkaUID || psc.FSGroup == nil || *psc.FSGroup != kafkaUID ||
		psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("debug pod security context %+v, want uid and fsGroup %d, runAsNonRoot", psc, kafkaUID)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("the debug pod mounts a ServiceAccount token")
	}
	if got := requiredNode(pod); got != old.Spec.NodeName {
		t.Errorf("the debug pod requires node %q, want the broker's node %q", got, old.Spec.NodeName)
	}
	for _, c := range pod.Spec.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("debug container %s security context %+v, want no privilege escalation, all capabilities dropped, read-only root", c.Name, sc)
		}
	}

	checkMetadataLogMoved(t, vol, before)
	checkBrokerReplaced(t, w, old)
}

// requiredNode is the one node a pod's required node affinity allows by
// name ("" when it does not pin one).
func requiredNode(pod *corev1.Pod) string {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 {
		return ""
	}
	f := terms[0].MatchFields[0]
	if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 {
		return ""
	}
	return f.Values[0]
}
