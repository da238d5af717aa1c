// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/fleet"
)

// chartMeta is what the tests read of Chart.yaml.
type chartMeta struct {
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion"`
	KubeVersion string `json:"kubeVersion"`
}

func readChartMeta(t *testing.T) chartMeta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m chartMeta
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestChartRendersAndLintsWithNoFlags: `helm template CHART` and `helm lint
// CHART` with nothing else (no values, no namespace, no --kube-version: how
// GitOps tools and a newcomer first run them) succeed with Helm 3 and Helm
// 4, and the image is the release's public repository at the chart's
// appVersion. They failed before: the chart's kubeVersion against Helm's
// default Kubernetes version, then the required digest.
func TestChartRendersAndLintsWithNoFlags(t *testing.T) {
	meta := readChartMeta(t)
	if meta.KubeVersion != "" {
		t.Errorf("Chart.yaml has kubeVersion %q: Helm checks it against its own default in helm template and lint, with no cluster; the chart checks the version at install instead", meta.KubeVersion)
	}
	for _, h := range helms(t) {
		t.Run(h.name, func(t *testing.T) {
			out, stderr, ok := h.run(t, "template", chartDir)
			if !ok {
				t.Fatalf("helm template %s failed:\n%s", chartDir, stderr)
			}
			deployment := findObject(t, parseObjects(t, out), "Deployment", "default", "kafka-bot")
			containers := nested(deployment, "spec", "template", "spec", "containers").([]any)
			if got, want := containers[0].(map[string]any)["image"], "ghcr.io/kafka-chatops/kafkabot:"+meta.AppVersion; got != want {
				t.Errorf("default image %v, want the release's %s", got, want)
			}
			for _, args := range [][]string{{"lint", chartDir}, {"lint", "--strict", chartDir}} {
				if out, stderr, ok := h.run(t, args...); !ok {
					t.Errorf("helm %s failed:\n%s%s", strings.Join(args, " "), out, stderr)
				}
			}
		})
	}
}

// helmStandardLabels are the labels every object of the chart carries, with
// the values they must have for release "kafkabot".
func helmStandardLabels(meta chartMeta) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "kafkabot",
		"app.kubernetes.io/instance":   release,
		"app.kubernetes.io/version":    meta.AppVersion,
		"app.kubernetes.io/managed-by": "Helm",
		"helm.sh/chart":                "kafkabot-" + meta.Version,
	}
}

// TestChartLabelsEveryObject: every object the chart renders, with every
// values file of the tests (all optional objects on in two-namespaces, the
// clusters ConfigMap in multi-cluster), carries Helm's standard labels: the
// cluster-wide ValidatingAdmissionPolicy and its binding too (they lacked
// them).
func TestChartLabelsEveryObject(t *testing.T) {
	want := helmStandardLabels(readChartMeta(t))
	for _, h := range helms(t) {
		for _, name := range []string{"default", "two-namespaces", "multi-cluster"} {
			t.Run(h.name+"/"+name, func(t *testing.T) {
				out, stderr, ok := h.template(t, releaseNamespace, "-f", filepath.Join(chartTestdata, "values", name+".yaml"))
				if !ok {
					t.Fatal(stderr)
				}
				kinds := map[string]bool{}
				for _, o := range parseObjects(t, out) {
					kinds[o["kind"].(string)] = true
					labels, _ := nested(o, "metadata", "labels").(map[string]any)
					hook, _ := nested(o, "metadata", "annotations").(map[string]any)
					for k, v := range want {
						// `helm test`'s doctor pod names itself kafkabot-doctor so that
						// the bot's selector (Service, PDB) never picks it.
						if k == "app.kubernetes.io/name" && hook["helm.sh/hook"] == "test" {
							v = "kafkabot-doctor"
						}
						if labels[k] != v {
							t.Errorf("%s: label %s = %v, want %q", objectKey(o), k, labels[k], v)
						}
					}
				}
				for _, k := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Namespace", "Deployment"} {
					if !kinds[k] {
						t.Errorf("the rendering has no %s: the test is stale", k)
					}
				}
			})
		}
	}
}

