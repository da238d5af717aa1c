// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// nameLayoutBrokers sets hostile.BrokerParams on the bot's Namespace (the
// policy's parameters), so the brokers of every hostile layout are named,
// restores the previous values when the test ends, and waits until the API
// server applies them (it reads parameters asynchronously).
func nameLayoutBrokers(t *testing.T, env *testenv.Env, b botInstall, c hostile.Cluster) {
	t.Helper()
	ctx := testContext(t)
	ns, err := env.Clientset.CoreV1().Namespaces().Get(ctx, b.namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, restore := map[string]any{}, map[string]any{}
	for k, v := range hostile.BrokerParams() {
		set[k] = v
		if old, ok := ns.Annotations[k]; ok {
			restore[k] = old
		} else {
			restore[k] = nil
		}
	}
	patch := func(ctx context.Context, annotations map[string]any) error {
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if err != nil {
			return err
		}
		_, err = env.Clientset.CoreV1().Namespaces().Patch(ctx, b.namespace, types.MergePatchType, data, metav1.PatchOptions{})
		return err
	}
	if err := patch(ctx, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := patch(context.Background(), restore); err != nil {
			t.Errorf("restoring the policy's parameters: %v", err)
		}
	})
	// The last layout (plain manifests, kafka-1) is named only by these.
	layouts := hostile.Layouts(b.kafkaNS, "node-1")
	pod, err := layouts[len(layouts)-1].DebugPod()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the policy to read the broker parameters", func(ctx context.Context) (bool, error) {
		_, err := c.Bot.CoreV1().Pods(b.kafkaNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, nil
	})
}

// runShapes tries the named shapes of hostile.Shapes as the bot: each must
// exist and be refused by the layer and rule it names.
func runShapes(t *testing.T, c hostile.Cluster, names []string) {
	t.Helper()
	ctx := testContext(t)
	byName := map[string]hostile.Shape{}
	for _, s := range hostile.Shapes() {
		byName[s.Name] = s
	}
	for _, name := range names {
		s, ok := byName[name]
		if !ok {
			t.Errorf("no shape %q in hostile.Shapes", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			if err := s.Check(s.Try(ctx, c)); err != nil {
				t.Errorf("%s (want refused by %s): %v", name, s.Layer, err)
			}
		})
	}
}

// genuineAdmitted: the bot's real debug pod of every layout is admitted (so
// the refusals come from the rules, not from a policy that refuses all).
func genuineAdmitted(t *testing.T, b botInstall, c hostile.Cluster) {
	t.Helper()
	ctx := testContext(t)
	for _, l := range hostile.Layouts(b.kafkaNS, "node-1") {
		pod, err := l.DebugPod()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Bot.CoreV1().Pods(b.kafkaNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("the bot's debug pod for %s was refused: %v", l.Name, err)
		}
	}
	// Its go, on its own existing debug pod, as the bot gives it.
	goPatch := `{"metadata":{"annotations":{"kafkabot/go":"hostile-` + hostile.OtherBrokerName + `.1767225600"}}}`
	if _, err := c.Bot.CoreV1().Pods(b.kafkaNS).Patch(ctx, hostile.OtherDebugPod, types.MergePatchType, []byte(goPatch),
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the bot's go on its own debug pod was refused: %v", err)
	}
}

// containmentCluster installs the bot as deploy/ does, the shapes'
// targets, and the broker parameters of every layout.
func containmentCluster(t *testing.T) (botInstall, hostile.Cluster) {
	t.Helper()
	env := testenv.Start(t)
	b := installAs(t, env, testenv.BotNamespace, testenv.BotServiceAccount, true)
	kc, c := b.cluster(t, env)
	t.Cleanup(func() {
		if err := hostile.Uninstall(context.Background(), env.Clientset, c); err != nil {
			t.Error(err)
		}
	})
	nameLayoutBrokers(t, env, b, c)
	waitForAdmission(t, kc, b.kafkaNS, kube.AdmissionEnforced)
	return b, c
}

