// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// The seed incident's crash log lives with the kube package's test data
// (see internal/kube/testdata/inspect/SOURCES.md).
const diagnoseSeedLog = "../../internal/kube/testdata/inspect/34-kraft-metadata-log-unexpected-append-offset.log"

// diagnoseSeedCluster is the seed incident as client-go's fake clientset:
// Bitnami broker foobar-kafka-broker-0 of release foobar (StatefulSet
// foobar-kafka-broker), crash-looping with exit 1, its claim, an event, and
// its previous container's log served through pods/log.
func diagnoseSeedCluster(t *testing.T, previousLog []byte) *fake.Clientset {
	t.Helper()
	crashed := time.Date(2025, 4, 28, 8, 22, 1, 0, time.UTC)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "foobar-kafka-broker-0", Namespace: "kafka", UID: "0b6c3f1e-5f57-4c1a-9a39-2d4e1f1b7c10",
			Labels: map[string]string{
				"app.kubernetes.io/name":      "kafka",
				"app.kubernetes.io/instance":  "foobar",
				"app.kubernetes.io/component": "broker",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "foobar-kafka-broker", Controller: new(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: "worker-3",
			Containers: []corev1.Container{{
				Name:  "kafka",
				Image: "docker.io/bitnami/kafka:3.5.1-debian-11-r1",
				Env: []corev1.EnvVar{
					{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "broker"},
					{Name: "KAFKA_CFG_NODE_ID", Value: "100"},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/bitnami/kafka"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-foobar-kafka-broker-0"}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "kafka", RestartCount: 27,
				Image:   "docker.io/bitnami/kafka:3.5.1-debian-11-r1",
				ImageID: "docker.io/bitnami/kafka@sha256:9e1c5d0e0c7e3a4b2f6d8a1b3c5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
					Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container=kafka"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 1, Reason: "Error", FinishedAt: metav1.NewTime(crashed)}},
			}},
		},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-foobar-kafka-broker-0", Namespace: "kafka"},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
	}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "foobar-kafka-broker-0.backoff", Namespace: "kafka"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "kafka", Name: pod.Name, UID: pod.UID},
		Type:           corev1.EventTypeWarning, Reason: "BackOff", Count: 311,
		Message:       "Back-off restarting failed container kafka in pod foobar-kafka-broker-0_kafka",
		LastTimestamp: metav1.NewTime(crashed),
	}
	cs := fake.NewClientset(pod, pvc, event)
	cs.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ga, ok := a.(k8stesting.GenericAction)
		if !ok || a.GetSubresource() != "log" {
			return false, nil, nil
		}
		if opts := ga.GetValue().(*corev1.PodLogOptions); !opts.Previous || opts.Container != "kafka" {
			t.Errorf("log request %+v, want the previous instance of container kafka", opts)
		}
		return true, &runtime.Unknown{Raw: previousLog}, nil
	})
	return cs
}

func diagnoseReadSeedLog(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(diagnoseSeedLog)
	if err != nil {
		t.Fatalf("reading seed crash log: %v", err)
	}
	return b
}

func TestDiagnosePodSeedIncidentText(t *testing.T) {
	crash := diagnoseReadSeedLog(t)
	cs := diagnoseSeedCluster(t, crash)
	client := kube.New(cs, kube.Options{Namespaces: []string{"kafka"}})

	var out bytes.Buffer
	if err := diagnosePod(context.Background(), client, diagnose.Default(), "kafka", "foobar-kafka-broker-0", "text", &out); err != nil {
		t.Fatalf("diagnosePod: %v", err)
	}
	got := out.String()
	for _, want := range []string{
		"kafka/foobar-kafka-broker-0 (uid 0b6c3f1e-5f57-4c1a-9a39-2d4e1f1b7c10)",
		"worker-3, phase Running",
		"broker, node id 100",
		"env KAFKA_CFG_PROCESS_ROLES=broker",
		"node id: env KAFKA_CFG_NODE_ID",
		"container kafka: waiting CrashLoopBackOff, not ready, 27 restarts",
		"last exit 1 (Error) at 2025-04-28T08:22:01Z",
		"data-foobar-kafka-broker-0 (volume data) at /bitnami/kafka: Bound, ReadWriteOnce",
		"Warning BackOff: Back-off restarting failed container kafka in pod foobar-kafka-broker-0_kafka (x311)",
		"1853 bytes of the previous instance's log of container kafka",
		"metadata-log-offset-mismatch",
		"next offset > log start offset",
		"remedy (automated after approval): move-metadata-log __cluster_metadata-0",
		"| kafka.common.UnexpectedAppendOffsetException: Unexpected offset in append to __cluster_metadata-0.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q\n--- report ---\n%s", want, got)
		}
	}
	if n := len(crash); n != 1853 {
		t.Fatalf("seed crash log is %d bytes, the expectations above assume 1853", n)
	}
	if actions := cs.Actions(); len(actions) > 4 {
		t.Errorf("diagnosis made %d API requests, want at most 4", len(actions))
	}
}

