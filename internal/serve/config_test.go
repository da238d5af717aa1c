// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package serve

import "k8s.io/client-go/rest"

// testConfig reaches no server (New never contacts it in these tests).
func testConfig() *rest.Config { return &rest.Config{Host: "https://127.0.0.1:1"} }