// TestContainment1_DebugPodsAreBoundToTheAdministratorsBrokers (issue 27
// item 1, review finding 1), on the real API server with deploy/'s policy:
// a debug pod serves only a broker pod the administrator's parameters name
// (kafkabot.io/broker-pods), mounts only claims its templates name for that
// pod, compared whole, cannot skip the node-id check, carries no go at
// creation and waits only for its own repair's go; one name per broker pod
// bounds how many exist at once. Before the fix every shape here was
// admitted (the claim rule was endsWith/startsWith on a label the creator
// picks, any KB_* value and any annotation were free).
func TestContainment1_DebugPodsAreBoundToTheAdministratorsBrokers(t *testing.T) {
	b, c := containmentCluster(t)
	genuineAdmitted(t, b, c)
	runShapes(t, c, []string{
		"a controller's claim, the label naming the controller pod, node-id check skipped",
		"label '0': a broker's and a controller's claim in one pod",
		"label 'postgres': a non-Kafka claim (any hyphenated claim)",
		"a named broker's label with a claim no template names",
		"a claim named like the broker's with a suffix",
		"named kafkabot-repair-<other> (a second debug pod for one broker)",
		"KB_NODE_ID_CHECK=skip",
		"KB_NODE_ID_CHECK twice, require then skip (the last one wins)",
		"KB_MOUNT_ROOT elsewhere",
		"KB_GO_WANT chosen by the creator",
		"KB_GO_WAIT as long as the deadline",
		"the go annotation present at creation",
		"set the go of another repair on a debug pod",
		"a go without a deadline",
	})
}

// TestContainment2_PolicyPinsEveryFieldTheBotSets (issue 27 item 2, review
// finding 2), on the real API server: the fields that act outside the
// repair script are pinned to what the bot sets, at creation and on
// update. Before the fix every shape here was admitted.
func TestContainment2_PolicyPinsEveryFieldTheBotSets(t *testing.T) {
	b, c := containmentCluster(t)
	genuineAdmitted(t, b, c)
	runShapes(t, c, []string{
		"extra labels matching the Kafka Service and PDB selectors",
		"fsGroup with fsGroupChangePolicy Always (re-owns every file of the volume)",
		"fsGroup without fsGroupChangePolicy (the kubelet's default is Always)",
		"runAsGroup 0",
		"supplementalGroups [0]",
		"a priority class the parameters do not list",
		"a toleration of every taint",
		"a pod anti-affinity",
		"node affinity to the broker's node or any control-plane node",
		"a node selector",
		"huge requests and limits (the scheduler preempts pods)",
		"no memory limit",
		"an owner reference to the broker's StatefulSet",
		"a finalizer (the pod never goes away)",
		"subPath on the claim mount (a second mount of one filesystem)",
		"subPathExpr on the claim mount",
		"the claim mounted over the image's /bin",
		"the go file mounted writable",
		"the go volume exposing another annotation",
		"no volumes at all (pure resource spam)",
		"a hostname and subdomain (a headless Service's DNS name)",
		"a shared process namespace",
		"an AppArmor unconfined annotation",
		"add a finalizer to a debug pod",
		"add an owner reference to a debug pod",
		"change another annotation of a debug pod",
		"add a label to a debug pod",
	})
}

// TestContainment10_DeletesOnlyOfBrokersTheParametersName (issue 27 item 2,
// review finding 10), on the real API server: a plain StatefulSet's combined
// node, whose roles are only in its properties file, cannot be deleted by
// the bot's identity; the brokers the parameters name can. Before the fix
// the combined node was deletable (labelled app=kafka, no controller label
// or literal env).
func TestContainment10_DeletesOnlyOfBrokersTheParametersName(t *testing.T) {
	b, c := containmentCluster(t)
	runShapes(t, c, []string{
		"delete a combined node whose roles are only in its properties file",
		"delete a KRaft controller pod",
		"delete the operator's pod",
	})
	ctx := testContext(t)
	for _, broker := range createLayoutBrokers(t, b) {
		if err := c.Bot.CoreV1().Pods(b.kafkaNS).Delete(ctx, broker.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("the bot may not delete the broker %s, which the parameters name: %v", broker.Name, err)
		}
	}
}

// createLayoutBrokers creates, as an admin, the broker pod of every layout
// of hostile.Layouts (the parameters name them all) and returns them.
func createLayoutBrokers(t *testing.T, b botInstall) []*corev1.Pod {
	t.Helper()
	env := testenv.Start(t)
	ctx := testContext(t)
	var out []*corev1.Pod
	for _, l := range hostile.Layouts(b.kafkaNS, "node-1") {
		broker := l.Broker.DeepCopy()
		broker.UID, broker.Status, broker.Spec.NodeName = "", corev1.PodStatus{}, ""
		created, err := env.Clientset.CoreV1().Pods(b.kafkaNS).Create(ctx, broker, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, created)
	}
	return out
}

