// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package deploy_test checks the kustomize base in this folder: it builds,
// the build is deterministic and matches the checked-in rendering (what
// `kubectl kustomize deploy/` prints), and the objects follow the safety
// rules the README promises. test/integration applies the same objects to
// a real kube-apiserver.
package deploy_test

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/config"
)

var update = flag.Bool("update", false, "rewrite testdata/kustomize-build.yaml from the current base")

const golden = "testdata/kustomize-build.yaml"

// imageByDigest is an image reference pinned by sha256 digest.
var imageByDigest = regexp.MustCompile(`^[^\s@:]+(:[^\s@]+)?@sha256:[0-9a-f]{64}$`)

func build(t *testing.T) []byte { return buildDir(t, ".") }

func buildDir(t *testing.T, dir string) []byte {
	t.Helper()
	// kubectl's options (k8s.io/cli-runtime's KustomizeVisitor): the
	// legacy order, Namespaces first, is the order `kubectl apply -k`
	// creates objects in.
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	k := krusty.MakeKustomizer(opts)
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build deploy/%s: %v", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatalf("rendering the build: %v", err)
	}
	return out
}

func TestKustomizeBuildIsDeterministicAndCurrent(t *testing.T) {
	first, second := build(t), build(t)
	if !bytes.Equal(first, second) {
		t.Fatal("two kustomize builds of deploy/ differ")
	}
	if *update {
		if err := os.WriteFile(golden, first, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run: go test ./deploy -update)", err)
	}
	if !bytes.Equal(first, want) {
		t.Errorf("kustomize build of deploy/ differs from %s; review the change and run: go test ./deploy -update", golden)
	}
}

