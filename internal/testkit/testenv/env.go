// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package testenv runs a real kube-apiserver and etcd for tests, with RBAC
// enforced and deploy/'s ServiceAccount, Roles and admission policy
// installed, so that tests can act as the bot's ServiceAccount and fail on
// any permission the code needs and deploy/ lacks.
//
// The binaries come from hack/build-control-plane.sh (or $KUBEBUILDER_ASSETS).
// One control plane serves a whole test package; wire it in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Start(t)
//		ns := env.KafkaNamespace(t, "kafka-something", nil)
//		cs := kubernetes.NewForConfigOrDie(env.BotConfig())
//		...
//	}
//
// The control plane starts on the first Start call, so a package whose tests
// are all filtered out by -run never starts one.
//
// Tests of a bot serving several clusters take a second, independent
// control plane from StartSecond (started on first use too), and stand-ins
// for clusters that cannot be reached from StartHanging (an API server
// that never answers) and StartRefuser (connections refused). Kubeconfig
// turns any of their configurations into the file a CLUSTERS_FILE entry
// names. New starts a control plane outside `go test` (test/bench/benchreport).
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Env is a running control plane with deploy/'s RBAC installed.
type Env struct {
	// Config is the admin (system:masters) configuration. Tests use it to
	// arrange the world; the code under test should use BotConfig.
	Config *rest.Config
	// Clientset is an admin clientset built from Config.
	Clientset kubernetes.Interface
	// AssetsDir holds the kube-apiserver and etcd binaries in use.
	AssetsDir string
	// Manifests are the deploy/ objects installed on this API server.
	Manifests *Manifests

	applier *Applier
	env     *envtest.Environment
	reaper  *reaper

	// namesMu guards names: how often each namespace name was asked for,
	// so a test run again (go test -count=N) on the same API server gets a
	// fresh namespace instead of colliding with its earlier run.
	namesMu sync.Mutex
	names   map[string]int
}

// slot is one package-wide control plane that Main owns, started on
// first use.
type slot struct {
	started bool
	env     *Env
	err     error
}

// shared holds the package's control planes: first is Start's, second is
// StartSecond's (a test package of one cluster never starts it).
var shared struct {
	mu            sync.Mutex
	inMain        bool
	first, second slot
}

// startMu serializes starting control planes, so that each one's reaper
// is given exactly the processes that start started (see startEnv).
var startMu sync.Mutex

// Main runs a test package's tests and then stops the control plane if any
// test started it. Call it from TestMain and pass its result to os.Exit.
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()

	code := m.Run()

	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, s := range []*slot{&shared.second, &shared.first} {
		if s.env == nil {
			continue
		}
		if err := s.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stopping the control plane: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		s.env = nil
	}
	return code
}

// Start returns the package's control plane, starting it on first use.
// When the binaries are missing it fails the test with instructions, or
// skips it when KAFKABOT_SKIP_APISERVER=1 outside CI.
func Start(t testing.TB) *Env {
	t.Helper()
	return startShared(t, &shared.first, "testenv.Start")
}

// StartSecond returns the package's second control plane: its own etcd and
// kube-apiserver with deploy/'s RBAC installed, independent of Start's
// (nothing written on one is seen on the other), for tests of a bot that
// serves two clusters. It starts on first use, so only packages with such
// tests pay for it, and Main stops it with the first.
func StartSecond(t testing.TB) *Env {
	t.Helper()
	return startShared(t, &shared.second, "testenv.StartSecond")
}

func startShared(t testing.TB, s *slot, caller string) *Env {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		t.Fatal(caller + " needs the package's TestMain to call testenv.Main, which stops the control plane after the tests")
	}
	if !s.started {
		s.started = true
		s.env, s.err = startEnv()
	}
	if s.err != nil {
		if errors.Is(s.err, errMissingBinaries) && skipAllowed() {
			t.Skipf("skipping real-apiserver test (%s=1): %v", EnvSkip, s.err)
		}
		t.Fatalf("starting the test control plane: %v", s.err)
	}
	return s.env
}

// New starts a control plane of its own outside `go test` (test/bench/benchreport
// uses it): the caller must call Stop, also on failure. The reaper still
// kills its processes if the calling process dies first.
func New() (*Env, error) { return startEnv() }

