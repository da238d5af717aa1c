// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command cri-clean stops and removes every pod sandbox (and so every
// container) a CRI runtime holds, through the CRI API, as the kubelet would:
// StopPodSandbox tears the pod's network down through CNI and kills its
// containers, RemovePodSandbox deletes them and the sandbox's network
// namespace. hack/realnode.sh runs it on teardown, after the kubelet has
// stopped and before containerd stops, so nothing is left running or mounted.
//
//	go run ./cri-clean -endpoint unix:///path/to/containerd.sock
//
// It exits non-zero when a sandbox could not be removed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	endpoint := flag.String("endpoint", "", "CRI endpoint, unix:///path/to/socket")
	timeout := flag.Duration("timeout", 2*time.Minute, "overall deadline")
	flag.Parse()
	if !strings.HasPrefix(*endpoint, "unix://") {
		fmt.Fprintln(os.Stderr, "cri-clean: -endpoint unix:///path is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	n, err := clean(ctx, *endpoint)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-clean: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "cri-clean: removed %d pod sandboxes\n", n)
}

func clean(ctx context.Context, endpoint string) (int, error) {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	resp, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, fmt.Errorf("listing pod sandboxes: %w", err)
	}
	var failed []string
	for _, sb := range resp.Items {
		name := sb.Id
		if m := sb.Metadata; m != nil {
			name = m.Namespace + "/" + m.Name + " (" + sb.Id[:min(12, len(sb.Id))] + ")"
		}
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			failed = append(failed, fmt.Sprintf("stopping %s: %v", name, err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			failed = append(failed, fmt.Sprintf("removing %s: %v", name, err))
			continue
		}
		fmt.Fprintf(os.Stderr, "cri-clean: removed %s\n", name)
	}
	if len(failed) > 0 {
		return len(resp.Items) - len(failed), fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return len(resp.Items), nil
}
