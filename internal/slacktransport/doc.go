// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package slacktransport is how the bot's Slack traffic flows, apart from
// what it says and decides (internal/slackview renders the messages,
// internal/handlers decides what to post):
//
//   - Poster makes the Web API calls: it retries rate-limited and 5xx
//     calls, falls back to plain text when Slack rejects blocks, logs each
//     failure with a hint for the operator, and runs the posts of one
//     thread strictly in order (Enqueue);
//   - JobQueue is the worker pool with a bounded, fair queue in front of
//     it that Slack requests (commands and clicks) wait in;
//   - Messages keeps the live copies of posted messages (Message) that
//     alert resolutions and repair progress rewrite in turn;
//   - LRU is the bounded cache the bot keeps its short memories in (seen
//     envelope IDs, live copies of messages, in-memory decision records).
//
// It names no domain type: no pod, cluster, approval or alert.
package slacktransport
