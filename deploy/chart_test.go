// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

const (
	chartDir = "helm/kafkabot"
	// chartPolicy is the chart's generated copy of the admission policy.
	chartPolicy = chartDir + "/files/admission-policy.yaml"
	// chartTestdata holds the chart tests' values files and golden renderings.
	chartTestdata = "helm/testdata"
	// release and releaseNamespace are the golden renderings' release; the
	// namespace is deploy/base's, so the kustomize comparison lines up.
	release          = "kafkabot"
	releaseNamespace = "kafka-bot"
	// kubeVersion pins what `helm template` assumes, so the renderings do
	// not depend on how Helm was built.
	kubeVersion = "1.33.0"
	// testDigest is the image digest the tests install (any valid one).
	testDigest = "sha256:5e1f6e1d4c3b2a190817263544536271808f9e8d7c6b5a493827161504f3e2d1"
)

// template renders the chart with values files (and --set pairs) as
// release in releaseNamespace.
func (h helm) template(t *testing.T, namespace string, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	return h.run(t, append([]string{"template", release, chartDir, "--namespace", namespace, "--kube-version", kubeVersion}, args...)...)
}

// TestChartGolden renders the chart with its default values (plus the image
// digest an install requires), with a two-namespace values file, with a
// three-cluster one and with one whose repair gates ask Kafka, with
// Helm 3 and Helm 4, and compares the output with the checked-in renderings
// (go test ./deploy -update rewrites them).
func TestChartGolden(t *testing.T) {
	for _, name := range []string{"default", "two-namespaces", "multi-cluster", "kafka-access"} {
		values := filepath.Join(chartTestdata, "values", name+".yaml")
		golden := filepath.Join(chartTestdata, "golden", name+".yaml")
		for i, h := range helms(t) {
			t.Run(name+"/"+h.name, func(t *testing.T) {
				out, stderr, ok := h.template(t, releaseNamespace, "-f", values)
				if !ok {
					t.Fatalf("helm template -f %s failed:\n%s", values, stderr)
				}
				if *update && i == 0 {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run: go test ./deploy -update)", err)
				}
				if i == 0 {
					if out != string(want) {
						t.Errorf("%s: helm template -f %s differs from %s; review the change and run: go test ./deploy -update\n%s",
							h.name, values, golden, firstDifference(string(want), out))
					}
					return
				}
				// Helm 4 lays the same YAML out a little differently (a blank
				// line closes each template's output): it must render the
				// same objects, field for field.
				got, exp := parseObjects(t, out), parseObjects(t, string(want))
				if !reflect.DeepEqual(got, exp) {
					gy, _ := yaml.Marshal(got)
					ey, _ := yaml.Marshal(exp)
					t.Errorf("%s renders other objects than %s (Helm 3's rendering):\n%s", h.name, golden, firstDifference(string(ey), string(gy)))
				}
			})
		}
	}
}

// TestChartTwoNamespaces: each Kafka namespace gets its Role, RoleBinding and
// debug-pod NetworkPolicy, and the bot's KAFKA_NAMESPACES lists them all.
func TestChartTwoNamespaces(t *testing.T) {
	h := helms(t)[0]
	out, stderr, ok := h.template(t, "chatops", "-f", filepath.Join(chartTestdata, "values", "two-namespaces.yaml"))
	if !ok {
		t.Fatal(stderr)
	}
	objs := parseObjects(t, out)
	for _, ns := range []string{"kafka-orders", "kafka-payments"} {
		for _, kind := range []string{"Role", "RoleBinding", "NetworkPolicy"} {
			if countObjects(objs, kind, ns) != 1 {
				t.Errorf("want one %s in %s, got %d", kind, ns, countObjects(objs, kind, ns))
			}
		}
		rb := findObject(t, objs, "RoleBinding", ns, "kafka-bot")
		want := []any{map[string]any{"kind": "ServiceAccount", "name": "chatops-bot", "namespace": "chatops"}}
		if !reflect.DeepEqual(rb["subjects"], want) {
			t.Errorf("RoleBinding in %s binds %v, want only the release's ServiceAccount chatops/chatops-bot", ns, rb["subjects"])
		}
	}
	cm := findObject(t, objs, "ConfigMap", "chatops", "kafka-bot")
	if got := cm["data"].(map[string]any)["KAFKA_NAMESPACES"]; got != "kafka-orders,kafka-payments" {
		t.Errorf("KAFKA_NAMESPACES = %q, want kafka-orders,kafka-payments", got)
	}
	ns := findObject(t, objs, "Namespace", "", "chatops")
	meta := ns["metadata"].(map[string]any)
	if meta["labels"].(map[string]any)["kafkabot.io/bot-namespace"] != "true" ||
		meta["annotations"].(map[string]any)["kafkabot.io/service-account"] != "chatops-bot" {
		t.Errorf("the release Namespace does not carry the admission policy's parameters for chatops/chatops-bot: %v", meta)
	}
}

