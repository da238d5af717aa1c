// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package slackview renders the bot's Slack messages: views in (a
// diagnosis, an alert, a repair's progress and outcome, the pod list),
// Block Kit blocks and a plain-text fallback out. It is pure: no Slack
// client, no Kubernetes, no clock of its own (every time is passed in), so
// a message change touches this package only and its golden files show it.
//
// Layout rules every view keeps (issue 19):
//   - a top-level message reads in five seconds: a header
//     "cluster/namespace/pod: what is wrong" with an emoji that follows the
//     pod's real state (never 🟢 for a pod that is not Ready), one line of
//     cause, one line of the decision asked of the reader, a compact fields
//     block, then the buttons; everything else (evidence, offsets triage,
//     steps, UID) goes into the first thread reply (DiagnosisDetails);
//   - people are mentions (<@U…>), never raw IDs; times are Slack date
//     tokens, so each reader sees their own time zone;
//   - text from pods, logs and users is escaped: it never becomes a
//     mention, link or @channel.
package slackview