// TestContainment11_BrokerPodsTakeOnlyTheStatusRefresh, on the real API
// server with deploy/'s policy: the bot's one write to a broker pod while it
// waits for Kafka's stop (the kafkabot/status-refresh annotation, which makes
// the kubelet publish the back-off) is admitted on every layout's broker, and
// nothing else rides along: no other annotation, label, finalizer or owner
// reference, no value outside the token form, and not on controllers, combined
// nodes or the operator's pod.
func TestContainment11_BrokerPodsTakeOnlyTheStatusRefresh(t *testing.T) {
	b, c := containmentCluster(t)
	runShapes(t, c, []string{
		"the status refresh on a KRaft controller pod",
		"the status refresh on a combined node",
		"the status refresh on the operator's pod",
	})
	ctx := testContext(t)
	patch := func(pod, body string) error {
		_, err := c.Bot.CoreV1().Pods(b.kafkaNS).Patch(ctx, pod, types.StrategicMergePatchType, []byte(body),
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	for _, broker := range createLayoutBrokers(t, b) {
		if err := patch(broker.Name, hostile.StatusRefreshPatch); err != nil {
			t.Errorf("the bot's status refresh on the broker %s was refused: %v", broker.Name, err)
		}
		for _, tc := range []struct{ name, body string }{
			{"another annotation beside it", `{"metadata":{"annotations":{"kafkabot/status-refresh":"r.1","example.com/restart":"now"}}}`},
			{"another annotation alone", `{"metadata":{"annotations":{"kafkabot/go":"r.1767225600"}}}`},
			{"a label", `{"metadata":{"annotations":{"kafkabot/status-refresh":"r.1"},"labels":{"app.kubernetes.io/name":"not-kafka"}}}`},
			{"a finalizer", `{"metadata":{"annotations":{"kafkabot/status-refresh":"r.1"},"finalizers":["example.com/hold"]}}`},
			{"an owner reference", `{"metadata":{"annotations":{"kafkabot/status-refresh":"r.1"},"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"holder","uid":"00000000-0000-4000-8000-000000000099"}]}}`},
			{"a value with a space", `{"metadata":{"annotations":{"kafkabot/status-refresh":"r 1"}}}`},
			{"a value of 81 characters", `{"metadata":{"annotations":{"kafkabot/status-refresh":"` + strings.Repeat("a", 81) + `"}}}`},
			{"the image", `{"metadata":{"annotations":{"kafkabot/status-refresh":"r.1"}},"spec":{"containers":[{"name":"` + broker.Spec.Containers[0].Name + `","image":"docker.io/attacker/kafka:1"}]}}`},
		} {
			if err := patch(broker.Name, tc.body); !hostile.RefusedByPolicy(err) {
				t.Errorf("%s: the status refresh with %s was not refused by the policy: %v", broker.Name, tc.name, err)
			}
		}
	}
}

// TestContainmentUnsetParametersAdmitNoRepair: with the broker parameters
// removed from the bot's Namespace (kafkabot.io/broker-pods,
// kafkabot.io/broker-claims), the policy admits neither the bot's genuine
// debug pod nor the delete of a broker, as README's install section says
// ("Unset: no repair and no broker restart is admitted").
func TestContainmentUnsetParametersAdmitNoRepair(t *testing.T) {
	b, c := containmentCluster(t)
	env := testenv.Start(t)
	ctx := testContext(t)
	unset := map[string]any{}
	for k := range hostile.BrokerParams() {
		unset[k] = nil
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": unset}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Clientset.CoreV1().Namespaces().Patch(ctx, b.namespace, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	layouts := hostile.Layouts(b.kafkaNS, "node-1")
	pod, err := layouts[0].DebugPod()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the policy to refuse the genuine debug pod without parameters", func(ctx context.Context) (bool, error) {
		_, err := c.Bot.CoreV1().Pods(b.kafkaNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
	for _, l := range layouts {
		pod, err := l.DebugPod()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Bot.CoreV1().Pods(b.kafkaNS).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
			t.Errorf("the %s debug pod was admitted with no broker parameters set", l.Name)
		}
		broker := l.Broker.DeepCopy()
		broker.UID, broker.Status, broker.Spec.NodeName, broker.ResourceVersion = "", corev1.PodStatus{}, "", ""
		if _, err := env.Clientset.CoreV1().Pods(b.kafkaNS).Create(ctx, broker, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Bot.CoreV1().Pods(b.kafkaNS).Delete(ctx, broker.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
			t.Errorf("the bot may delete the %s broker %s with no broker parameters set", l.Name, broker.Name)
		}
	}
}