// podChecksums returns the Deployment's pod template annotations.
func podChecksums(t *testing.T, h helm, args ...string) map[string]any {
	t.Helper()
	out, stderr, ok := h.template(t, releaseNamespace, args...)
	if !ok {
		t.Fatal(stderr)
	}
	d := findObject(t, parseObjects(t, out), "Deployment", releaseNamespace, "kafka-bot")
	a, _ := nested(d, "spec", "template", "metadata", "annotations").(map[string]any)
	return a
}

// TestChartChecksumRollsThePods: the pod template's checksum annotations
// change when the ConfigMap's values, the chart-managed Secret's values or
// the clusters list change (so helm upgrade rolls the pods, which read them
// at startup), and only then. A changed Secret did not roll them.
func TestChartChecksumRollsThePods(t *testing.T) {
	h := helms(t)[0]
	secretValues := []string{
		"--set", "existingSecret=", "--set", "secret.create=true",
		"--set", "secret.values.slackAppToken=xapp-checksum-test", "--set", "secret.values.slackBotToken=xoxb-checksum-test",
		"--set", "secret.values.approvalSecret=checksum-test-approval-secret-of-32-bytes",
	}
	base := append([]string{"-f", filepath.Join(chartTestdata, "values", "default.yaml")}, secretValues...)
	baseline := podChecksums(t, h, base...)
	for _, key := range []string{"checksum/config", "checksum/secret"} {
		if s, _ := baseline[key].(string); len(s) != 64 {
			t.Fatalf("no %s annotation (sha256) on the pod template: %v", key, baseline)
		}
	}
	if _, ok := baseline["checksum/clusters"]; ok {
		t.Errorf("a checksum/clusters annotation without clusters: %v", baseline)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		changed []string // the annotations that must change; the others must not
	}{
		{"a setting", []string{"--set", "logging.level=debug"}, []string{"checksum/config"}},
		{"an approver", []string{"--set", "slack.approvers={U0NEWAPPR1}"}, []string{"checksum/config"}},
		{"a token", []string{"--set", "secret.values.slackBotToken=xoxb-rotated"}, []string{"checksum/secret"}},
		{"the replicas", []string{"--set", "replicas=3"}, nil},
		{"the clusters", []string{"--set", "clusters[0].name=prod-eu"}, []string{"checksum/config", "checksum/clusters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := podChecksums(t, h, append(slices.Clone(base), tc.args...)...)
			for _, key := range []string{"checksum/config", "checksum/secret", "checksum/clusters"} {
				changed := got[key] != baseline[key]
				if want := slices.Contains(tc.changed, key); changed != want {
					t.Errorf("%s: %s changed=%v (%v -> %v), want changed=%v", tc.name, key, changed, baseline[key], got[key], want)
				}
			}
		})
	}
	// An existing Secret is not the chart's: no secret checksum, and the
	// values document how to roll the pods after changing it.
	if a := podChecksums(t, h, "-f", filepath.Join(chartTestdata, "values", "default.yaml")); a["checksum/secret"] != nil {
		t.Errorf("a checksum of a Secret the chart does not render: %v", a)
	}
	values, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(values), "rollout restart deployment/kafka-bot") {
		t.Error("values.yaml does not say how to roll the pods after changing existingSecret")
	}
}

