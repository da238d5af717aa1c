// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestDeployBaseAcceptedByTheAPIServer applies the whole `kubectl kustomize
// deploy/` output (Deployment, ConfigMap, PDB, RBAC, admission policy) to
// the real apiserver, which validates every field, as `kubectl apply -k
// deploy/` would on a cluster whose Kafka namespace is "kafka".
func TestDeployBaseAcceptedByTheAPIServer(t *testing.T) {
	env := testenv.Start(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), root+"/deploy")
	if err != nil {
		t.Fatalf("kustomize build deploy/: %v", err)
	}
	manifests, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	env.Namespace(t, testenv.KafkaNamespacePlaceholder, nil)
	env.Apply(t, manifests)
}
