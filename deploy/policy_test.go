// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
)

const policyFile = "base/admission-policy.yaml"

// scriptRegion is the generated part of the policy: the repair script as a
// CEL raw string, indented into a YAML literal block.
var scriptRegion = regexp.MustCompile(`(?s)(    # BEGIN generated from internal/recovery/repair\.sh[^\n]*\n    - name: script\n      expression: \|-\n).*?(\n    # END generated)`)

// scriptBlock renders script as the body of the "script" variable.
func scriptBlock(script string) string {
	lines := strings.Split("r'''"+script+"'''", "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "        " + l
		}
	}
	return strings.Join(lines, "\n")
}

// TestPolicyPinsTheRepairScript: the admission policy admits a debug pod
// only when its command is the repair script this build embeds. The
// policy carries a copy of it; -update regenerates that copy.
func TestPolicyPinsTheRepairScript(t *testing.T) {
	if strings.Contains(recovery.Script, "'''") {
		t.Fatal("the repair script contains ''' and cannot be a CEL raw string; change the generator")
	}
	data, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !scriptRegion.Match(data) {
		t.Fatalf("%s has no generated script region", policyFile)
	}
	if *update {
		// ReplaceAllFunc: the script's "$" must not be read as a group reference.
		data = scriptRegion.ReplaceAllFunc(data, func(m []byte) []byte {
			sub := scriptRegion.FindSubmatch(m)
			return []byte(string(sub[1]) + scriptBlock(recovery.Script) + string(sub[2]))
		})
		if err := os.WriteFile(policyFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	policy := loadPolicy(t, data)
	want := "r'''" + recovery.Script + "'''"
	var found bool
	for _, v := range policy.Spec.Variables {
		if v.Name == "script" {
			found = true
			if v.Expression != want {
				t.Errorf("the policy's copy of the repair script differs from internal/recovery/repair.sh: run go test ./deploy -update")
			}
		}
	}
	if !found {
		t.Error("the policy has no script variable")
	}
}

// loadPolicy returns the ValidatingAdmissionPolicy of the policy file.
func loadPolicy(t *testing.T, data []byte) admissionv1.ValidatingAdmissionPolicy {
	t.Helper()
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var p admissionv1.ValidatingAdmissionPolicy
		if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
			continue
		}
		if p.Kind == "ValidatingAdmissionPolicy" {
			return p
		}
	}
	t.Fatalf("%s has no ValidatingAdmissionPolicy", policyFile)
	return admissionv1.ValidatingAdmissionPolicy{}
}