// TestChartLint runs helm lint --strict with each values file the tests and
// the README use.
func TestChartLint(t *testing.T) {
	files := []string{filepath.Join(chartTestdata, "values", "default.yaml"), filepath.Join(chartTestdata, "values", "two-namespaces.yaml")}
	examples, err := filepath.Glob("helm/examples/*.yaml")
	if err != nil || len(examples) < 2 {
		t.Fatalf("want the Bitnami and Strimzi examples in deploy/helm/examples, found %v (%v)", examples, err)
	}
	for _, h := range helms(t) {
		for _, f := range append(files, examples...) {
			t.Run(h.name+"/"+filepath.Base(f), func(t *testing.T) {
				out, stderr, ok := h.run(t, "lint", "--strict", chartDir, "--kube-version", kubeVersion, "-f", f, "--set", "image.digest="+testDigest)
				if !ok {
					t.Errorf("helm lint --strict -f %s failed:\n%s%s", f, out, stderr)
				}
			})
		}
	}
}

// TestChartExamples renders the README's values examples and checks each sets
// its distribution's pod selector.
func TestChartExamples(t *testing.T) {
	h := helms(t)[0]
	for file, selector := range map[string]string{
		"helm/examples/bitnami.yaml": "app.kubernetes.io/name=kafka",
		"helm/examples/strimzi.yaml": "strimzi.io/kind=Kafka",
	} {
		out, stderr, ok := h.template(t, "kafka-bot", "-f", file, "--set", "image.digest="+testDigest)
		if !ok {
			t.Errorf("helm template -f %s failed:\n%s", file, stderr)
			continue
		}
		cm := findObject(t, parseObjects(t, out), "ConfigMap", "kafka-bot", "kafka-bot")
		if got := cm["data"].(map[string]any)["KAFKA_POD_SELECTOR"]; got != selector {
			t.Errorf("%s: KAFKA_POD_SELECTOR = %v, want %s", file, got, selector)
		}
	}
}

// TestChartRefusesBadValues: each values file under testdata/bad fails helm
// template (and so helm install) with a message that names the problem (the
// file's first line: "# want: <text>"), and helm lint reports that message.
func TestChartRefusesBadValues(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartTestdata, "bad", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad values files: %v", err)
	}
	for _, h := range helms(t) {
		for _, f := range files {
			t.Run(h.name+"/"+strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				first, _, _ := strings.Cut(string(data), "\n")
				want, found := strings.CutPrefix(first, "# want: ")
				if !found || want == "" {
					t.Fatalf("%s must start with a line \"# want: <expected message>\"", f)
				}
				if _, stderr, ok := h.template(t, releaseNamespace, "-f", f); ok {
					t.Errorf("helm template accepted %s", f)
				} else if !strings.Contains(stderr, want) {
					t.Errorf("helm template -f %s failed without saying %q:\n%s", f, want, stderr)
				}
				// helm lint fails on what the schema refuses; a template's
				// fail() it reports as an INFO line ("[INFO] Fail: <message>" in
				// Helm 3, msg="funcMap fail" in Helm 4) and exits 0 (Helm lints
				// with values that may be incomplete, by design), while install
				// and template stop there.
				out, stderr, ok := h.run(t, "lint", chartDir, "--namespace", releaseNamespace, "--kube-version", kubeVersion, "-f", f)
				switch {
				case !strings.Contains(out+stderr, want):
					t.Errorf("helm lint -f %s does not say %q:\n%s%s", f, want, out, stderr)
				case ok && !strings.Contains(out+stderr, "Fail: ") && !strings.Contains(out+stderr, `msg="funcMap fail"`):
					t.Errorf("helm lint accepted %s without reporting the template's failure:\n%s%s", f, out, stderr)
				}
			})
		}
	}
}

