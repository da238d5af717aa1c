// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// TestBotPodDeletedMidRepair: the bot pod running a repair is deleted (as
// by a node drain or a rollout) while the repair waits for its debug pod.
// The Deployment replaces it with a pod of another name; the stopping bot
// hands the repair Lease off, and a replica resumes the repair at once from
// it, in the same thread, waiting for the debug pod it did not create; the
// metadata log is moved once. (Before the hand-off, the new pod waited for
// the Lease to expire: REPAIR_TIMEOUT plus two minutes.)
//
// The debug pod is held Pending by cordoning the node before the approval
// (the debug pod is placed by node affinity, so the scheduler must place
// it), which makes "mid-repair" a state rather than a race.
func TestBotPodDeletedMidRepair(t *testing.T) {
	s := newScenario(t, "resume", bitnami, "100")
	s.writeVolumes("100", true)
	pods := watchPods(t)
	s.deploy()
	s.waitCrashLoop(1)

	setUnschedulable(t, true)
	t.Cleanup(func() { setUnschedulable(t, false) })
	m := diagnose(t, "diagnose "+kafkaNS+"/"+s.broker)
	click(t, m, actionApprove, approver)
	// Running (⏳), not only listed (⏸): the bot waits for the Pending debug
	// pod, to give it its go or for it to finish.
	waitThreadFunc(t, m, "the wait for the debug pod", func(s string) bool {
		return strings.Contains(s, "⏳ Give the debug pod its go") || strings.Contains(s, "⏳ Wait for debug pod")
	}, 2*time.Minute)

	ctx := context.Background()
	lease, err := env.admin.CoordinationV1().Leases(kafkaNS).Get(ctx, kube.RepairLeaseName(s.broker), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	botPod, err := env.admin.CoreV1().Pods(botNS).Get(ctx, holder, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the repair Lease's holder %q is not a bot pod: %v", holder, err)
	}
	deleted := time.Now()
	if err := env.admin.CoreV1().Pods(botNS).Delete(ctx, botPod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &botPod.UID}}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		_, err := env.admin.CoreV1().Pods(botNS).Get(ctx, botPod.Name, metav1.GetOptions{})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("the bot pod %s did not go: %v", botPod.Name, err)
	}
	setUnschedulable(t, false)

	th, summary, _ := waitOutcome(t, m, resumeWait)
	measure(t, "bot pod deleted to the resumed repair's summary", time.Since(deleted))
	if !strings.Contains(summary, "Repair succeeded") {
		t.Fatalf("the resumed repair did not succeed:\n%s", strings.Join(th, "\n---\n"))
	}
	if !strings.Contains(strings.Join(th, "\n"), "bot restarted during step") {
		t.Errorf("the thread does not say the repair was resumed:\n%s", strings.Join(th, "\n---\n"))
	}
	checkBackup(t, s) // exactly one backup folder: moved once
	if n := len(pods.debugPods(s.broker)); n != 1 {
		t.Errorf("%d debug pods ran, want the one the first bot created", n)
	}
	now, err := s.pod(s.broker)
	if err != nil {
		t.Fatal(err)
	}
	if !kube.PodReady(now) {
		t.Errorf("%s is not Ready after the resumed repair", s.broker)
	}
}

// resumeWait bounds the wait for a resumed repair: well under the Lease's
// expiry (REPAIR_TIMEOUT, 10 minutes, plus two), so only a hand-off passes.
const resumeWait = 3 * time.Minute

// setUnschedulable cordons or uncordons the node.
func setUnschedulable(t *testing.T, on bool) {
	t.Helper()
	patch := []byte(`{"spec":{"unschedulable":` + map[bool]string{true: "true", false: "false"}[on] + `}}`)
	if _, err := env.admin.CoreV1().Nodes().Patch(context.Background(), env.nodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
