// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The defaults the base's files are written with (the ConfigMap
// kafkabot-namespaces of base/kustomization.yaml).
const (
	defaultBotNamespace   = "kafka-bot"
	defaultKafkaNamespace = "kafka"
)

// kustomizeRun builds dir of fSys with kubectl's options (see buildDir).
func kustomizeRun(fSys filesys.FileSystem, dir string) ([]map[string]any, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	res, err := krusty.MakeKustomizer(opts).Run(fSys, dir)
	if err != nil {
		return nil, err
	}
	out, err := res.AsYaml()
	if err != nil {
		return nil, err
	}
	return decodeAll(out)
}

// decodeAll splits a multi-document rendering into generic objects.
func decodeAll(out []byte) ([]map[string]any, error) {
	var objs []map[string]any
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return nil, fmt.Errorf("parsing a built object: %w", err)
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

func buildObjects(t *testing.T, dir string) []map[string]any {
	t.Helper()
	objs, err := kustomizeRun(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build deploy/%s: %v", dir, err)
	}
	return objs
}

func str(o map[string]any, path ...string) string {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func ident(o map[string]any) string {
	id := str(o, "kind") + " " + str(o, "metadata", "name")
	if ns := str(o, "metadata", "namespace"); ns != "" {
		id = ns + "/" + id
	}
	return id
}

// staleNamespaceFields returns every field of objs that still names one of
// the old namespaces: metadata.namespace, a Namespace's name, any field
// whose key says "namespace" (subjects, KAFKA_NAMESPACES...; comma lists
// are split), a ServiceAccount user name, a Service DNS name, and any value
// that is exactly the old Kafka namespace.
func staleNamespaceFields(objs []map[string]any, oldBot, oldKafka string) []string {
	old := []string{oldBot, oldKafka}
	var found []string
	for _, o := range objs {
		id := ident(o)
		if str(o, "kind") == "Namespace" && slices.Contains(old, str(o, "metadata", "name")) {
			found = append(found, id+": metadata.name")
		}
		var walk func(path string, key string, v any)
		walk = func(path, key string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, c := range v {
					walk(path+"."+k, k, c)
				}
			case []any:
				for i, c := range v {
					walk(fmt.Sprintf("%s[%d]", path, i), key, c)
				}
			case string:
				stale := v == oldKafka ||
					strings.Contains(v, "system:serviceaccount:"+oldBot+":") ||
					strings.Contains(v, "."+oldBot+".svc") || strings.Contains(v, "."+oldKafka+".svc")
				if strings.Contains(strings.ToLower(key), "namespace") {
					for _, part := range strings.Split(v, ",") {
						stale = stale || slices.Contains(old, strings.TrimSpace(part))
					}
				}
				if stale {
					found = append(found, fmt.Sprintf("%s: %s = %q", id, strings.TrimPrefix(path, "."), v))
				}
			}
		}
		walk("", "", o)
	}
	sort.Strings(found)
	return found
}

// TestNamespacesComeFromOnePlace renders an overlay that puts the bot in
// "ops" and Kafka in "data" by setting the two values of the ConfigMap
// kafkabot-namespaces, and fails if any field still names the defaults: a
// hard-coded "kafka" or "kafka-bot" added to the base without a replacement
// target in components/namespaces fails here.
func TestNamespacesComeFromOnePlace(t *testing.T) {
	objs := buildObjects(t, "testdata/overlays/ops-data")
	if stale := staleNamespaceFields(objs, defaultBotNamespace, defaultKafkaNamespace); len(stale) > 0 {
		t.Errorf("the ops/data overlay still names %s or %s:\n  %s", defaultBotNamespace, defaultKafkaNamespace, strings.Join(stale, "\n  "))
	}
	byID := map[string]map[string]any{}
	for _, o := range objs {
		byID[ident(o)] = o
		if str(o, "metadata", "name") == "kafkabot-namespaces" {
			t.Errorf("the build-time ConfigMap kafkabot-namespaces is in the output (%s)", ident(o))
		}
	}
	// The replacements did land (a rendering with no namespaces at all
	// would pass the check above).
	for _, want := range []string{
		"Namespace ops", "ops/ServiceAccount kafka-bot", "ops/Deployment kafka-bot", "ops/ConfigMap kafka-bot",
		"ops/Service kafka-bot", "ops/PodDisruptionBudget kafka-bot", "ops/Role kafka-bot-self", "ops/RoleBinding kafka-bot-self",
		"ops/Secret kafka-bot", "data/Role kafka-bot", "data/RoleBinding kafka-bot", "data/NetworkPolicy kafka-bot-debug-pods-isolated",
	} {
		if byID[want] == nil {
			t.Errorf("the ops/data overlay has no %s", want)
		}
	}
	if got := str(byID["ops/ConfigMap kafka-bot"], "data", "KAFKA_NAMESPACES"); got != "data" {
		t.Errorf("KAFKA_NAMESPACES = %q, want data", got)
	}
	checkBindings(t, objs, "ops")
}

// TestStaleNamespaceCheckCatchesAHardCodedCopy: the check above is only
// worth something if it fails on a hard-coded namespace. Add one object
// with each kind of stale field to a copy of the base and expect each to
// be reported.
func TestStaleNamespaceCheckCatchesAHardCodedCopy(t *testing.T) {
	extra := `apiVersion: v1
kind: ConfigMap
metadata:
  name: sneaky
  namespace: kafka-bot
data:
  url: http://kafka-bot.kafka-bot.svc:8080/metrics
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: sneaky
  namespace: data
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: kafka-bot}
subjects:
  - {kind: ServiceAccount, name: other, namespace: kafka-bot}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sneaky-list
  namespace: data
data:
  WATCH_NAMESPACES: data,kafka
  user: system:serviceaccount:kafka-bot:kafka-bot
  plain: kafka
`
	fSys := copyDeploy(t)
	mustWrite(t, fSys, "/deploy/base/sneaky.yaml", extra)
	appendResource(t, fSys, "/deploy/base/kustomization.yaml", "sneaky.yaml")
	objs, err := kustomizeRun(fSys, "/deploy/testdata/overlays/ops-data")
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Join(staleNamespaceFields(objs, defaultBotNamespace, defaultKafkaNamespace), "\n")
	for _, want := range []string{
		`kafka-bot/ConfigMap sneaky: metadata.namespace = "kafka-bot"`,
		`kafka-bot/ConfigMap sneaky: data.url = "http://kafka-bot.kafka-bot.svc:8080/metrics"`,
		`data/RoleBinding sneaky: subjects[0].namespace = "kafka-bot"`,
		`data/ConfigMap sneaky-list: data.WATCH_NAMESPACES = "data,kafka"`,
		`data/ConfigMap sneaky-list: data.user = "system:serviceaccount:kafka-bot:kafka-bot"`,
		`data/ConfigMap sneaky-list: data.plain = "kafka"`,
	} {
		if !strings.Contains(stale, want) {
			t.Errorf("the check missed %s; it reported:\n%s", want, stale)
		}
	}
}

// checkBindings: every RoleBinding binds the bot's ServiceAccount in the
// bot's namespace, the one the Deployment runs in.
func checkBindings(t *testing.T, objs []map[string]any, botNS string) {
	t.Helper()
	for _, o := range objs {
		if str(o, "kind") != "RoleBinding" {
			continue
		}
		subjects, _ := o["subjects"].([]any)
		if len(subjects) != 1 {
			t.Errorf("%s has %d subjects, want the bot's ServiceAccount only", ident(o), len(subjects))
			continue
		}
		s, _ := subjects[0].(map[string]any)
		if s["kind"] != "ServiceAccount" || s["name"] != "kafka-bot" || s["namespace"] != botNS {
			t.Errorf("%s binds %v, want ServiceAccount %s/kafka-bot", ident(o), s, botNS)
		}
	}
}

// kafkaNamespaceSet describes one rendering: the bot's namespace, its
// KAFKA_NAMESPACES, and the namespaces holding each per-Kafka-namespace
// object.
type kafkaNamespaceSet struct {
	bot       string
	listed    []string
	perObject map[string][]string // "Role kafka-bot" -> namespaces
}

func describe(objs []map[string]any) kafkaNamespaceSet {
	d := kafkaNamespaceSet{perObject: map[string][]string{}}
	for _, o := range objs {
		kind, name, ns := str(o, "kind"), str(o, "metadata", "name"), str(o, "metadata", "namespace")
		switch {
		case kind == "Namespace":
			d.bot = name
		case kind == "ConfigMap" && name == "kafka-bot":
			if l := str(o, "data", "KAFKA_NAMESPACES"); l != "" {
				d.listed = strings.Split(l, ",")
			}
		case (kind == "Role" || kind == "RoleBinding") && name == "kafka-bot", kind == "NetworkPolicy":
			d.perObject[kind+" "+name] = append(d.perObject[kind+" "+name], ns)
		}
	}
	return d
}

// checkKafkaNamespaces: KAFKA_NAMESPACES is exactly the set of namespaces
// that have the bot's Role, RoleBinding and debug-pod NetworkPolicy, each
// once, and none of them is the bot's own namespace.
func checkKafkaNamespaces(t *testing.T, name string, objs []map[string]any) kafkaNamespaceSet {
	t.Helper()
	d := describe(objs)
	want := slices.Sorted(slices.Values(d.listed))
	if len(want) == 0 {
		t.Errorf("%s: KAFKA_NAMESPACES is empty (the bot would read every namespace its RBAC allows)", name)
	}
	for _, obj := range []string{"Role kafka-bot", "RoleBinding kafka-bot", "NetworkPolicy kafka-bot-debug-pods-isolated"} {
		got := slices.Sorted(slices.Values(d.perObject[obj]))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %s is in namespaces %v, KAFKA_NAMESPACES lists %v", name, obj, got, want)
		}
	}
	if slices.Contains(d.listed, d.bot) {
		t.Errorf("%s: the bot's namespace %s is also a Kafka namespace", name, d.bot)
	}
	checkBindings(t, objs, d.bot)
	return d
}

