// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package testkit is the folder of the test and demo kit: what the tests,
// the benchmark report (test/bench/benchreport) and `bot demo` build the
// bot's world from, and none of which ships in `bot serve`.
//
//   - slackemu: a Slack Socket Mode and Web API emulator;
//   - kubesim: a kubelet stand-in (pod status, container logs, debug pods'
//     script run under busybox);
//   - fakeapi: client-go's fake clientset made to act like an API server;
//   - testenv: a real kube-apiserver and etcd (envtest) with deploy/'s RBAC,
//     and API servers that hang or refuse;
//   - benchutil: request-counting, latency-injecting clientset views for the
//     benchmark report;
//   - hostile: what a stolen bot token tries, and the debug pods it must
//     still create;
//   - demo: `bot demo`, the seed incident on the fake cluster, the kubelet
//     stand-in and the emulator around the production wiring.
//
// Product code (cmd/ and internal/ outside this folder) imports none of it,
// in no build configuration: TestProductDoesNotImportTheKit reads every
// non-test Go file of the product and fails on such an import. The one
// exception is cmd/bot/demo.go (build tag !nodemo), which wires
// internal/testkit/demo in as `bot demo`; the shipped build (-tags nodemo)
// leaves that file, and with it the whole kit, out.
package testkit