// TestChartPolicyIsTheBasePolicy: the chart carries the same admission policy
// and binding as deploy/base, byte for byte, with the same generated copy of
// the repair script. -update regenerates the chart's copy from
// internal/recovery/repair.sh (through the base's generated region).
func TestChartPolicyIsTheBasePolicy(t *testing.T) {
	base, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !scriptRegion.Match(base) {
		t.Fatalf("%s has no generated script region", policyFile)
	}
	// What TestPolicyPinsTheRepairScript's -update writes to the base.
	want := scriptRegion.ReplaceAllFunc(base, func(m []byte) []byte {
		sub := scriptRegion.FindSubmatch(m)
		return []byte(string(sub[1]) + scriptBlock(recovery.Script) + string(sub[2]))
	})
	if *update {
		if err := os.WriteFile(chartPolicy, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(chartPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s with the current repair script; run: go test ./deploy -update\n%s",
			chartPolicy, policyFile, firstDifference(string(want), string(got)))
	}
	policy := loadPolicy(t, got)
	var found bool
	for _, v := range policy.Spec.Variables {
		if v.Name == "script" {
			found = true
			if v.Expression != "r'''"+recovery.Script+"'''" {
				t.Error("the chart's policy carries another repair script than internal/recovery/repair.sh")
			}
		}
	}
	if !found {
		t.Error("the chart's policy has no script variable")
	}
}

// intentional is one way the chart's objects differ from deploy/base's on
// purpose. apply removes the difference from the chart's object (c), given
// the kustomize one (k).
type intentional struct {
	why   string
	apply func(c, k map[string]any)
}

// helmLabels are the standard labels a Helm chart adds; the chart's selectors
// add app.kubernetes.io/instance so that two releases select their own pods.
var helmLabels = []string{"app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart"}

var intentionalDifferences = []intentional{
	{"every object carries Helm's standard labels (instance, version, managed-by=Helm, chart), and selectors the release's instance label",
		func(c, _ map[string]any) {
			for _, path := range [][]string{
				{"metadata", "labels"},
				{"spec", "selector", "matchLabels"},
				{"spec", "selector"}, // a Service's
				{"spec", "template", "metadata", "labels"},
			} {
				if m, ok := nested(c, path...).(map[string]any); ok {
					for _, l := range helmLabels {
						// The debug pods' label, app.kubernetes.io/managed-by=kafkabot, is no Helm label.
						if l == "app.kubernetes.io/managed-by" && m[l] == "kafkabot" {
							continue
						}
						delete(m, l)
					}
				}
			}
		}},
	{"the release Namespace is kept on helm uninstall (helm.sh/resource-policy: keep): it holds the release record and perhaps the operator's Secret",
		func(c, _ map[string]any) { deleteNested(c, "metadata", "annotations", "helm.sh/resource-policy") }},
	{"the Deployment's pods roll when the ConfigMap, the clusters list or the chart-managed Secret changes (checksum/* annotations)",
		func(c, _ map[string]any) {
			for _, a := range []string{"checksum/config", "checksum/clusters", "checksum/secret"} {
				deleteNested(c, "spec", "template", "metadata", "annotations", a)
			}
			if a, ok := nested(c, "spec", "template", "metadata", "annotations").(map[string]any); ok && len(a) == 0 {
				deleteNested(c, "spec", "template", "metadata", "annotations")
			}
		}},
	{"the image: kustomize's is the unreleased all-zero digest, which the chart refuses; the chart's is the test's digest",
		func(c, k map[string]any) {
			for _, o := range []map[string]any{c, k} {
				if cs, ok := nested(o, "spec", "template", "spec", "containers").([]any); ok {
					for _, ctr := range cs {
						ctr.(map[string]any)["image"] = "<image>"
					}
				}
			}
		}},
	{"the chart labels every object app.kubernetes.io/name=kafkabot; deploy/base leaves some (ConfigMap, PodDisruptionBudget) without labels",
		func(c, k map[string]any) {
			if nested(k, "metadata", "labels") == nil {
				if l, ok := nested(c, "metadata", "labels").(map[string]any); ok && len(l) == 1 && l["app.kubernetes.io/name"] == "kafkabot" {
					deleteNested(c, "metadata", "labels")
				}
			}
		}},
	{"kustomize's YAML writer adds a blank line inside the policy's folded (>-) CEL expressions, which CEL ignores; the chart carries the base file's own bytes (TestChartPolicyIsTheBasePolicy)",
		func(c, k map[string]any) {
			if k["kind"] != "ValidatingAdmissionPolicy" {
				return
			}
			if vs, ok := nested(k, "spec", "validations").([]any); ok {
				for _, v := range vs {
					m := v.(map[string]any)
					if e, ok := m["expression"].(string); ok {
						m["expression"] = strings.ReplaceAll(e, "\n\n", "\n")
					}
				}
			}
		}},
	{"the ConfigMap sets CLUSTER_NAME (values clusterName, default the bot's own default)",
		func(c, _ map[string]any) {
			if c["kind"] == "ConfigMap" {
				deleteNested(c, "data", "CLUSTER_NAME")
			}
		}},
	{"the PodDisruptionBudget has unhealthyPodEvictionPolicy: AlwaysAllow (a Slack outage makes every replica unready; drains must not stall), which the kustomize base may lack",
		func(c, k map[string]any) {
			if c["kind"] == "PodDisruptionBudget" && nested(k, "spec", "unhealthyPodEvictionPolicy") == nil {
				deleteNested(c, "spec", "unhealthyPodEvictionPolicy")
			}
		}},
}

// TestChartMatchesKustomize renders the chart with values equivalent to a
// kustomize install (deploy/base itself: bot in kafka-bot, Kafka in kafka;
// and an overlay with the bot in ops and Kafka in data and data2) and
// compares the two object by object: the same kinds, names and
// namespaces, and every field equal (RBAC rules and subjects, the pod and
// container securityContext, the admission policy and its binding, the
// Namespace's policy parameters...) except the intentional differences
// listed above.
func TestChartMatchesKustomize(t *testing.T) {
	h := helms(t)[0]
	for _, tc := range []struct {
		name, kustomizeDir, namespace, values string
	}{
		{"deploy/base", ".", releaseNamespace, filepath.Join(chartTestdata, "values", "default.yaml")},
		{"two Kafka namespaces", filepath.Join(chartTestdata, "kustomize", "two-namespaces"), "ops", filepath.Join(chartTestdata, "values", "ops-two-namespaces.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, ok := h.template(t, tc.namespace, "-f", tc.values)
			if !ok {
				t.Fatal(stderr)
			}
			compareWithKustomize(t, parseObjects(t, out), parseObjects(t, string(buildDir(t, tc.kustomizeDir))))
		})
	}
}

func compareWithKustomize(t *testing.T, chartObjs, kustomizeObjs []map[string]any) {
	t.Helper()
	chart, kust := index(t, chartObjs), index(t, kustomizeObjs)
	var onlyChart, onlyKust []string
	for k := range chart {
		if _, ok := kust[k]; !ok {
			onlyChart = append(onlyChart, k)
		}
	}
	for k := range kust {
		if _, ok := chart[k]; !ok {
			onlyKust = append(onlyKust, k)
		}
	}
	sort.Strings(onlyChart)
	sort.Strings(onlyKust)
	if len(onlyChart)+len(onlyKust) > 0 {
		t.Errorf("the chart and kustomize render different objects:\n  only in the chart: %v\n  only in kustomize: %v", onlyChart, onlyKust)
	}
	var compared int
	for key, c := range chart {
		k, ok := kust[key]
		if !ok {
			continue
		}
		for _, d := range intentionalDifferences {
			d.apply(c, k)
		}
		compared++
		if !reflect.DeepEqual(c, k) {
			cy, _ := yaml.Marshal(c)
			ky, _ := yaml.Marshal(k)
			t.Errorf("%s differs from kustomize's beyond the intentional differences:\n%s", key, firstDifference(string(ky), string(cy)))
		}
	}
	if compared < 10 {
		t.Errorf("compared only %d objects: the renderings were not read", compared)
	}
}

// parseObjects splits a multi-document rendering into objects.
func parseObjects(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, doc := range strings.Split(out, "\n---") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("parsing a rendered object: %v\n%s", err, doc)
		}
		if len(o) > 0 {
			objs = append(objs, o)
		}
	}
	return objs
}