// object is the part of a manifest these checks read.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Replicas                   *int   `json:"replicas"`
		UnhealthyPodEvictionPolicy string `json:"unhealthyPodEvictionPolicy"`
		Template                   struct {
			Spec struct {
				AutomountServiceAccountToken *bool `json:"automountServiceAccountToken"`
				SecurityContext              struct {
					RunAsNonRoot *bool `json:"runAsNonRoot"`
				} `json:"securityContext"`
				Containers []struct {
					Image           string `json:"image"`
					ImagePullPolicy string `json:"imagePullPolicy"`
					ReadinessProbe  *struct {
						HTTPGet struct{ Path string } `json:"httpGet"`
					} `json:"readinessProbe"`
					LivenessProbe *struct {
						HTTPGet struct{ Path string } `json:"httpGet"`
					} `json:"livenessProbe"`
					Resources struct {
						Requests map[string]string `json:"requests"`
						Limits   map[string]string `json:"limits"`
					} `json:"resources"`
					SecurityContext struct {
						AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
						ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
						Capabilities             struct {
							Drop []string `json:"drop"`
						} `json:"capabilities"`
					} `json:"securityContext"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func TestBaseFollowsTheSafetyRules(t *testing.T) {
	var kinds []string
	for _, doc := range strings.Split(string(build(t)), "\n---\n") {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("parsing a built object: %v", err)
		}
		kinds = append(kinds, o.Kind)
		switch o.Kind {
		case "Secret":
			t.Errorf("the base ships a Secret %q: secrets are created by the operator, never committed", o.Metadata.Name)
		case "ClusterRole", "ClusterRoleBinding":
			t.Errorf("the base grants cluster-wide access (%s %s)", o.Kind, o.Metadata.Name)
		case "Deployment":
			checkDeployment(t, o)
		case "PodDisruptionBudget":
			if o.Spec.UnhealthyPodEvictionPolicy != "AlwaysAllow" {
				t.Errorf("PDB %s: unhealthyPodEvictionPolicy %q, want AlwaysAllow (two unready replicas must not stall a drain)",
					o.Metadata.Name, o.Spec.UnhealthyPodEvictionPolicy)
			}
		}
	}
	for _, want := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "Deployment", "ConfigMap", "PodDisruptionBudget",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "NetworkPolicy", "Service"} {
		if !strings.Contains(strings.Join(kinds, ","), want) {
			t.Errorf("the base has no %s (kinds: %v)", want, kinds)
		}
	}
}

func checkDeployment(t *testing.T, o object) {
	t.Helper()
	if o.Spec.Replicas == nil || *o.Spec.Replicas < 2 {
		t.Error("the Deployment should run 2 replicas (leader election keeps one voice)")
	}
	ps := o.Spec.Template.Spec
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Error("the default token automount must be off (a short-lived projected token is mounted instead)")
	}
	if ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
		t.Error("the pod must run as non-root")
	}
	for _, c := range ps.Containers {
		if !imageByDigest.MatchString(c.Image) {
			t.Errorf("image %q is not pinned by digest (a release sets it in deploy/base/kustomization.yaml)", c.Image)
		}
		if c.ImagePullPolicy != "IfNotPresent" {
			t.Errorf("imagePullPolicy %q, want IfNotPresent (the digest cannot change under it)", c.ImagePullPolicy)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Error("readiness probe must be GET /readyz")
		}
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
			t.Error("liveness probe must be GET /healthz")
		}
		if c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
			t.Error("memory request and limit must be set")
		}
		sc := c.SecurityContext
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
			sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Error("container must drop ALL capabilities, forbid privilege escalation, and have a read-only root")
		}
	}
}

// TestOverlaysSetTheirSelector builds each example overlay and checks it
// sets the Kafka pod selector of its distribution.
func TestOverlaysSetTheirSelector(t *testing.T) {
	for dir, selector := range map[string]string{
		"overlays/strimzi": "KAFKA_POD_SELECTOR: strimzi.io/kind=Kafka",
		"overlays/bitnami": "KAFKA_POD_SELECTOR: app.kubernetes.io/name=kafka",
	} {
		if out := string(buildDir(t, dir)); !strings.Contains(out, selector) {
			t.Errorf("deploy/%s does not set %q", dir, selector)
		}
	}
}

// TestServiceReachesTheBotsHTTPPort: the Service of the base selects the
// bot's pods, in the bot's namespace, and targets a named container port
// that is the port the bot listens on (HTTP_ADDR: the ConfigMap's value, or
// the config's default), where /metrics and /alertmanager are served.
func TestServiceReachesTheBotsHTTPPort(t *testing.T) {
	objs := buildObjects(t, ".")
	var svc, deploy, cm map[string]any
	for _, o := range objs {
		switch ident(o) {
		case "kafka-bot/Service kafka-bot":
			svc = o
		case "kafka-bot/Deployment kafka-bot":
			deploy = o
		case "kafka-bot/ConfigMap kafka-bot":
			cm = o
		}
	}
	if svc == nil || deploy == nil || cm == nil {
		t.Fatal("the base lacks the bot's Service, Deployment or ConfigMap in kafka-bot")
	}
	var s struct {
		Spec struct {
			Selector map[string]string `json:"selector"`
			Ports    []struct {
				Name       string `json:"name"`
				Port       int    `json:"port"`
				TargetPort any    `json:"targetPort"`
			} `json:"ports"`
		} `json:"spec"`
	}
	var d struct {
		Spec struct {
			Template struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec struct {
					Containers []struct {
						Ports []struct {
							Name          string `json:"name"`
							ContainerPort int    `json:"containerPort"`
						} `json:"ports"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	convert(t, svc, &s)
	convert(t, deploy, &d)
	if len(s.Spec.Selector) == 0 {
		t.Fatal("the Service has no selector")
	}
	for k, v := range s.Spec.Selector {
		if d.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, the bot's pods are labelled %v", k, v, d.Spec.Template.Metadata.Labels)
		}
	}
	addr, _ := cm["data"].(map[string]any)["HTTP_ADDR"].(string)
	if addr == "" {
		f, _ := reflect.TypeFor[config.Config]().FieldByName("HTTPAddr")
		addr = f.Tag.Get("default")
	}
	_, listen, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("HTTP_ADDR %q: %v", addr, err)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != "http" {
		t.Fatalf("the Service's ports are %+v, want one named http", s.Spec.Ports)
	}
	target, ok := s.Spec.Ports[0].TargetPort.(string)
	if !ok {
		t.Fatalf("the Service's targetPort is %v, want the container port's name", s.Spec.Ports[0].TargetPort)
	}
	var found bool
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == target {
				found = true
				if fmt.Sprint(p.ContainerPort) != listen {
					t.Errorf("container port %s is %d, the bot listens on %s (HTTP_ADDR %q)", target, p.ContainerPort, listen, addr)
				}
			}
		}
	}
	if !found {
		t.Errorf("the Service targets port %q, which no container of the Deployment declares", target)
	}
}

// TestSecretExampleHasEverySecretSetting: deploy/secret.example.yaml names
// every setting the bot reads from its Secret, ALERTMANAGER_TOKEN empty
// (the receiver stays off until one is set), in the bot's namespace.
func TestSecretExampleHasEverySecretSetting(t *testing.T) {
	data, err := os.ReadFile("secret.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Type       string `json:"type"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Kind != "Secret" || s.Metadata.Name != "kafka-bot" || s.Metadata.Namespace != defaultBotNamespace {
		t.Errorf("the example is %s %s/%s, want Secret %s/kafka-bot", s.Kind, s.Metadata.Namespace, s.Metadata.Name, defaultBotNamespace)
	}
	for _, key := range []string{"SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "APPROVAL_SECRET", "ALERTMANAGER_TOKEN"} {
		if _, ok := s.StringData[key]; !ok {
			t.Errorf("secret.example.yaml has no %s", key)
		}
		if !strings.Contains(string(data), "--from-literal="+key+"=") {
			t.Errorf("secret.example.yaml's kubectl command does not show %s", key)
		}
	}
	if v := s.StringData["ALERTMANAGER_TOKEN"]; v != "" {
		t.Errorf("ALERTMANAGER_TOKEN is %q in the example: a placeholder would switch the receiver on (and fail startup)", v)
	}
}

// convert decodes a generic object into a typed view.
func convert(t *testing.T, o map[string]any, into any) {
	t.Helper()
	data, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
}