// TestChartServesSeveralClusters renders values for three clusters and
// checks the bot gets a CLUSTERS_FILE its own parser (internal/fleet)
// accepts, with each cluster's Kafka access, naming each kubeconfig where
// the Deployment mounts that cluster's Secret under the key given
// (TestChartMountsKafkaSecrets checks the Kafka Secrets' mounts).
func TestChartServesSeveralClusters(t *testing.T) {
	for _, h := range helms(t) {
		t.Run(h.name, func(t *testing.T) {
			out, stderr, ok := h.template(t, releaseNamespace, "-f", filepath.Join(chartTestdata, "values", "multi-cluster.yaml"))
			if !ok {
				t.Fatal(stderr)
			}
			objs := parseObjects(t, out)
			cm := findObject(t, objs, "ConfigMap", releaseNamespace, "kafka-bot")
			if got := cm["data"].(map[string]any)["CLUSTERS_FILE"]; got != "/etc/kafkabot/clusters.yaml" {
				t.Errorf("CLUSTERS_FILE = %v", got)
			}
			clustersCM := findObject(t, objs, "ConfigMap", releaseNamespace, "kafka-bot-clusters")
			specs, err := fleet.Parse([]byte(clustersCM["data"].(map[string]any)["clusters.yaml"].(string)))
			if err != nil {
				t.Fatalf("the bot would refuse the chart's clusters file: %v", err)
			}
			want := []fleet.Spec{
				{Name: "prod-eu", Kubeconfig: "/etc/kafkabot/clusters/prod-eu/kubeconfig", KafkaNamespaces: []string{"kafka"}, ApprovalChannels: []string{"C0PRODEU"}, Approvers: []string{"U0PRODEUONCALL"},
					Kafka: []fleet.KafkaAccess{{Namespace: "kafka", Cluster: "orders", Bootstrap: []string{"orders-kafka-bootstrap.kafka:9093"}, TLS: true, SASLMechanism: "SCRAM-SHA-512",
						Secret: &fleet.SecretKeys{Name: "kafkabot-kafka-prod-eu"}}}},
				{Name: "prod-us", Kubeconfig: "/etc/kafkabot/clusters/prod-us/kubeconfig", Context: "prod-us-admin", KafkaNamespaces: []string{"kafka", "kafka-batch"},
					Kafka: []fleet.KafkaAccess{
						{Namespace: "kafka", Bootstrap: []string{"kafka-0.kafka-headless.kafka:9093", "kafka-1.kafka-headless.kafka:9093"}, TLS: true,
							Secret: &fleet.SecretKeys{Name: "kafkabot-kafka-prod-us", CAKey: "ca.pem"}},
						{Namespace: "kafka-batch", Bootstrap: []string{"batch-kafka-bootstrap.kafka-batch:9094"}, SASLMechanism: "PLAIN",
							Secret: &fleet.SecretKeys{Name: "kafkabot-kafka-prod-us", UsernameKey: "batch-user", PasswordKey: "batch-password"}},
					}},
				{Name: "staging"},
			}
			gotY, _ := yaml.Marshal(specs)
			wantY, _ := yaml.Marshal(want)
			if string(gotY) != string(wantY) {
				t.Errorf("clusters file:\n%s\nwant:\n%s", gotY, wantY)
			}

			// Where each file is: the pod's mounts and volumes, the same in
			// the helm test pod (bot doctor reads the same files).
			pod := nested(findObject(t, objs, "Deployment", releaseNamespace, "kafka-bot"), "spec", "template", "spec").(map[string]any)
			doctor := nested(findObject(t, objs, "Pod", releaseNamespace, "kafka-bot-doctor"), "spec").(map[string]any)
			volumes := podVolumes(pod)
			for path, from := range map[string]string{
				"/etc/kafkabot/clusters.yaml":               "configmap kafka-bot-clusters clusters.yaml",
				"/etc/kafkabot/clusters/prod-eu/kubeconfig": "secret kafka-bot-cluster-prod-eu kubeconfig",
				"/etc/kafkabot/clusters/prod-us/kubeconfig": "secret kafka-bot-cluster-prod-us config",
			} {
				if got := mountedFrom(pod, path); got != from {
					t.Errorf("%s comes from %s, want %s", path, got, from)
				}
				if got := mountedFrom(doctor, path); got != from {
					t.Errorf("in the helm test pod, %s comes from %s, want %s", path, got, from)
				}
			}
			if len(volumes) != 6 { // the token, the clusters file, two kubeconfigs, two Kafka Secrets
				t.Errorf("volumes %v: want the token, the clusters file, two kubeconfig Secrets and two Kafka Secrets", volumes)
			}
		})
	}
}

// TestREADMESaysTheChartIsClusterWide: the README's install section says
// before its steps that the chart creates a cluster-wide admission policy
// (the NOTES say it too: TestChartInstallsWhatTheBotNeeds).
func TestREADMESaysTheChartIsClusterWide(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "## Install in a cluster")
	if i < 0 {
		t.Fatal("README.md has no Install in a cluster section")
	}
	first := strings.SplitN(string(readme)[i:], "\n1. ", 2)[0]
	if !strings.Contains(first, "cluster-wide") || !strings.Contains(first, "ValidatingAdmissionPolicy") {
		t.Errorf("README's install section does not say before its steps that the chart creates a cluster-wide ValidatingAdmissionPolicy:\n%s", first)
	}
}