func objectKey(o map[string]any) string {
	return fmt.Sprintf("%v %v/%v", o["kind"], nested(o, "metadata", "namespace"), nested(o, "metadata", "name"))
}

func index(t *testing.T, objs []map[string]any) map[string]map[string]any {
	t.Helper()
	m := map[string]map[string]any{}
	for _, o := range objs {
		if nested(o, "metadata", "annotations", "helm.sh/hook") == "test" {
			continue // `helm test`'s pod (bot doctor) is not installed; kustomize has none
		}
		k := objectKey(o)
		if _, dup := m[k]; dup {
			t.Errorf("two objects %s", k)
		}
		m[k] = o
	}
	return m
}

func countObjects(objs []map[string]any, kind, namespace string) int {
	n := 0
	for _, o := range objs {
		if o["kind"] == kind && nested(o, "metadata", "namespace") == namespace {
			n++
		}
	}
	return n
}

func findObject(t *testing.T, objs []map[string]any, kind, namespace, name string) map[string]any {
	t.Helper()
	for _, o := range objs {
		ns, _ := nested(o, "metadata", "namespace").(string)
		if o["kind"] == kind && ns == namespace && nested(o, "metadata", "name") == name {
			return o
		}
	}
	t.Fatalf("no %s %s/%s in the rendering", kind, namespace, name)
	return nil
}