func startEnv() (*Env, error) {
	// The reaper finds the control plane's processes among this process's
	// children: those that were not there before this start are this
	// control plane's. Starts are serialized so that two control planes
	// starting at once do not take each other's processes.
	startMu.Lock()
	defer startMu.Unlock()
	earlier, _ := controlPlaneGroups(os.Getpid())
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	manifests, err := LoadManifests(root)
	if err != nil {
		return nil, err
	}

	te := &envtest.Environment{BinaryAssetsDirectory: assets}
	api := te.ControlPlane.GetAPIServer()
	// pods/log and the other node proxies reach a kubelet through the
	// Node's InternalIP; kubesim registers 127.0.0.1 there. With no
	// --kubelet-certificate-authority the API server does not verify the
	// kubelet's serving certificate, which suits kubesim's httptest server.
	api.Configure().Set("kubelet-preferred-address-types", "InternalIP")

	cfg, err := te.Start()
	if err != nil {
		// A half-started control plane still has processes to stop.
		_ = te.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	e := &Env{Config: cfg, AssetsDir: assets, Manifests: manifests, env: te}
	e.reaper = startReaper(earlier)

	if e.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, errors.Join(fmt.Errorf("creating admin clientset: %w", err), e.Stop())
	}
	if e.applier, err = NewApplier(cfg); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.applier.Apply(ctx, manifests.Shared...); err != nil {
		return nil, errors.Join(fmt.Errorf("installing deploy/: %w", err), e.Stop())
	}
	return e, nil
}

// Stop stops kube-apiserver and etcd. Main calls it for the package's
// control planes; only a caller of New calls it itself.
func (e *Env) Stop() error {
	err := e.env.Stop()
	if err != nil {
		// Let the reaper kill whatever Stop could not.
		e.reaper.fire()
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	e.reaper.disarm()
	return nil
}

// ImpersonatedConfig returns an admin-authenticated configuration that
// acts as the ServiceAccount "namespace/name" (its user name and the groups
// the API server gives every ServiceAccount), so requests are authorized by
// RBAC exactly as the ServiceAccount's own token would be.
func (e *Env) ImpersonatedConfig(serviceAccount string) *rest.Config {
	ns, name, ok := strings.Cut(serviceAccount, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		panic(fmt.Sprintf("testenv: ImpersonatedConfig(%q): want namespace/name", serviceAccount))
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	return cfg
}

// BotConfig is ImpersonatedConfig for the bot's ServiceAccount from deploy/.
func (e *Env) BotConfig() *rest.Config {
	return e.ImpersonatedConfig(BotNamespace + "/" + BotServiceAccount)
}

// BotUserName is the user name the API server sees for the bot.
const BotUserName = "system:serviceaccount:" + BotNamespace + ":" + BotServiceAccount

// Namespace creates namespace name with labels (Pod Security labels, for
// instance) and nothing else in it: the bot has no access there. When the
// package's tests run again on the same API server (-count=N), the name
// gets a suffix ("-2", "-3"...): use the name it returns.
func (e *Env) Namespace(t testing.TB, name string, labels map[string]string) string {
	t.Helper()
	e.namesMu.Lock()
	if e.names == nil {
		e.names = map[string]int{}
	}
	e.names[name]++
	if n := e.names[name]; n > 1 {
		name = fmt.Sprintf("%s-%d", name, n)
	}
	e.namesMu.Unlock()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			t.Fatalf("namespace %s already exists: each test needs its own (the API server is shared by the package)", name)
		}
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	// No cleanup: envtest runs no namespace controller, so a deleted
	// namespace would stay Terminating; the whole API server goes away
	// after the package's tests.
	return name
}

// KafkaNamespace creates namespace name and installs deploy/'s
// per-Kafka-namespace Role and RoleBinding in it, as a site does for each
// namespace listed in KAFKA_NAMESPACES.
func (e *Env) KafkaNamespace(t testing.TB, name string, labels map[string]string) string {
	t.Helper()
	name = e.Namespace(t, name, labels)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.applier.Apply(ctx, e.Manifests.ForKafkaNamespace(name)...); err != nil {
		t.Fatalf("installing the bot's RBAC in %s: %v", name, err)
	}
	e.waitForAccess(t, e.BotConfig(), name)
	return name
}

// InstallKafkaNamespace is KafkaNamespace for callers outside a test
// (test/bench/benchreport): it creates namespace name, exactly so named, installs
// deploy/'s per-Kafka-namespace Role and RoleBinding in it and returns
// once the bot may read pods there.
func (e *Env) InstallKafkaNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	if err := e.applier.Apply(ctx, e.Manifests.ForKafkaNamespace(name)...); err != nil {
		return fmt.Errorf("installing the bot's RBAC in %s: %w", name, err)
	}
	bot, err := kubernetes.NewForConfig(e.BotConfig())
	if err != nil {
		return err
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: name, Resource: "pods", Verb: "get"},
	}}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, WaitTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := bot.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the bot's RoleBinding in %s to take effect: %w", name, err)
	}
	return nil
}

