// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestApproveAfterPodRecreatedIsRefused: an approval is for one pod
// instance. The broker is diagnosed and the Approve button posted; then
// someone deletes the pod and its StatefulSet recreates it (a new UID),
// crash-looping on the same error. Clicking Approve on the old message is
// refused by the same-pod-UID gate, with a message naming both UIDs and
// asking for a new diagnosis, and nothing is written: the volume is byte
// for byte the same, no debug pod was ever created, no repair Lease exists,
// and the new pod is left alone.
func TestApproveAfterPodRecreatedIsRefused(t *testing.T) {
	w := newWorld(t, "kafka-e2e-replay", worldOptions{})
	old, vol := w.seedCluster()
	before := readTree(t, vol)
	debugPods := w.recordDebugPods()
	w.startBot("kafkabot-0")

	m := w.diagnose("diagnose broker-0")
	if ids := actionIDs(t, m.Blocks); !slices.Contains(ids, actionApprove) {
		t.Fatalf("the diagnosis offers %v, want an Approve button to click", ids)
	}

	// The pod is deleted and recreated by its controller, still crashing.
	w.kubelet.OnRestart(w.ns, seedBroker, kubesim.RestartOutcome{CrashLog: seedLog()})
	if err := w.admin.CoreV1().Pods(w.ns).Delete(w.ctx(), seedBroker, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting %s: %v", seedBroker, err)
	}
	testenv.WaitFor(t, "the broker to be recreated, crash-looping", func(ctx context.Context) (bool, error) {
		p, err := w.admin.CoreV1().Pods(w.ns).Get(ctx, seedBroker, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return p.UID != old.UID && p.DeletionTimestamp == nil && crashLoopingNow(p.Status.ContainerStatuses), nil
	})
	recreated, err := w.pod(seedBroker)
	if err != nil {
		t.Fatal(err)
	}

	w.click(m, actionApprove, approver)
	th := w.waitRepairEnd(m)
	summary := outcomeText(th)
	t.Logf("the thread:\n%s", strings.Join(th, "\n---\n"))
	for _, want := range []string{
		"Repair stopped by a safety check: nothing was changed",
		recovery.GateSamePod,
		"was recreated",
		string(recreated.UID), // the pod it found
		string(old.UID),       // the pod that was approved
		"diagnose it again",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, summary)
		}
	}
	for _, step := range []string{"Take the repair lease", "Create debug pod", "Restart " + seedBroker} {
		if stepRan(th, step) {
			t.Errorf("the thread shows step %q run after the refusal:\n%s", step, strings.Join(th, "\n---\n"))
		}
	}
	w.waitSlack("the parent message to show the refusal", func() bool {
		return strings.Contains(blockTexts(t, w.message(m).Blocks), "stopped by a safety check")
	})
	if ids := actionIDs(t, w.message(m).Blocks); slices.Contains(ids, actionApprove) {
		t.Errorf("the refused message still offers Approve: %v", ids)
	}

	// Nothing changed: the volume, no debug pod, no Lease, the new pod
	// untouched (same UID, still crash-looping, not restarted by the bot).
	if d := before.diff(readTree(t, vol)); len(d) > 0 {
		t.Errorf("the volume changed:\n%s", strings.Join(d, "\n"))
	}
	if n := len(debugPods.pods()); n != 0 {
		t.Errorf("%d debug pods were created", n)
	}
	if left := w.debugPods(); len(left) != 0 {
		t.Errorf("%d debug pods exist", len(left))
	}
	_, err = w.admin.CoordinationV1().Leases(w.ns).Get(w.ctx(), kube.RepairLeaseName(seedBroker), metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("reading the repair Lease after the refusal: %v, want NotFound (no Lease taken)", err)
	}
	now, err := w.pod(seedBroker)
	if err != nil {
		t.Fatal(err)
	}
	if now.UID != recreated.UID || now.DeletionTimestamp != nil {
		t.Errorf("the recreated broker (UID %s) was deleted or replaced: now UID %s, deleting %v", recreated.UID, now.UID, now.DeletionTimestamp)
	}
}

// crashLoopingNow reports whether a container waits in CrashLoopBackOff.
func crashLoopingNow(statuses []corev1.ContainerStatus) bool {
	return slices.ContainsFunc(statuses, func(s corev1.ContainerStatus) bool {
		return s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff"
	})
}