// nested returns the value at path, or nil.
func nested(o map[string]any, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// deleteNested removes the value at path, if there is one.
func deleteNested(o map[string]any, path ...string) {
	if m, ok := nested(o, path[:len(path)-1]...).(map[string]any); ok {
		delete(m, path[len(path)-1])
	}
}

// firstDifference shows where two texts first differ, with a few lines of
// context.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			from := max(0, i-3)
			return fmt.Sprintf("first difference at line %d:\n  want: %q\n  got:  %q\ncontext (want):\n%s", i+1, wl, gl,
				strings.Join(w[from:min(len(w), i+3)], "\n"))
		}
	}
	return "(equal)"
}

// TestChartOptionalObjects: the switches that leave objects out do so, and
// only those objects.
func TestChartOptionalObjects(t *testing.T) {
	h := helms(t)[0]
	base := filepath.Join(chartTestdata, "values", "default.yaml")
	for _, tc := range []struct {
		set     string
		without []string // kinds the switch removes
	}{
		{"namespace.manage=false", []string{"Namespace"}},
		{"admissionPolicy.create=false", []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}},
		{"podDisruptionBudget.enabled=false", []string{"PodDisruptionBudget"}},
		{"service.enabled=false", []string{"Service"}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			full, stderr, ok := h.template(t, releaseNamespace, "-f", base)
			if !ok {
				t.Fatal(stderr)
			}
			out, stderr, ok := h.template(t, releaseNamespace, "-f", base, "--set", tc.set)
			if !ok {
				t.Fatal(stderr)
			}
			kinds := func(objs []map[string]any) map[string]int {
				m := map[string]int{}
				for _, o := range objs {
					m[o["kind"].(string)]++
				}
				return m
			}
			want, got := kinds(parseObjects(t, full)), kinds(parseObjects(t, out))
			for _, k := range tc.without {
				if want[k] == 0 {
					t.Fatalf("the default rendering has no %s: the test is stale", k)
				}
				delete(want, k)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("with %s the chart renders %v, want %v", tc.set, got, want)
			}
		})
	}
}
