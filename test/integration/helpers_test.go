// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func mustQuantity(t *testing.T, s string) *resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return &q
}
