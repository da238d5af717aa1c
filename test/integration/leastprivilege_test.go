// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv/botuses"
)

// Where a permission applies: every Kafka namespace, or the bot's own.
const (
	inKafka = testenv.KafkaNamespacePlaceholder
	inBot   = testenv.BotNamespace
)

// permission is one (namespace, API group, resource[/subresource], verb).
type permission struct {
	namespace, group, resource, verb string
}

func (p permission) String() string {
	g := p.group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s.%s in %s", p.verb, p.resource, g, p.namespace)
}

// use is a set of requests the bot's code makes, and where.
type use struct {
	namespace, group, resource string
	verbs                      []string
	// usedBy names the code that makes these requests.
	usedBy string
}

// botUses is every request the bot's code makes (botuses.All, shared with
// the Helm chart's tests in deploy/), with its scope as a namespace
// placeholder. It is the contract between the code and deploy/base/rbac.yaml:
// TestBotUsesAreWhatTheCodeCalls derives the (resource, verb) pairs from the
// code's calls and fails unless they are exactly these,
// TestDeployGrantsEveryUse proves each is granted, TestDeployGrantsNothingElse
// that nothing more is. When the code starts making a new kind of request,
// add it to botuses.All and to deploy/base/rbac.yaml.
var botUses = func() []use {
	var out []use
	for _, u := range botuses.All {
		ns := inKafka
		if u.Scope == botuses.InBot {
			ns = inBot
		}
		out = append(out, use{ns, u.Group, u.Resource, u.Verbs, u.UsedBy})
	}
	return out
}()

// stateConfigMap is the one ConfigMap the bot reads and writes.
const stateConfigMap = botuses.StateConfigMap

func usedPermissions() []permission {
	var out []permission
	for _, u := range botUses {
		for _, v := range u.verbs {
			out = append(out, permission{u.namespace, u.group, u.resource, v})
		}
	}
	return out
}

// TestDeployGrantsEveryUse asks the API server, as the bot, whether each
// request in botUses is allowed (SelfSubjectAccessReview). A permission
// removed from deploy/base/rbac.yaml fails here, naming the request and the code
// that needs it.
func TestDeployGrantsEveryUse(t *testing.T) {
	env := testenv.Start(t)
	ctx := testContext(t)
	kafka := env.KafkaNamespace(t, "kafka-least-privilege", nil)
	bot, err := kubernetes.NewForConfig(env.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	// The reviews below are only meaningful if the API server sees the bot.
	who, err := bot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if who.Status.UserInfo.Username != testenv.BotUserName {
		t.Fatalf("requests run as %q, want %q", who.Status.UserInfo.Username, testenv.BotUserName)
	}
	for _, u := range botUses {
		ns := u.namespace
		if ns == inKafka {
			ns = kafka
		}
		for _, verb := range u.verbs {
			p := permission{u.namespace, u.group, u.resource, verb}
			t.Run(p.String(), func(t *testing.T) {
				resource, sub, _ := strings.Cut(u.resource, "/")
				review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: ns, Group: u.group, Resource: resource, Subresource: sub, Verb: verb,
					},
				}}
				if resource == "configmaps" && verb != "create" {
					// Granted for the state ConfigMap only (resourceNames).
					review.Spec.ResourceAttributes.Name = stateConfigMap
				}
				got, err := bot.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if !got.Status.Allowed {
					t.Errorf("deploy/base/rbac.yaml does not allow the bot to %s (needed by %s); reason: %q",
						p, u.usedBy, got.Status.Reason)
				}
			})
		}
	}
}

// TestDeployGrantsNothingElse lists every permission deploy/ grants and
// fails on each one the bot does not use (per botUses), and on any
// cluster-wide grant or wildcard.
func TestDeployGrantsNothingElse(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := testenv.LoadManifests(root)
	if err != nil {
		t.Fatal(err)
	}
	used := usedPermissions()
	var granted []permission
	for _, obj := range manifests.All() {
		switch obj.GetKind() {
		case "ClusterRole", "ClusterRoleBinding":
			t.Errorf("deploy/ has %s %s: the bot needs no cluster-wide permission", obj.GetKind(), obj.GetName())
		case "Role":
			var role rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
				t.Fatalf("decoding Role %s: %v", obj.GetName(), err)
			}
			for _, rule := range role.Rules {
				if len(rule.NonResourceURLs) > 0 {
					t.Errorf("Role %s/%s: rule %v: nonResourceURLs are not covered by this test; extend it", role.Namespace, role.Name, rule)
				}
				if len(rule.ResourceNames) > 0 && !slices.Equal(rule.ResourceNames, []string{stateConfigMap}) {
					t.Errorf("Role %s/%s: rule %v: the only named resource the bot needs is its state ConfigMap %s", role.Namespace, role.Name, rule, stateConfigMap)
				}
				if slices.Contains(rule.Resources, "configmaps") {
					for _, v := range rule.Verbs {
						if v != "create" && !slices.Equal(rule.ResourceNames, []string{stateConfigMap}) {
							t.Errorf("Role %s/%s grants %s on every ConfigMap: only %s, never the bot's settings", role.Namespace, role.Name, v, stateConfigMap)
						}
					}
				}
				for _, g := range rule.APIGroups {
					for _, r := range rule.Resources {
						for _, v := range rule.Verbs {
							granted = append(granted, permission{role.Namespace, g, r, v})
						}
					}
				}
			}
		}
	}
	if len(granted) == 0 {
		t.Fatal("deploy/ grants nothing: the manifests were not read")
	}
	var unused []string
	for _, p := range granted {
		if !slices.Contains(used, p) {
			unused = append(unused, p.String())
		}
	}
	if len(unused) > 0 {
		t.Errorf("deploy/base/rbac.yaml grants permissions the bot does not use (remove them, or add the code's use to botUses):\n  %s",
			strings.Join(unused, "\n  "))
	}
	for _, p := range used {
		if !slices.Contains(granted, p) {
			t.Errorf("botUses lists %s but deploy/base/rbac.yaml does not grant it", p)
		}
	}
}

// TestBotRoleBindingsNameOnlyTheBot checks every RoleBinding in deploy/
// binds deploy/'s Roles to the bot's ServiceAccount and nothing else.
func TestBotRoleBindingsNameOnlyTheBot(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := testenv.LoadManifests(root)
	if err != nil {
		t.Fatal(err)
	}
	var bindings int
	for _, obj := range manifests.All() {
		if obj.GetKind() != "RoleBinding" {
			continue
		}
		bindings++
		var rb rbacv1.RoleBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &rb); err != nil {
			t.Fatal(err)
		}
		if rb.RoleRef.Kind != "Role" {
			t.Errorf("RoleBinding %s/%s refers to a %s: only namespaced Roles are expected", rb.Namespace, rb.Name, rb.RoleRef.Kind)
		}
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: testenv.BotServiceAccount, Namespace: testenv.BotNamespace}}
		if !slices.Equal(rb.Subjects, want) {
			t.Errorf("RoleBinding %s/%s subjects = %v, want only %v", rb.Namespace, rb.Name, rb.Subjects, want)
		}
	}
	if bindings < 2 {
		t.Errorf("deploy/ has %d RoleBindings, want one per Kafka namespace plus one for the bot's namespace", bindings)
	}
}
