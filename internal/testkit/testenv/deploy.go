// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Names fixed by deploy/.
const (
	// BotNamespace is the bot's own namespace.
	BotNamespace = "kafka-bot"
	// BotServiceAccount is the ServiceAccount the bot runs as, in BotNamespace.
	BotServiceAccount = "kafka-bot"
	// KafkaNamespacePlaceholder is the namespace deploy/ writes the
	// per-Kafka-namespace Role and RoleBinding for.
	KafkaNamespacePlaceholder = "kafka"
)

// appliedKinds are the kinds of deploy/ the harness installs: identity,
// authorization, admission and the debug pods' network isolation.
// Workloads (the bot's Deployment) and secret
// templates are left out; the tests run the bot in-process.
var appliedKinds = []string{
	"Namespace", "ServiceAccount",
	"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
	"NetworkPolicy",
}

// Manifests are the objects of deploy/ that the harness installs.
type Manifests struct {
	// Shared are installed once per API server: cluster-scoped objects and
	// everything outside the placeholder Kafka namespace (the bot's
	// namespace, ServiceAccount and own Role).
	Shared []*unstructured.Unstructured
	// PerKafkaNamespace are written for KafkaNamespacePlaceholder and are
	// installed into every Kafka namespace a test creates.
	PerKafkaNamespace []*unstructured.Unstructured
}

type kustomization struct {
	Resources []string `json:"resources"`
}

// LoadManifests reads the files listed in deploy/kustomization.yaml under
// repoRoot and keeps the kinds the harness installs.
func LoadManifests(repoRoot string) (*Manifests, error) {
	deployDir := filepath.Join(repoRoot, "deploy", "base")
	data, err := os.ReadFile(filepath.Join(deployDir, "kustomization.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading deploy/base/kustomization.yaml: %w", err)
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("parsing deploy/base/kustomization.yaml: %w", err)
	}
	m := &Manifests{}
	for _, res := range k.Resources {
		path := filepath.Join(deployDir, res)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading deploy resource %s: %w", res, err)
		}
		objs, err := DecodeManifests(data)
		if err != nil {
			return nil, fmt.Errorf("deploy resource %s: %w", res, err)
		}
		for _, obj := range objs {
			if !slices.Contains(appliedKinds, obj.GetKind()) {
				continue
			}
			if obj.GetNamespace() == KafkaNamespacePlaceholder {
				m.PerKafkaNamespace = append(m.PerKafkaNamespace, obj)
			} else {
				m.Shared = append(m.Shared, obj)
			}
		}
	}
	if len(m.PerKafkaNamespace) == 0 {
		return nil, fmt.Errorf("deploy/: no objects for the placeholder Kafka namespace %q", KafkaNamespacePlaceholder)
	}
	return m, nil
}

// ForKafkaNamespace returns copies of the per-Kafka-namespace objects moved
// into namespace ns.
func (m *Manifests) ForKafkaNamespace(ns string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(m.PerKafkaNamespace))
	for _, obj := range m.PerKafkaNamespace {
		c := obj.DeepCopy()
		c.SetNamespace(ns)
		out = append(out, c)
	}
	return out
}

// All returns every installed object as it is written in deploy/ (the
// per-Kafka-namespace ones in the placeholder namespace).
func (m *Manifests) All() []*unstructured.Unstructured {
	return append(slices.Clone(m.Shared), m.PerKafkaNamespace...)
}

// ParamsLabel marks the bot's Namespace as the admission policy's
// parameters (deploy/base/admission-policy.yaml).
const ParamsLabel = "kafkabot.io/bot-namespace"

// ServiceAccountAnnotation names the bot's ServiceAccount on its Namespace.
const ServiceAccountAnnotation = "kafkabot.io/service-account"

// ForBot returns copies of the bot's own namespaced objects and its
// Namespace (not the cluster-scoped policy and binding, which name no
// identity and are shared) for a bot installed as
// namespace/serviceAccount, as an installer who chose those names would
// render deploy/. With params false the Namespace lacks ParamsLabel: an
// install that forgot the policy's parameters.
func (m *Manifests) ForBot(namespace, serviceAccount string, params bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, obj := range m.Shared {
		c := obj.DeepCopy()
		switch {
		case c.GetKind() == "Namespace":
			c.SetName(namespace)
			labels := c.GetLabels()
			if !params {
				delete(labels, ParamsLabel)
			}
			c.SetLabels(labels)
			annotations := c.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[ServiceAccountAnnotation] = serviceAccount
			c.SetAnnotations(annotations)
		case c.GetNamespace() == "":
			continue // the policy and its binding
		default:
			c.SetNamespace(namespace)
			if c.GetKind() == "ServiceAccount" {
				c.SetName(serviceAccount)
			}
			if err := rebindSubjects(c, namespace, serviceAccount); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ForKafkaNamespaceOf is ForKafkaNamespace for a bot installed as
// botNamespace/serviceAccount: the RoleBindings name that ServiceAccount.
func (m *Manifests) ForKafkaNamespaceOf(ns, botNamespace, serviceAccount string) ([]*unstructured.Unstructured, error) {
	out := m.ForKafkaNamespace(ns)
	for _, c := range out {
		if err := rebindSubjects(c, botNamespace, serviceAccount); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rebindSubjects points a RoleBinding's ServiceAccount subjects at
// namespace/serviceAccount.
func rebindSubjects(obj *unstructured.Unstructured, namespace, serviceAccount string) error {
	if obj.GetKind() != "RoleBinding" {
		return nil
	}
	subjects, _, err := unstructured.NestedSlice(obj.Object, "subjects")
	if err != nil {
		return fmt.Errorf("RoleBinding %s: %w", obj.GetName(), err)
	}
	for i, s := range subjects {
		sub, ok := s.(map[string]any)
		if !ok || sub["kind"] != "ServiceAccount" {
			continue
		}
		sub["name"], sub["namespace"] = serviceAccount, namespace
		subjects[i] = sub
	}
	return unstructured.SetNestedSlice(obj.Object, subjects, "subjects")
}
