// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build realnode

package realnode

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
)

// hostileNS is a second Kafka namespace the bot is bound in, as the header
// of deploy/base/rbac.yaml says (the same Role and RoleBinding), without
// Pod Security enforcement: there the admission policy alone stands
// between a stolen token and the shapes.
const hostileNS = "kafka-hostile"

// TestHostileShapesWithTheBotsRealToken takes the ServiceAccount token the
// kubelet projected into a running bot pod (from the kubelet's root dir on
// the node) and tries every shape of internal/testkit/hostile with it against the
// real API server, with deploy/'s RBAC and admission policy: every shape
// must be refused. Writes are server-side dry runs (admission runs, nothing
// is stored).
//
// Two Kafka namespaces: "kafka", which enforces Pod Security "restricted"
// as the scenarios' brokers need, and hostileNS, bound the same way but
// without Pod Security. In hostileNS each shape must be refused by exactly
// the layer and rule the table names (the policy alone refuses the pod
// shapes). In "kafka", Pod Security may refuse a pod shape first; the test
// reports which layer refused each shape there, and a Pod Security refusal
// counts only because the same shape is refused by the policy's rule in
// hostileNS. The bot's real debug pod must be admitted in both (else the
// shapes would show nothing).
func TestHostileShapesWithTheBotsRealToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	botPod, cfg := botToken(t, ctx)
	bot, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Who the API server says the token is: the bot's ServiceAccount,
	// bound to its pod.
	review, err := bot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the bot's token: %v", err)
	}
	ui := review.Status.UserInfo
	if ui.Username != "system:serviceaccount:"+botNS+":kafka-bot" || !slices.Contains(ui.Extra["authentication.kubernetes.io/pod-name"], botPod.Name) {
		t.Fatalf("the token authenticates as %s (extra %v), want the bot's ServiceAccount bound to pod %s", ui.Username, ui.Extra, botPod.Name)
	}

	bindSecondNamespace(t, ctx)
	broker := env.images[brokerImageName]
	// Per shape and namespace: the layer that refused it, and whether that
	// was the refusal the table expects (layer and rule).
	layers := map[string]map[string]string{}
	expected := map[string]map[string]error{}
	for _, ns := range []string{hostileNS, kafkaNS} {
		c := hostileCluster(t, ctx, bot, ns, broker.Name, broker.ManifestDigest)
		t.Run(ns+"/the bot's own debug pod is admitted", func(t *testing.T) {
			if _, err := bot.CoreV1().Pods(ns).Create(ctx, c.DebugPod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("the bot's real debug pod was refused: %v", err)
			}
		})
		for _, s := range hostile.Shapes() {
			err := s.Try(ctx, c)
			if layers[s.Name] == nil {
				layers[s.Name], expected[s.Name] = map[string]string{}, map[string]error{}
			}
			layers[s.Name][ns], expected[s.Name][ns] = refusedBy(err), s.Check(err)
			t.Run(ns+"/"+s.Name, func(t *testing.T) {
				if ns == kafkaNS && layers[s.Name][ns] == "Pod Security" {
					// Refused before the policy saw it: the policy alone
					// must refuse the same shape where Pod Security is off.
					if e := expected[s.Name][hostileNS]; e != nil {
						t.Errorf("refused by Pod Security here; without it (%s) want refused by %s: %v", hostileNS, s.Layer, e)
					}
					return
				}
				if e := expected[s.Name][ns]; e != nil {
					t.Errorf("want refused by %s: %v", s.Layer, e)
				}
			})
		}
	}
	var psa, policy, rbac int
	var lines []string
	for _, s := range hostile.Shapes() {
		r := layers[s.Name]
		lines = append(lines, fmt.Sprintf("%-16s | %-16s | %s", r[kafkaNS], r[hostileNS], s.Name))
		switch r[kafkaNS] {
		case "Pod Security":
			psa++
		case string(hostile.ByPolicy):
			policy++
		case string(hostile.ByRBAC):
			rbac++
		}
	}
	t.Logf("refused by (%s with Pod Security restricted | %s without) for the %d shapes:\n%s", kafkaNS, hostileNS, len(lines), strings.Join(lines, "\n"))
	t.Logf("in %s: %d refused by Pod Security first, %d by the admission policy, %d by RBAC", kafkaNS, psa, policy, rbac)
}

// refusedBy names the layer that refused err: "Pod Security", the policy,
// RBAC, or what else happened.
func refusedBy(err error) string {
	switch {
	case err == nil:
		return "ADMITTED"
	case hostile.RefusedByPolicy(err):
		return string(hostile.ByPolicy)
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "violates PodSecurity"):
		return "Pod Security"
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot"):
		return string(hostile.ByRBAC)
	}
	return "other: " + err.Error()
}