// InstallBot installs the bot's identity as an installer who chose
// namespace and serviceAccount instead of deploy/'s names would: the
// Namespace (with the admission policy's parameter label when params is
// true), the ServiceAccount and its own Role and RoleBinding. deploy/'s
// cluster-wide policy and binding are shared, unchanged. It returns a
// configuration acting as that ServiceAccount. The namespace name is used
// as given: pick one no other test uses.
func (e *Env) InstallBot(t testing.TB, namespace, serviceAccount string, params bool) *rest.Config {
	t.Helper()
	objs, err := e.Manifests.ForBot(namespace, serviceAccount, params)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.applier.Apply(ctx, objs...); err != nil {
		t.Fatalf("installing the bot as %s/%s: %v", namespace, serviceAccount, err)
	}
	return e.ImpersonatedConfig(namespace + "/" + serviceAccount)
}

// KafkaNamespaceOf is KafkaNamespace for a bot that InstallBot installed
// as botNamespace/serviceAccount.
func (e *Env) KafkaNamespaceOf(t testing.TB, name, botNamespace, serviceAccount string) string {
	t.Helper()
	name = e.Namespace(t, name, nil)
	objs, err := e.Manifests.ForKafkaNamespaceOf(name, botNamespace, serviceAccount)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.applier.Apply(ctx, objs...); err != nil {
		t.Fatalf("installing the RBAC of %s/%s in %s: %v", botNamespace, serviceAccount, name, err)
	}
	e.waitForAccess(t, e.ImpersonatedConfig(botNamespace+"/"+serviceAccount), name)
	return name
}

// SelfNamespace creates namespace name with deploy/'s Role and RoleBinding
// of the bot's own namespace in it (subjects unchanged): a private copy of
// the bot's namespace, for tests that keep alert state or leadership
// without touching other tests' (the state ConfigMap has one fixed name).
// Use the name it returns.
func (e *Env) SelfNamespace(t testing.TB, name string) string {
	t.Helper()
	name = e.Namespace(t, name, nil)
	var objs []*unstructured.Unstructured
	for _, obj := range e.Manifests.Shared {
		if obj.GetNamespace() == BotNamespace && (obj.GetKind() == "Role" || obj.GetKind() == "RoleBinding") {
			c := obj.DeepCopy()
			c.SetNamespace(name)
			objs = append(objs, c)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.applier.Apply(ctx, objs...); err != nil {
		t.Fatalf("installing the bot's own Role in %s: %v", name, err)
	}
	bot, err := kubernetes.NewForConfig(e.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: name, Resource: "configmaps", Verb: "create"},
	}}
	WaitFor(t, "the bot's own RoleBinding in "+name+" to take effect", func(ctx context.Context) (bool, error) {
		got, err := bot.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed, nil
	})
	return name
}

// waitForAccess returns once the API server's RBAC authorizer, which works
// from a watch cache, lets cfg's identity get pods in namespace ns: right
// after the RoleBinding is created a request may still be refused.
func (e *Env) waitForAccess(t testing.TB, cfg *rest.Config, ns string) {
	t.Helper()
	bot, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Resource: "pods", Verb: "get"},
	}}
	WaitFor(t, cfg.Impersonate.UserName+"'s RoleBinding in "+ns+" to take effect", func(ctx context.Context) (bool, error) {
		got, err := bot.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed, nil
	})
}

// Apply installs extra objects with server-side apply as the admin.
func (e *Env) Apply(t testing.TB, manifests []byte) {
	t.Helper()
	objs, err := DecodeManifests(manifests)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.applier.Apply(ctx, objs...); err != nil {
		t.Fatal(err)
	}
}
