// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import "testing"

func TestLRUForgetsOldest(t *testing.T) {
	c := NewLRU[string, int](3)
	for i, k := range []string{"a", "b", "c", "d"} {
		if _, added := c.AddIfAbsent(k, i); !added {
			t.Fatalf("%s not added", k)
		}
	}
	if c.Len() != 3 {
		t.Fatalf("len %d", c.Len())
	}
	if v, added := c.AddIfAbsent("b", 9); added || v != 1 {
		t.Errorf("b = %d, added %v; want the stored 1", v, added)
	}
	if _, added := c.AddIfAbsent("a", 0); !added {
		t.Error("a was not forgotten")
	}
}
