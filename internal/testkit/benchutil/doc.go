// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package benchutil holds what the benchmark report (test/bench/benchreport)
// needs around client-go's fake clientset to measure the bot the way a
// cluster would feel it:
//
//   - View: the bot's own clientset over a world's objects (a world is an
//     internal/testkit/fakeapi clientset, which behaves like an API server on
//     creates and updates), with its own
//     request log (so the kubelet stand-in's requests are not counted),
//     bytes metered, an optional delay before every request of the pods,
//     events and claims APIs (slept outside the fake's global lock, so
//     delayed requests overlap as they would on a real API server), and
//     container logs served by a LogServer through the real log-stream path;
//   - GeneratedLog: a container log of any size (1 GiB and more) produced
//     on demand, never held in memory, windowed as the kubelet windows logs.
package benchutil
