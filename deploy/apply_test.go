// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// applyRuns counts the runs of TestApplyWithoutTheKafkaNamespace in this
// process.
var applyRuns int

// envKubectl names the kubectl binary the apply tests run: the one
// hack/build-node.sh builds from hack/tools' pins (hack/test.sh sets it).
const envKubectl = "KUBECTL"

// preflightSelector is the label every per-Kafka-namespace object carries;
// the README's preflight applies only those objects, as a server dry run.
const preflightSelector = "kafkabot.io/kafka-namespace-slot"

// kubectlEnv is a real API server (internal/testkit/testenv) and the pinned
// kubectl, logged in as the admin.
type kubectlEnv struct {
	env        *testenv.Env
	kubectl    string
	kubeconfig string
	dyn        dynamic.Interface
	mapper     *restmapper.DeferredDiscoveryRESTMapper
}

func startKubectlEnv(t *testing.T) *kubectlEnv {
	t.Helper()
	kubectl := os.Getenv(envKubectl)
	if kubectl == "" {
		if os.Getenv(testenv.EnvCI) == "true" {
			t.Fatalf("%s is not set: hack/test.sh sets it to the kubectl hack/build-node.sh builds", envKubectl)
		}
		t.Skipf("%s is not set (export %s=\"$(bash hack/build-node.sh | tail -n1)/kubectl\")", envKubectl, envKubectl)
	}
	env := testenv.Start(t)
	cfg := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kubectlEnv{env: env, kubectl: kubectl, kubeconfig: path, dyn: dyn,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// run runs kubectl and returns its combined output and whether it exited 0.
func (k *kubectlEnv) run(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Its own discovery cache: nothing outside the test's folders.
	flags := []string{"--kubeconfig", k.kubeconfig, "--cache-dir", filepath.Join(filepath.Dir(k.kubeconfig), "cache")}
	cmd := exec.CommandContext(ctx, k.kubectl, append(flags, args...)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("kubectl %s: timed out\n%s", strings.Join(args, " "), out)
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
		}
	}
	return string(out), err == nil
}

// existing returns the identities of the objects of objs that exist on
// the API server.
func (k *kubectlEnv) existing(t *testing.T, objs []map[string]any) []string {
	t.Helper()
	var found []string
	for _, o := range objs {
		gv, err := schema.ParseGroupVersion(str(o, "apiVersion"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := k.mapper.RESTMapping(gv.WithKind(str(o, "kind")).GroupKind(), gv.Version)
		if err != nil {
			t.Fatalf("%s: %v", ident(o), err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = k.dyn.Resource(m.Resource).Namespace(str(o, "metadata", "namespace")).Get(ctx, str(o, "metadata", "name"), metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			found = append(found, ident(o))
		case !apierrors.IsNotFound(err):
			t.Fatalf("getting %s: %v", ident(o), err)
		}
	}
	return found
}

func (k *kubectlEnv) createNamespace(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := k.env.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// installOverlay writes an overlay of the Bitnami example with the bot in
// prefix-ops and Kafka in prefix-data and prefix-data2, and the two
// cluster-wide objects (the admission policy and its binding) renamed with
// the prefix, so that nothing collides with what other tests (and
// testenv's own install of deploy/) put on the shared API server. It
// returns the overlay's folder, its rendering and the Kafka namespaces.
func installOverlay(t *testing.T, prefix string) (string, []map[string]any, []string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, wd)
	if err != nil {
		t.Fatal(err)
	}
	kafka := []string{prefix + "-data", prefix + "-data2"}
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %[2]s/overlays/bitnami
configMapGenerator:
  - name: kafkabot-namespaces
    behavior: merge
    literals:
      - botNamespace=%[1]s-ops
      - kafkaNamespaces=%[3]s
components:
  - %[2]s/components/namespaces
  - %[2]s/components/kafka-namespace-1
patches:
  - target: {kind: ValidatingAdmissionPolicy, name: kafka-bot-guard}
    patch: '[{"op": "replace", "path": "/metadata/name", "value": "%[1]s-kafka-bot-guard"}]'
  - target: {kind: ValidatingAdmissionPolicyBinding, name: kafka-bot-guard}
    patch: |-
      [{"op": "replace", "path": "/metadata/name", "value": "%[1]s-kafka-bot-guard"},
       {"op": "replace", "path": "/spec/policyName", "value": "%[1]s-kafka-bot-guard"}]
`, prefix, rel, strings.Join(kafka, ","))
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := buildObjects(t, dir)
	if d := checkKafkaNamespaces(t, prefix, objs); !slices.Equal(d.listed, kafka) {
		t.Fatalf("the test overlay lists %v, want %v", d.listed, kafka)
	}
	return dir, objs, kafka
}

// partition splits the rendering's identities into the per-Kafka-namespace
// objects and the rest.
func partition(objs []map[string]any, kafka []string) (inKafka, rest []string) {
	for _, o := range objs {
		if slices.Contains(kafka, str(o, "metadata", "namespace")) {
			inKafka = append(inKafka, ident(o))
		} else {
			rest = append(rest, ident(o))
		}
	}
	return inKafka, rest
}

// TestKubectlBuildsWhatTheTestsCheck: the pinned kubectl's own kustomize
// (the one `kubectl apply -k` runs) renders deploy/ and the overlays
// exactly as the library these tests use does.
func TestKubectlBuildsWhatTheTestsCheck(t *testing.T) {
	kubectl := os.Getenv(envKubectl)
	if kubectl == "" {
		if os.Getenv(testenv.EnvCI) == "true" {
			t.Fatalf("%s is not set", envKubectl)
		}
		t.Skipf("%s is not set", envKubectl)
	}
	for _, dir := range []string{".", "overlays/bitnami", "overlays/strimzi", "testdata/overlays/ops-data", "testdata/overlays/four-namespaces"} {
		out, err := exec.Command(kubectl, "kustomize", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl kustomize deploy/%s: %v\n%s", dir, err, out)
		}
		if want := buildDir(t, dir); string(out) != string(want) {
			t.Errorf("kubectl kustomize deploy/%s differs from the library's build", dir)
		}
	}
}

// TestApplyWithoutTheKafkaNamespace pins down what `kubectl apply -k`
// does on a cluster that lacks a Kafka namespace, and what the README's
// preflight does instead.
//
// kubectl apply sends one object after another and goes on past an
// object's error, so no ordering or guard object inside the kustomization
// can make a plain `kubectl apply -k` create nothing: it creates every
// object whose namespace exists, fails the ones in the missing namespace
// (exit status 1, "namespaces \"<name>\" not found"), and a second run once
// the namespace exists completes the install. The preflight, a server-side
// dry run of only the per-Kafka-namespace objects, creates nothing at all
// and fails naming each missing namespace.
func TestApplyWithoutTheKafkaNamespace(t *testing.T) {
	k := startKubectlEnv(t)
	// Names of their own on each run (go test -count=N shares the API server).
	applyRuns++
	run := fmt.Sprintf("kb%d", applyRuns)

	t.Run("plain apply creates the rest, fails naming the namespace, and a rerun completes it", func(t *testing.T) {
		prefix := run + "-plain"
		dir, objs, kafka := installOverlay(t, prefix)
		inKafka, rest := partition(objs, kafka)
		out, ok := k.run(t, "apply", "-k", dir)
		t.Logf("kubectl apply -k without the Kafka namespaces:\n%s", out)
		if ok {
			t.Fatalf("kubectl apply -k succeeded without the Kafka namespaces:\n%s", out)
		}
		for _, ns := range kafka {
			if !strings.Contains(out, fmt.Sprintf("namespaces %q not found", ns)) {
				t.Errorf("the error does not name the missing namespace %s:\n%s", ns, out)
			}
		}
		if got := k.existing(t, objs); !slices.Equal(got, rest) {
			t.Errorf("after the failed apply these exist:\n  %s\nthe README says everything but the Kafka namespaces' objects:\n  %s",
				strings.Join(got, "\n  "), strings.Join(rest, "\n  "))
		}
		// What the half-installed bot's startup self-check reports for the
		// missing namespaces, and for a namespace that exists but that the
		// install has no RBAC in (a list entry without its component): the
		// state the README tells people to look for.
		unbound := prefix + "-unbound"
		k.createNamespace(t, unbound)
		cs, err := kubernetes.NewForConfig(k.env.ImpersonatedConfig(prefix + "-ops/kafka-bot"))
		if err != nil {
			t.Fatal(err)
		}
		bot := kube.New(cs, kube.Options{Namespaces: kafka})
		for _, ns := range append(slices.Clone(kafka), unbound) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if c := bot.CheckAdmission(ctx, ns); c.State != kube.AdmissionNoAccess {
				t.Errorf("the self-check in %s: %s, want %s", ns, c, kube.AdmissionNoAccess)
			}
			cancel()
		}
		for _, ns := range kafka {
			k.createNamespace(t, ns)
		}
		if out, ok := k.run(t, "apply", "-k", dir); !ok {
			t.Fatalf("the rerun after creating %v failed:\n%s", kafka, out)
		}
		testenv.WaitFor(t, "the bot's RBAC in the Kafka namespaces", func(ctx context.Context) (bool, error) {
			for _, ns := range kafka {
				if c := bot.CheckAdmission(ctx, ns); c.State == kube.AdmissionNoAccess {
					return false, nil
				}
			}
			return true, nil
		})
		if got := k.existing(t, objs); len(got) != len(objs) {
			t.Errorf("after the rerun only these exist:\n  %s\nmissing: %v", strings.Join(got, "\n  "), slices.DeleteFunc(slices.Clone(inKafka), func(s string) bool { return slices.Contains(got, s) }))
		}
	})

	t.Run("the preflight creates nothing and names every missing namespace", func(t *testing.T) {
		prefix := run + "-pre"
		dir, objs, kafka := installOverlay(t, prefix)
		preflight := []string{"apply", "-k", dir, "--dry-run=server", "-l", preflightSelector}
		out, ok := k.run(t, preflight...)
		t.Logf("the preflight without the Kafka namespaces:\n%s", out)
		if ok {
			t.Fatalf("the preflight succeeded without the Kafka namespaces:\n%s", out)
		}
		for _, ns := range kafka {
			if !strings.Contains(out, fmt.Sprintf("namespaces %q not found", ns)) {
				t.Errorf("the preflight does not name the missing namespace %s:\n%s", ns, out)
			}
		}
		if got := k.existing(t, objs); len(got) > 0 {
			t.Errorf("the failed preflight created:\n  %s", strings.Join(got, "\n  "))
		}
		// One namespace present: the other is still named, nothing created.
		k.createNamespace(t, kafka[0])
		out, ok = k.run(t, preflight...)
		if ok || !strings.Contains(out, fmt.Sprintf("namespaces %q not found", kafka[1])) || strings.Contains(out, fmt.Sprintf("namespaces %q not found", kafka[0])) {
			t.Errorf("with only %s present the preflight says (ok=%v):\n%s", kafka[0], ok, out)
		}
		if got := k.existing(t, objs); len(got) > 0 {
			t.Errorf("the failed preflight created:\n  %s", strings.Join(got, "\n  "))
		}
		k.createNamespace(t, kafka[1])
		if out, ok := k.run(t, preflight...); !ok {
			t.Fatalf("the preflight failed with every namespace present:\n%s", out)
		}
		if got := k.existing(t, objs); len(got) > 0 {
			t.Errorf("the passing preflight (a dry run) created:\n  %s", strings.Join(got, "\n  "))
		}
		// The README's step 2 may have created the bot's namespace (for the
		// Secret) before the install: the install adopts it.
		if out, ok := k.run(t, "create", "namespace", prefix+"-ops"); !ok {
			t.Fatal(out)
		}
		if out, ok := k.run(t, "apply", "-k", dir); !ok {
			t.Fatalf("the install after a passing preflight failed:\n%s", out)
		}
		if got := k.existing(t, objs); len(got) != len(objs) {
			t.Errorf("after the install only these exist:\n  %s", strings.Join(got, "\n  "))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ns, err := k.env.Clientset.CoreV1().Namespaces().Get(ctx, prefix+"-ops", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ns.Labels["kafkabot.io/bot-namespace"] != "true" || ns.Annotations["kafkabot.io/service-account"] != "kafka-bot" {
			t.Errorf("the install did not adopt the namespace created before it: labels %v, annotations %v", ns.Labels, ns.Annotations)
		}
	})
}

// TestREADMEPreflightIsTheTestedOne: the README's install command is the
// preflight TestApplyWithoutTheKafkaNamespace runs.
func TestREADMEPreflightIsTheTestedOne(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "kubectl apply -k deploy/overlays/bitnami --dry-run=server -l " + preflightSelector + " \\\n     && kubectl apply -k deploy/overlays/bitnami"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not show the tested preflight:\n%s", want)
	}
}
