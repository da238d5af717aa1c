// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv/botuses"
)

// Values the install test gives the chart's Secret; none may appear in
// Helm's output (NOTES included).
var installSecrets = map[string]string{
	"slackAppToken":     "xapp-placeholder-install-test-app-token",
	"slackBotToken":     "xoxb-placeholder-install-test-bot-token",
	"approvalSecret":    "install-test-approval-secret-0123456789abcdef",
	"alertmanagerToken": "install-test-alertmanager-token",
}

// TestChartInstallsWhatTheBotNeeds installs the chart with `helm install`
// (Helm 3, then Helm 4 as a second release) into the real kube-apiserver
// the tests run, each release in a namespace of its own with two Kafka
// namespaces and a ServiceAccount name of its own, and proves from the
// installed objects, asking the API server as the release's ServiceAccount:
//
//   - its RBAC allows every request the bot's code makes (botuses.All,
//     which test/integration holds to the code's calls), in both Kafka
//     namespaces and its own, and grants nothing else: no cluster-wide
//     grant, every RoleBinding names only the release's ServiceAccount;
//   - the admission policy kafka-bot-guard is enforced on that
//     ServiceAccount: the bot's own startup self-check (kube.CheckAdmission)
//     reports it enforced in each Kafka namespace, while the same probe by
//     another ServiceAccount with the same RBAC is admitted (the policy
//     follows the release's namespace and ServiceAccount, nobody else's);
//   - no secret value appears in Helm's output;
//   - a Kafka namespace that does not exist fails the install, named,
//     before anything is created;
//   - helm upgrade with another Kafka namespace list moves the access (and
//     KAFKA_NAMESPACES) with it;
//   - helm uninstall keeps the release namespace.
func TestChartInstallsWhatTheBotNeeds(t *testing.T) {
	hs := helms(t)
	env := testenv.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	kubeconfig := writeKubeconfig(t, env.Config)

	// testenv installed deploy/base's policy and binding, and the kubectl
	// tests of this package (which ran before, not in parallel) left
	// renamed copies that select the same parameter label. Any of them
	// would refuse the self-check's probe under its own name; the first
	// release creates and owns kafka-bot-guard instead, alone.
	admission := env.Clientset.AdmissionregistrationV1()
	bindings, err := admission.ValidatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings.Items {
		if err := admission.ValidatingAdmissionPolicyBindings().Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	policies, err := admission.ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range policies.Items {
		if err := admission.ValidatingAdmissionPolicies().Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}

	// A Kafka namespace that does not exist fails the install before
	// anything is created, naming it.
	t.Run("missing Kafka namespace", func(t *testing.T) {
		h := hs[0]
		botNS := env.Namespace(t, "chatops-missing", nil)
		stdout, stderr, ok := h.run(t, "install", "kafkabot-missing", chartDir, "--namespace", botNS, "--take-ownership",
			"--kubeconfig", kubeconfig, "--set", "image.digest="+testDigest, "--set", "kafkaNamespaces={kafka-nowhere}")
		if ok {
			t.Fatalf("helm install into the missing Kafka namespace kafka-nowhere succeeded:\n%s", stdout)
		}
		if !strings.Contains(stderr, "namespace kafka-nowhere not found in this cluster; create it or fix the list (nothing was installed)") {
			t.Errorf("helm install failed without naming the missing namespace:\n%s", stderr)
		}
		objs, err := env.Clientset.RbacV1().Roles(botNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sas, err := env.Clientset.CoreV1().ServiceAccounts(botNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=kafkabot-missing"})
		if err != nil {
			t.Fatal(err)
		}
		ns, err := env.Clientset.CoreV1().Namespaces().Get(ctx, botNS, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, labelled := ns.Labels["kafkabot.io/bot-namespace"]; labelled {
			t.Errorf("the failed install took over namespace %s (labels %v)", botNS, ns.Labels)
		}
		if len(objs.Items)+len(sas.Items) > 0 {
			t.Errorf("the failed install left %d Roles and %d ServiceAccounts in %s", len(objs.Items), len(sas.Items), botNS)
		}
	})

	// The chart takes its namespace over (labels it Pod Security
	// restricted, keeps it on uninstall): it refuses default, kube-system
	// and a namespace that holds someone else's workloads, and an install
	// of the image by tag, before it creates anything.
	t.Run("refusals", func(t *testing.T) {
		h := hs[0]
		kafka := env.Namespace(t, "kafka-refusals", nil)
		crowded := env.Namespace(t, "crowded", nil)
		other := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "someone-elses-app", Namespace: crowded},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "theirs"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "theirs"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app@" + testDigest}}},
				},
			},
		}
		if _, err := env.Clientset.AppsV1().Deployments(crowded).Create(ctx, other, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		empty := env.Namespace(t, "chatops-no-digest", nil)
		for _, tc := range []struct {
			namespace string
			digest    bool
			want      string
		}{
			{"default", true, `refusing to install into namespace "default": the chart takes its namespace over`},
			{"kube-system", true, `refusing to install into namespace "kube-system"`},
			{crowded, true, `refusing to install into namespace "` + crowded + `": it holds workloads of others (Deployment/someone-elses-app)`},
			{empty, false, "image.digest is required to install: this chart (from a checkout, not a release) names the image by its version tag ghcr.io/kafka-chatops/kafkabot:"},
		} {
			before, err := env.Clientset.CoreV1().Namespaces().Get(ctx, tc.namespace, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"install", "kafkabot-refused", chartDir, "--namespace", tc.namespace, "--take-ownership",
				"--kubeconfig", kubeconfig, "--set", "kafkaNamespaces={" + kafka + "}"}
			if tc.digest {
				args = append(args, "--set", "image.digest="+testDigest)
			}
			stdout, stderr, ok := h.run(t, args...)
			if ok {
				t.Errorf("helm install into %s succeeded:\n%s", tc.namespace, stdout)
				continue
			}
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "Nothing was installed") {
				t.Errorf("helm install into %s failed without saying %q:\n%s", tc.namespace, tc.want, stderr)
			}
			after, err := env.Clientset.CoreV1().Namespaces().Get(ctx, tc.namespace, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(before.Labels, after.Labels) || !maps.Equal(before.Annotations, after.Annotations) {
				t.Errorf("the refused install changed namespace %s: labels %v -> %v", tc.namespace, before.Labels, after.Labels)
			}
			roles, err := env.Clientset.RbacV1().Roles(kafka).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=kafkabot-refused"})
			if err != nil {
				t.Fatal(err)
			}
			if len(roles.Items) > 0 {
				t.Errorf("the refused install into %s created %d Roles in %s", tc.namespace, len(roles.Items), kafka)
			}
		}
	})

	// Kubernetes older than 1.30 is refused, naming the requirement. The
	// test's API server is newer: Helm's --kube-version stands in for an
	// older one while lookup still reaches the cluster (template
	// --dry-run=server).
	t.Run("old Kubernetes", func(t *testing.T) {
		h := hs[0]
		ns := env.Namespace(t, "chatops-old-kube", nil)
		_, stderr, ok := h.run(t, "template", "kafkabot-old", chartDir, "--namespace", ns, "--dry-run=server", "--kube-version", "1.29.4",
			"--kubeconfig", kubeconfig, "--set", "image.digest="+testDigest, "--set", "kafkaNamespaces={"+ns+"-kafka}")
		if ok || !strings.Contains(stderr, "kafkabot needs Kubernetes >= 1.30 (its admission policy is a ValidatingAdmissionPolicy, admissionregistration.k8s.io/v1, GA in 1.30); this cluster runs v1.29.4") {
			t.Errorf("helm template --dry-run=server --kube-version 1.29.4: ok=%v\n%s", ok, stderr)
		}
	})

	type installed struct {
		h                 helm
		release, botNS    string
		kafka             []string
		serviceAccountCfg *rest.Config
	}
	var releases []installed
	for i, h := range hs {
		r := installed{h: h, release: "kafkabot-" + h.name}
		r.botNS = env.Namespace(t, "chatops-"+h.name, nil)
		r.kafka = []string{env.Namespace(t, "orders-"+h.name, nil), env.Namespace(t, "payments-"+h.name, nil)}
		const serviceAccount = "chatops-bot"
		values := map[string]any{
			"kafkaNamespaces": r.kafka,
			"image":           map[string]any{"digest": testDigest},
			"serviceAccount":  map[string]any{"name": serviceAccount},
			"existingSecret":  "",
			"secret":          map[string]any{"create": true, "values": installSecrets},
			"slack":           map[string]any{"alertChannel": "C0ALERTS01", "approvers": []string{"U0ALICE001"}},
			// The policy is cluster-wide: the first release creates it, the
			// second shares it (values admissionPolicy.create=false).
			"admissionPolicy": map[string]any{"create": i == 0},
			"service":         map[string]any{"enabled": true},
			"alertmanager":    map[string]any{"enabled": true},
			// The API server accepts the bot's own NetworkPolicy too.
			"networkPolicy": map[string]any{"enabled": true, "apiServer": map[string]any{"cidrs": []string{"127.0.0.1/32"}}},
		}
		valuesFile := filepath.Join(t.TempDir(), "values.yaml")
		data, err := yaml.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(valuesFile, data, 0o600); err != nil {
			t.Fatal(err)
		}

		// The documented install: the namespace exists (kubectl create
		// namespace, here env.Namespace), the chart takes it over to label
		// and annotate it as the policy's parameters.
		stdout, stderr, ok := h.run(t, "install", r.release, chartDir, "--namespace", r.botNS, "--take-ownership",
			"--kubeconfig", kubeconfig, "-f", valuesFile)
		if !ok {
			t.Fatalf("%s install failed:\n%s%s", h.name, stdout, stderr)
		}
		for name, v := range installSecrets {
			if strings.Contains(stdout+stderr, v) {
				t.Errorf("%s install printed secret.values.%s", h.name, name)
			}
		}
		if !strings.Contains(stdout, "STATUS: deployed") {
			t.Errorf("%s install did not report the release deployed:\n%s", h.name, stdout)
		}
		// The NOTES open with what the release did cluster-wide.
		if i == 0 {
			_, notes, _ := strings.Cut(stdout, "NOTES:\n")
			if head := strings.Join(strings.SplitN(notes, "\n", 5), "\n"); !strings.Contains(head, "CLUSTER-WIDE: this release created the ValidatingAdmissionPolicy kafka-bot-guard") {
				t.Errorf("%s install's NOTES do not open with the cluster-wide policy:\n%s", h.name, notes)
			}
		}
		r.serviceAccountCfg = env.ImpersonatedConfig(r.botNS + "/" + serviceAccount)
		releases = append(releases, r)
	}

	for _, r := range releases {
		t.Run(r.h.name, func(t *testing.T) {
			bot, err := kubernetes.NewForConfig(r.serviceAccountCfg)
			if err != nil {
				t.Fatal(err)
			}
			checkGrantsEveryUse(ctx, t, bot, r.kafka, r.botNS)
			checkGrantsNothingElse(ctx, t, env.Clientset, r.release, r.kafka, r.botNS, r.serviceAccountCfg.Impersonate.UserName)
			checkPolicyBindsTheRelease(ctx, t, env, bot, r.kafka, r.botNS)
		})
	}

	// helm upgrade with another Kafka namespace list: the dropped
	// namespace's access goes, the new one's comes, the ConfigMap follows.
	t.Run("upgrade changes the Kafka namespaces", func(t *testing.T) {
		r := releases[0]
		dropped, kept := r.kafka[1], r.kafka[0]
		added := env.Namespace(t, "inventory-"+r.h.name, nil)
		stdout, stderr, ok := r.h.run(t, "upgrade", r.release, chartDir, "--namespace", r.botNS, "--kubeconfig", kubeconfig,
			"--reuse-values", "--set", "kafkaNamespaces={"+kept+","+added+"}")
		if !ok {
			t.Fatalf("helm upgrade failed:\n%s%s", stdout, stderr)
		}
		bot, err := kubernetes.NewForConfig(r.serviceAccountCfg)
		if err != nil {
			t.Fatal(err)
		}
		checkGrantsEveryUse(ctx, t, bot, []string{kept, added}, r.botNS)
		checkGrantsNothingElse(ctx, t, env.Clientset, r.release, []string{kept, added}, r.botNS, r.serviceAccountCfg.Impersonate.UserName)
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: dropped, Resource: "pods", Verb: "get"},
		}}
		testenv.WaitFor(t, "the bot's access to the dropped namespace "+dropped+" to go", func(ctx context.Context) (bool, error) {
			got, err := bot.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return !got.Status.Allowed, nil
		})
		cm, err := env.Clientset.CoreV1().ConfigMaps(r.botNS).Get(ctx, "kafka-bot", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := kept + "," + added; cm.Data["KAFKA_NAMESPACES"] != want {
			t.Errorf("after the upgrade KAFKA_NAMESPACES = %q, want %q", cm.Data["KAFKA_NAMESPACES"], want)
		}
	})

	for i := len(releases) - 1; i >= 0; i-- {
		r := releases[i]
		if out, stderr, ok := r.h.run(t, "uninstall", r.release, "--namespace", r.botNS, "--kubeconfig", kubeconfig); !ok {
			t.Fatalf("%s uninstall failed:\n%s%s", r.h.name, out, stderr)
		}
		ns, err := env.Clientset.CoreV1().Namespaces().Get(ctx, r.botNS, metav1.GetOptions{})
		if err != nil || ns.DeletionTimestamp != nil {
			t.Errorf("helm uninstall removed the release namespace %s (it must be kept: helm.sh/resource-policy keep): %v", r.botNS, err)
		}
	}
}

