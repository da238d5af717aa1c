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
// authorization and admission. Workloads (the bot's Deployment) and secret
// templates are left out; the tests run the bot in-process.
var appliedKinds = []string{
	"Namespace", "ServiceAccount",
	"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
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
