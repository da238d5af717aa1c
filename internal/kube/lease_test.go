// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestRepairLeaseName(t *testing.T) {
	long := strings.Repeat("very-long-kafka-cluster-name-", 5) + "broker-0"
	tests := []struct {
		pod  string
		want string
	}{
		{"foobar-kafka-broker-0", "kafkabot-repair-foobar-kafka-broker-0"},
		{"Broker.0", ""}, // sanitised: hashed
		{long, ""},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		got := RepairLeaseName(tc.pod)
		if tc.want != "" && got != tc.want {
			t.Errorf("RepairLeaseName(%q) = %q, want %q", tc.pod, got, tc.want)
		}
		if len(got) > 63 || len(validation.IsDNS1123Label(got)) > 0 {
			t.Errorf("RepairLeaseName(%q) = %q is not a DNS label", tc.pod, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q share lease %q", tc.pod, other, got)
		}
		seen[got] = tc.pod
	}
	if RepairLeaseName(long) == RepairLeaseName(long+"1") {
		t.Error("two long pod names share a lease")
	}
}