// checkGrantsEveryUse asks the API server, as the bot, whether each request
// of botuses.All is allowed in each Kafka namespace (or the bot's own).
func checkGrantsEveryUse(ctx context.Context, t *testing.T, bot kubernetes.Interface, kafka []string, botNS string) {
	t.Helper()
	review := func(ctx context.Context, attrs *authorizationv1.ResourceAttributes) (bool, error) {
		got, err := bot.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed, nil
	}
	// The RBAC authorizer works from a watch cache: wait until the fresh
	// bindings show, then ask once per request.
	for _, ns := range append(slices.Clone(kafka), botNS) {
		attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Group: "coordination.k8s.io", Resource: "leases", Verb: "get"}
		testenv.WaitFor(t, "the release's RoleBinding in "+ns+" to take effect", func(ctx context.Context) (bool, error) { return review(ctx, attrs) })
	}
	for _, u := range botuses.All {
		namespaces := kafka
		if u.Scope == botuses.InBot {
			namespaces = []string{botNS}
		}
		resource, sub, _ := strings.Cut(u.Resource, "/")
		for _, ns := range namespaces {
			for _, verb := range u.Verbs {
				attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Group: u.Group, Resource: resource, Subresource: sub, Verb: verb}
				if resource == "configmaps" && verb != "create" {
					attrs.Name = botuses.StateConfigMap // granted by name only
				}
				allowed, err := review(ctx, attrs)
				if err != nil {
					t.Fatal(err)
				}
				if !allowed {
					t.Errorf("the chart's RBAC does not allow %s %s in %s (needed by %s)", verb, u.Resource, ns, u.UsedBy)
				}
			}
		}
	}
}