// botToken returns a Running bot pod and a client configuration with the
// token and CA the kubelet projected into it, read from the kubelet's root
// dir on the node: exactly what the bot's in-cluster client uses.
func botToken(t *testing.T, ctx context.Context) (*corev1.Pod, *rest.Config) {
	t.Helper()
	list, err := env.admin.CoreV1().Pods(botNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=kafkabot"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		// The pod's projected volume with a ServiceAccount token (deploy/
		// mounts one explicitly; an automounted one is kube-api-access-*).
		var dir, tokenPath, caPath string
		for _, v := range p.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					dir, tokenPath = filepath.Join(env.stateDir, "kubelet", "root", "pods", string(p.UID), "volumes", "kubernetes.io~projected", v.Name), src.ServiceAccountToken.Path
				}
				if src.ConfigMap != nil && src.ConfigMap.Name == "kube-root-ca.crt" {
					for _, it := range src.ConfigMap.Items {
						if it.Key == "ca.crt" {
							caPath = it.Path
						}
					}
				}
			}
			if dir != "" {
				break
			}
		}
		if dir == "" || caPath == "" {
			continue
		}
		token, err := os.ReadFile(filepath.Join(dir, tokenPath))
		if err != nil {
			t.Fatalf("reading the token the kubelet projected into %s: %v", p.Name, err)
		}
		claims := tokenClaims(t, string(token))
		t.Logf("the kubelet's projected token of %s: sub %v, aud %v, valid %v, bound to pod %v",
			p.Name, claims["sub"], claims["aud"], time.Duration(num(claims["exp"])-num(claims["iat"]))*time.Second,
			claims["kubernetes.io"].(map[string]any)["pod"])
		return p, &rest.Config{
			Host:            "https://" + env.nodeIP + ":6443",
			BearerToken:     strings.TrimSpace(string(token)),
			TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(dir, caPath)},
			UserAgent:       "realnode-hostile-test",
			// About 150 requests: client-go's default 5 per second would
			// make them take half a minute.
			QPS: 100, Burst: 200,
		}
	}
	t.Fatalf("no running bot pod with a projected token under %s", filepath.Join(env.stateDir, "kubelet", "root", "pods"))
	return nil, nil
}

// tokenClaims decodes a JWT's claims (no verification: the API server
// verifies it when it is used). The token itself is never logged.
func tokenClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		t.Fatal("the projected token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("the projected token's claims: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatalf("the projected token's claims: %v", err)
	}
	if _, ok := claims["kubernetes.io"].(map[string]any); !ok {
		t.Fatal("the projected token carries no kubernetes.io claims (not bound to a pod)")
	}
	return claims
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// bindSecondNamespace creates hostileNS without Pod Security enforcement
// and binds the bot there as deploy/base/rbac.yaml's header says: a copy of
// the Role and RoleBinding "kafka-bot" of the namespace "kafka". Removed
// when the test ends.
func bindSecondNamespace(t *testing.T, ctx context.Context) {
	t.Helper()
	role, err := env.admin.RbacV1().Roles(kafkaNS).Get(ctx, "kafka-bot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	binding, err := env.admin.RbacV1().RoleBindings(kafkaNS).Get(ctx, "kafka-bot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A namespace left Terminating by an earlier run on this cluster must go first.
	if err := waitFor(ctx, 2*time.Minute, func() (bool, error) {
		ns, err := env.admin.CoreV1().Namespaces().Get(ctx, hostileNS, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || (err == nil && ns.DeletionTimestamp == nil), nil
	}); err != nil {
		t.Fatalf("%s is still being deleted: %v", hostileNS, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostileNS}}
	if _, err := env.admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.admin.CoreV1().Namespaces().Delete(context.Background(), hostileNS, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting %s: %v", hostileNS, err)
		}
	})
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: hostileNS, Labels: role.Labels}, Rules: role.Rules}
	if _, err := env.admin.RbacV1().Roles(hostileNS).Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name, Namespace: hostileNS, Labels: binding.Labels},
		RoleRef: binding.RoleRef, Subjects: binding.Subjects}
	if _, err := env.admin.RbacV1().RoleBindings(hostileNS).Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		_, err := env.admin.CoreV1().ServiceAccounts(hostileNS).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("no default ServiceAccount in %s: %v", hostileNS, err)
	}
}

// hostileCluster installs the shapes' targets in ns (removed when the test
// ends) and returns the table's view of it: the bot's real token, and the
// debug pod the bot builds for a Bitnami broker of ns running the broker
// stand-in's image by digest (the repository the install's
// kafkabot.io/debug-image-repositories lists).
func hostileCluster(t *testing.T, ctx context.Context, bot kubernetes.Interface, ns, image, digest string) hostile.Cluster {
	t.Helper()
	l := hostile.Layouts(ns, env.nodeName)[0]
	repo, _, _ := strings.Cut(image, ":")
	l.Broker.Status.ContainerStatuses[0].Image = image
	l.Broker.Status.ContainerStatuses[0].ImageID = repo + "@" + digest
	debug, err := l.DebugPod()
	if err != nil {
		t.Fatal(err)
	}
	if want := repo + "@" + digest; debug.Spec.Containers[0].Image != want {
		t.Fatalf("the debug pod runs %s, want the broker's image %s", debug.Spec.Containers[0].Image, want)
	}
	c := hostile.Cluster{Bot: bot, Namespace: ns, BotNamespace: botNS, SettingsConfigMap: "kafka-bot", DebugPod: debug}
	if err := hostile.Install(ctx, env.admin, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hostile.Uninstall(context.Background(), env.admin, c); err != nil {
			t.Error(err)
		}
	})
	return c
}