func TestDiagnosePodSeedIncidentJSON(t *testing.T) {
	cs := diagnoseSeedCluster(t, diagnoseReadSeedLog(t))
	client := kube.New(cs, kube.Options{})
	var out bytes.Buffer
	if err := diagnosePod(context.Background(), client, diagnose.Default(), "kafka", "foobar-kafka-broker-0", "json", &out); err != nil {
		t.Fatalf("diagnosePod: %v", err)
	}
	var report struct {
		Pod      map[string]any     `json:"pod"`
		Findings []diagnose.Finding `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	p := report.Pod
	for key, want := range map[string]any{
		"namespace": "kafka", "pod": "foobar-kafka-broker-0", "node": "worker-3", "cluster": "foobar",
		"role": "broker", "nodeID": "100", "kafkaContainer": "kafka", "logSource": "previous", "logBytes": 1853.0,
	} {
		if p[key] != want {
			t.Errorf("pod.%s = %#v, want %#v", key, p[key], want)
		}
	}
	if _, hasLog := p["log"]; hasLog {
		t.Error("JSON report carries the raw log; it must carry only facts and findings")
	}
	if src, _ := p["roleSource"].(string); !strings.Contains(src, "KAFKA_CFG_PROCESS_ROLES=broker") {
		t.Errorf("pod.roleSource = %q", src)
	}
	if len(report.Findings) == 0 {
		t.Fatal("no findings for the seed incident")
	}
	f := report.Findings[0]
	if f.Rule != "metadata-log-offset-mismatch" || !f.Remedy.Automated || f.Remedy.Action != diagnose.ActionMoveMetadataLog {
		t.Errorf("first finding = %s, remedy %+v; want metadata-log-offset-mismatch with the automated move", f.Rule, f.Remedy)
	}
	if f.Offsets == nil || f.Offsets.NextOffset != 57876669 || f.Offsets.LogStartOffset != 57054787 || !f.Offsets.LocalDivergence {
		t.Errorf("offsets = %+v, want next 57876669 > log start 57054787", f.Offsets)
	}
}

// diagnoseFixedEngine returns the same findings for every Snapshot.
type diagnoseFixedEngine []diagnose.Finding

func (e diagnoseFixedEngine) Diagnose(diagnose.Snapshot) []diagnose.Finding { return e }

func TestDiagnosePodOutputIsTerminalSafe(t *testing.T) {
	hostile := "\x1b]0;pwned\x07\x1b[2J[2025-04-28] ERROR boom\r"
	engine := diagnoseFixedEngine{{
		Rule: "test-rule", Title: "title\x1b[31m", Severity: diagnose.SeverityHigh,
		Evidence: []string{hostile}, Explanation: "line one\nline two", Remedy: diagnose.Remedy{Steps: []string{"step\x1b[0m"}},
	}}
	cs := diagnoseSeedCluster(t, []byte(hostile+"\n"))
	var out bytes.Buffer
	if err := diagnosePod(context.Background(), kube.New(cs, kube.Options{}), engine, "kafka", "foobar-kafka-broker-0", "text", &out); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(out.Bytes(), "\x1b\x07\r") {
		t.Errorf("text report carries raw control characters:\n%q", out.String())
	}
	for _, want := range []string{`| \x1b]0;pwned\x07\x1b[2J[2025-04-28] ERROR boom\x0d`, "      line one\n      line two\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDiagnosePodNoFindings(t *testing.T) {
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			cs := diagnoseSeedCluster(t, []byte("[2025-04-28] INFO all quiet\n"))
			var out bytes.Buffer
			if err := diagnosePod(context.Background(), kube.New(cs, kube.Options{}), diagnoseFixedEngine(nil), "kafka", "foobar-kafka-broker-0", output, &out); err != nil {
				t.Fatal(err)
			}
			want := "kubectl logs -n kafka foobar-kafka-broker-0 -c kafka --previous"
			if output == "json" {
				want = `"findings": []`
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		})
	}
}

func TestDiagnosePodErrors(t *testing.T) {
	cs := diagnoseSeedCluster(t, nil)
	client := kube.New(cs, kube.Options{Namespaces: []string{"kafka"}})
	var out bytes.Buffer
	err := diagnosePod(context.Background(), client, diagnoseFixedEngine(nil), "kube-system", "foobar-kafka-broker-0", "text", &out)
	if !errors.Is(err, kube.ErrNamespaceNotAllowed) || out.Len() != 0 {
		t.Errorf("err = %v, output %q; want ErrNamespaceNotAllowed and no output", err, out.String())
	}
	err = diagnosePod(context.Background(), client, diagnoseFixedEngine(nil), "kafka", "foobar-kafka-broker-9", "text", &out)
	if !errors.Is(err, kube.ErrPodNotFound) {
		t.Errorf("err = %v, want ErrPodNotFound", err)
	}
}

func TestParseDiagnoseArgs(t *testing.T) {
	ns := func(n string) clusterFlags { return clusterFlags{namespace: n} }
	tests := []struct {
		args    string
		want    diagnoseArgs
		wantErr string
	}{
		{args: "broker-0", want: diagnoseArgs{pod: "broker-0", output: "text"}},
		{args: "-n kafka broker-0", want: diagnoseArgs{cluster: ns("kafka"), pod: "broker-0", output: "text"}},
		{args: "broker-0 -n kafka --output json", want: diagnoseArgs{cluster: ns("kafka"), pod: "broker-0", output: "json"}},
		{args: "--namespace=kafka -o json foobar-kafka-broker-0", want: diagnoseArgs{cluster: ns("kafka"), pod: "foobar-kafka-broker-0", output: "json"}},
		{args: "-nkafka -ojson broker-0", want: diagnoseArgs{cluster: ns("kafka"), pod: "broker-0", output: "json"}},
		{args: "broker-0 -A --context prod --kubeconfig /tmp/k", want: diagnoseArgs{cluster: clusterFlags{allNamespaces: true, context: "prod", kubeconfig: "/tmp/k"}, pod: "broker-0", output: "text"}},
		{args: "", wantErr: "missing POD"},
		{args: "-n kafka", wantErr: "missing POD"},
		{args: "broker-0 broker-1", wantErr: "one POD expected, got 2"},
		{args: "broker-0 --output yaml", wantErr: `--output "yaml": want text or json`},
		{args: "broker-0 --force", wantErr: "unknown flag: --force"},
		{args: "broker-0 -n", wantErr: "flag needs an argument: 'n' in -n"},
		{args: "broker-0 -n kafka -A", wantErr: "-n/--namespace and -A/--all-namespaces exclude each other"},
		{args: "../etc", wantErr: "invalid name: pod \"../etc\""},
		{args: "-n Kafka broker-0", wantErr: "invalid name: namespace \"Kafka\""},
	}
	for _, tt := range tests {
		var got diagnoseArgs
		called := false
		cmd := newDiagnoseCmd(func(_ context.Context, a diagnoseArgs, _ io.Writer) error {
			got, called = a, true
			return nil
		})
		_, _, err := executeCmd(t, cmd, "", strings.Fields(tt.args)...)
		if tt.wantErr != "" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) || called {
				t.Errorf("diagnose %q: err %v, ran %t; want a usage error %q", tt.args, err, called, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("diagnose %q = %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
}

func TestRunDiagnoseUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"diagnose"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("bot diagnose without a pod exited %d, want 2", code)
	}
	if want := "bot diagnose: missing POD\nSee 'bot diagnose --help' for usage.\n"; stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("stderr %q, stdout %q; want stderr %q and no stdout", stderr.String(), stdout.String(), want)
	}
}
