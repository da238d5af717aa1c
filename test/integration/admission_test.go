package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/testenv"
)

// waitForDebugPodPolicy returns once the API server enforces deploy/'s
// ValidatingAdmissionPolicy: policies are loaded asynchronously, so right
// after they are applied a request may still pass. It probes with a pod the
// policy refuses, removing any probe that got through; only a refusal that
// comes from the policy counts (not, say, RBAC still catching up).
func waitForDebugPodPolicy(ctx context.Context, t *testing.T, bot, admin kubernetes.Interface, ns string) {
	t.Helper()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "policy-probe"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, err := bot.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{})
		switch {
		case (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) && strings.Contains(err.Error(), "kafka-bot-debug-pods"):
			return
		case apierrors.IsForbidden(err):
			// Not (yet) the policy: keep probing.
		case err == nil:
			zero := int64(0)
			if err := admin.CoreV1().Pods(ns).Delete(ctx, probe.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("probing the debug-pod policy: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("deploy/base/debug-pod-policy.yaml is not enforced: the bot can still create any pod")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestBotCreatesOnlyDebugPods shows that the bot's "create pods" right is
// narrowed, by deploy/'s ValidatingAdmissionPolicy, to debug pods that
// cannot reach the host; other users are not affected.
func TestBotCreatesOnlyDebugPods(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	admin, bot := botClients(t, env)
	ns := env.KafkaNamespace(t, "kafka-admission", nil)
	waitForDebugPodPolicy(ctx, t, bot, admin, ns)

	tests := []struct {
		name    string
		change  func(*corev1.Pod)
		refusal string // "" means the pod is accepted
	}{
		{"a debug pod", func(*corev1.Pod) {}, ""},
		{"a debug pod mounting a claim and an emptyDir", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-broker-0"}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			}
		}, ""},
		{"a pod without the bot's label", func(p *corev1.Pod) { p.Labels = nil }, "only create its debug pods"},
		{"a pod labelled as another manager's", func(p *corev1.Pod) { p.Labels["app.kubernetes.io/managed-by"] = "helm" }, "only create its debug pods"},
		{"a pod with a ServiceAccount token", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = nil }, "ServiceAccount token"},
		{"a pod mounting a host path", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, "only mount PersistentVolumeClaims"},
		{"a pod mounting a Secret", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "broker-jaas"}}}}
		}, "only mount PersistentVolumeClaims"},
		{"a pod on the host network", func(p *corev1.Pod) { p.Spec.HostNetwork = true }, "host's network"},
		{"a pod in the host PID namespace", func(p *corev1.Pod) { p.Spec.HostPID = true }, "host's network, PID"},
		{"a privileged pod", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, "unprivileged"},
		{"a pod adding a capability", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		}, "unprivileged"},
		{"a pod allowing privilege escalation", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}
		}, "unprivileged"},
		{"a pod with an init container", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
		}, "no init containers"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := debugPod("debug-" + string(rune('a'+i)))
			tt.change(pod)
			_, err := bot.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			if tt.refusal == "" {
				if err != nil {
					t.Fatalf("the policy refused a compliant debug pod: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("the bot created %s; the policy should refuse it", tt.name)
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				t.Fatalf("want a refusal by admission, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.refusal) {
				t.Errorf("refusal %q does not say %q", err, tt.refusal)
			}
		})
	}

	t.Run("other users are not constrained", func(t *testing.T) {
		plain := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "admin-pod"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, plain, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the policy refused the admin's pod: %v", err)
		}
	})
}