// TestEveryOverlayGrantsExactlyItsKafkaNamespaces: in deploy/ and every
// overlay (the examples and the test ones), the namespaces the bot is told
// to watch and the namespaces it has RBAC in are the same.
func TestEveryOverlayGrantsExactlyItsKafkaNamespaces(t *testing.T) {
	dirs := []string{"."}
	for _, glob := range []string{"overlays/*/kustomization.yaml", "testdata/overlays/*/kustomization.yaml"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	if len(dirs) < 5 {
		t.Fatalf("found only %v", dirs)
	}
	for _, dir := range dirs {
		checkKafkaNamespaces(t, dir, buildObjects(t, dir))
	}
}

// TestMoreKafkaNamespacesAreOneComponentEach: four Kafka namespaces from
// one list and three slot components (listed out of order on purpose):
// each namespace gets the same Role as the base's, in the list's order in
// KAFKA_NAMESPACES.
func TestMoreKafkaNamespacesAreOneComponentEach(t *testing.T) {
	objs := buildObjects(t, "testdata/overlays/four-namespaces")
	d := checkKafkaNamespaces(t, "four-namespaces", objs)
	if want := []string{"data", "data2", "data3", "data4"}; !slices.Equal(d.listed, want) || d.bot != "ops" {
		t.Errorf("KAFKA_NAMESPACES %v, bot namespace %q; want %v and ops", d.listed, d.bot, want)
	}
	var rules []any
	for _, o := range objs {
		if str(o, "kind") != "Role" || str(o, "metadata", "name") != "kafka-bot" {
			continue
		}
		if rules == nil {
			rules = o["rules"].([]any)
		} else if !reflect.DeepEqual(rules, o["rules"]) {
			t.Errorf("the Role in %s differs from the others", str(o, "metadata", "namespace"))
		}
	}
	if stale := staleNamespaceFields(objs, defaultBotNamespace, defaultKafkaNamespace); len(stale) > 0 {
		t.Errorf("the four-namespace overlay still names a default:\n  %s", strings.Join(stale, "\n  "))
	}
}

// TestASlotBeyondTheListFailsTheBuild: listing a slot component for a
// namespace the list does not have is a build error that says so, not a
// Role in a placeholder namespace.
func TestASlotBeyondTheListFailsTheBuild(t *testing.T) {
	fSys := copyDeploy(t)
	mustWrite(t, fSys, "/deploy/x/kustomization.yaml", `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../base]
configMapGenerator:
  - name: kafkabot-namespaces
    behavior: merge
    literals: [kafkaNamespaces=data]
components:
  - ../components/namespaces
  - ../components/kafka-namespace-2
`)
	_, err := kustomizeRun(fSys, "/deploy/x")
	if err == nil || !strings.Contains(err.Error(), "options.index 2 is out of bounds for value data") {
		t.Fatalf("build error %v, want the index out of bounds", err)
	}
}

// TestSlotComponentsAreCopiesOfEachOther: kafka-namespace-<n> differ only
// in n (and the ordinal word), so a fix to one cannot miss the others.
func TestSlotComponentsAreCopiesOfEachOther(t *testing.T) {
	ordinal := map[string]string{"1": "second", "2": "third", "3": "fourth"}
	var first string
	for _, n := range []string{"1", "2", "3"} {
		var both string
		for _, f := range []string{"kustomization.yaml", "objects/kustomization.yaml"} {
			data, err := os.ReadFile(filepath.Join("components", "kafka-namespace-"+n, f))
			if err != nil {
				t.Fatal(err)
			}
			both += string(data)
		}
		if !strings.Contains(both, "index: "+n+"}") || !strings.Contains(both, "slot="+n) {
			t.Errorf("components/kafka-namespace-%s does not select slot %s", n, n)
		}
		both = regexp.MustCompile(`\b`+n+`\b`).ReplaceAllString(both, "<n>")
		both = strings.ReplaceAll(both, "the "+ordinal[n]+" entry", "the <ordinal> entry")
		if first == "" {
			first = both
		} else if both != first {
			t.Errorf("components/kafka-namespace-%s is not components/kafka-namespace-1 with %s for 1", n, n)
		}
	}
}

// copyDeploy copies this folder's YAML files into an in-memory file system
// under /deploy, for builds of modified copies.
func copyDeploy(t *testing.T) filesys.FileSystem {
	t.Helper()
	fSys := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fSys.WriteFile(filepath.Join("/deploy", path), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fSys
}

func mustWrite(t *testing.T, fSys filesys.FileSystem, path, data string) {
	t.Helper()
	if err := fSys.WriteFile(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// appendResource adds file to the resources list of a kustomization.
func appendResource(t *testing.T, fSys filesys.FileSystem, kustomization, file string) {
	t.Helper()
	data, err := fSys.ReadFile(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "resources:\n", "resources:\n  - "+file+"\n", 1)
	if s == string(data) {
		t.Fatalf("%s has no resources list", kustomization)
	}
	mustWrite(t, fSys, kustomization, s)
}

// TestREADMEOverlayExample builds the overlay the README shows (bot in ops,
// Kafka in data and data2) as a folder beside deploy/, so the example
// cannot rot.
func TestREADMEOverlayExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n( *)```yaml\n *# my-kafkabot/kustomization.yaml\n(.*?)\n *```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no my-kafkabot/kustomization.yaml example")
	}
	// The example is indented as part of a list item.
	lines := strings.Split(string(m[2]), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, string(m[1]))
	}
	fSys := copyDeploy(t)
	mustWrite(t, fSys, "/my-kafkabot/kustomization.yaml", strings.Join(lines, "\n"))
	objs, err := kustomizeRun(fSys, "/my-kafkabot")
	if err != nil {
		t.Fatalf("building the README's overlay: %v", err)
	}
	d := checkKafkaNamespaces(t, "README example", objs)
	if want := []string{"data", "data2"}; !slices.Equal(d.listed, want) || d.bot != "ops" {
		t.Errorf("the README's overlay gives KAFKA_NAMESPACES %v and bot namespace %q; it says %v and ops", d.listed, d.bot, want)
	}
	if stale := staleNamespaceFields(objs, defaultBotNamespace, defaultKafkaNamespace); len(stale) > 0 {
		t.Errorf("the README's overlay still names a default:\n  %s", strings.Join(stale, "\n  "))
	}
}