// grant is one (namespace, API group, resource, verb) a Role allows.
type grant struct{ namespace, group, resource, verb string }

// checkGrantsNothingElse lists the release's installed Roles, RoleBindings
// and cluster-wide bindings and fails on any permission no request of
// botuses.All needs, and on any binding to someone other than the bot.
func checkGrantsNothingElse(ctx context.Context, t *testing.T, admin kubernetes.Interface, release string, kafka []string, botNS, botUser string) {
	t.Helper()
	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release}
	used := map[grant]bool{}
	for _, u := range botuses.All {
		namespaces := kafka
		if u.Scope == botuses.InBot {
			namespaces = []string{botNS}
		}
		for _, ns := range namespaces {
			for _, v := range u.Verbs {
				used[grant{ns, u.Group, u.Resource, v}] = true
			}
		}
	}
	roles, err := admin.RbacV1().Roles("").List(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	granted := map[grant]bool{}
	for _, role := range roles.Items {
		for _, rule := range role.Rules {
			if len(rule.NonResourceURLs) > 0 {
				t.Errorf("Role %s/%s grants nonResourceURLs %v", role.Namespace, role.Name, rule.NonResourceURLs)
			}
			if len(rule.ResourceNames) > 0 && !slices.Equal(rule.ResourceNames, []string{botuses.StateConfigMap}) {
				t.Errorf("Role %s/%s names %v: the only named resource the bot needs is %s", role.Namespace, role.Name, rule.ResourceNames, botuses.StateConfigMap)
			}
			for _, g := range rule.APIGroups {
				for _, r := range rule.Resources {
					for _, v := range rule.Verbs {
						p := grant{role.Namespace, g, r, v}
						granted[p] = true
						if !used[p] {
							t.Errorf("Role %s/%s grants %s %s (group %q), which the bot never requests there", role.Namespace, role.Name, v, r, g)
						}
						if r == "configmaps" && v != "create" && len(rule.ResourceNames) == 0 {
							t.Errorf("Role %s/%s grants %s on every ConfigMap: only %s", role.Namespace, role.Name, v, botuses.StateConfigMap)
						}
					}
				}
			}
		}
	}
	for p := range used {
		if !granted[p] {
			t.Errorf("no Role of release %s grants %s %s (group %q) in %s", release, p.verb, p.resource, p.group, p.namespace)
		}
	}
	bindings, err := admin.RbacV1().RoleBindings("").List(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(kafka) + 1; len(bindings.Items) != want {
		t.Errorf("release %s installed %d RoleBindings, want %d (one per Kafka namespace and one in its own)", release, len(bindings.Items), want)
	}
	ns, name, _ := strings.Cut(strings.TrimPrefix(botUser, "system:serviceaccount:"), ":")
	for _, rb := range bindings.Items {
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
		if rb.RoleRef.Kind != "Role" || !slices.Equal(rb.Subjects, want) {
			t.Errorf("RoleBinding %s/%s binds %s %s to %v, want a Role bound to %v only", rb.Namespace, rb.Name, rb.RoleRef.Kind, rb.RoleRef.Name, rb.Subjects, want)
		}
	}
	crbs, err := admin.RbacV1().ClusterRoleBindings().List(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	crs, err := admin.RbacV1().ClusterRoles().List(ctx, selector)
	if err != nil {
		t.Fatal(err)
	}
	if len(crbs.Items)+len(crs.Items) > 0 {
		t.Errorf("release %s installed cluster-wide RBAC (%d ClusterRoles, %d ClusterRoleBindings)", release, len(crs.Items), len(crbs.Items))
	}
}

// checkPolicyBindsTheRelease runs the bot's own admission self-check as the
// release's ServiceAccount in each Kafka namespace (it must find the policy
// enforced), then the same check as another ServiceAccount of the release
// namespace given the same RBAC (the policy must not apply to it).
func checkPolicyBindsTheRelease(ctx context.Context, t *testing.T, env *testenv.Env, bot kubernetes.Interface, kafka []string, botNS string) {
	t.Helper()
	client := kube.New(bot, kube.Options{Namespaces: kafka})
	for _, ns := range kafka {
		// The API server compiles a new policy and binding asynchronously.
		var last kube.AdmissionCheck
		for deadline := time.Now().Add(testenv.WaitTimeout); ; time.Sleep(200 * time.Millisecond) {
			if last = client.CheckAdmission(ctx, ns); last.Enforced() || time.Now().After(deadline) {
				break
			}
		}
		if !last.Enforced() {
			t.Errorf("admission self-check in %s as the release's ServiceAccount, after %s: %s (%s)", ns, testenv.WaitTimeout, last, last.Detail)
		}
	}

	// Another ServiceAccount in the release namespace, bound to the same Role.
	const other = "not-the-bot"
	if _, err := env.Clientset.CoreV1().ServiceAccounts(botNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := kafka[0]
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "not-the-bot", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kafka-bot"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: other, Namespace: botNS}},
	}
	if _, err := env.Clientset.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	otherCS, err := kubernetes.NewForConfig(env.ImpersonatedConfig(botNS + "/" + other))
	if err != nil {
		t.Fatal(err)
	}
	otherClient := kube.New(otherCS, kube.Options{Namespaces: kafka})
	var last kube.AdmissionCheck
	testenv.WaitFor(t, "the other ServiceAccount's RoleBinding to take effect", func(ctx context.Context) (bool, error) {
		last = otherClient.CheckAdmission(ctx, ns)
		return last.State != kube.AdmissionNoAccess, nil
	})
	if last.State != kube.AdmissionMissing {
		t.Errorf("the probe pod of ServiceAccount %s/%s (not the release's) was not simply admitted: %s; the policy must apply to the annotated ServiceAccount only", botNS, other, last)
	}
}

// writeKubeconfig writes cfg (the admin's) as a kubeconfig file for Helm.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// readmeHelmInstall is the README's install command; the test above runs
// the same flags (--namespace, --take-ownership, a values file).
const readmeHelmInstall = "helm install kafkabot deploy/helm/kafkabot --namespace kafka-bot --take-ownership \\\n" +
	"     -f deploy/helm/examples/bitnami.yaml --set image.digest=sha256:<digest>"

// TestREADMEHelmInstallIsTheTestedOne: the README shows the install command
// TestChartInstallsWhatTheBotNeeds runs, with an example values file the
// chart tests render.
func TestREADMEHelmInstallIsTheTestedOne(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), readmeHelmInstall) {
		t.Errorf("README.md does not show the tested helm install:\n%s", readmeHelmInstall)
	}
	for _, f := range []string{"deploy/helm/examples/bitnami.yaml", "deploy/helm/examples/strimzi.yaml"} {
		if !strings.Contains(string(readme), f) {
			t.Errorf("README.md does not point at the values example %s", f)
		}
	}
}
