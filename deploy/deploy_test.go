// Package deploy_test checks the kustomize base in this folder: it builds,
// the build is deterministic and matches the checked-in rendering (what
// `kubectl kustomize deploy/` prints), and the objects follow the safety
// rules the README promises. test/integration applies the same objects to
// a real kube-apiserver.
package deploy_test

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/kustomize-build.yaml from the current base")

const golden = "testdata/kustomize-build.yaml"

// imageByDigest is an image reference pinned by sha256 digest.
var imageByDigest = regexp.MustCompile(`^[^\s@:]+(:[^\s@]+)?@sha256:[0-9a-f]{64}$`)

func build(t *testing.T) []byte { return buildDir(t, ".") }

func buildDir(t *testing.T, dir string) []byte {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
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
		Replicas *int `json:"replicas"`
		Template struct {
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
		}
	}
	for _, want := range []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "Deployment", "ConfigMap", "PodDisruptionBudget",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "NetworkPolicy"} {
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
