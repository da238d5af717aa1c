// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command pause is the pod sandbox's process for the real-node tests'
// containerd (its CRI sandbox_image): it does nothing until SIGTERM or
// SIGINT, as Kubernetes' pause does.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
