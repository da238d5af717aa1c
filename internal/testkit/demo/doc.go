// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package demo is `bot demo`: the seed incident played end to end on one
// machine, with the production code paths in the middle.
//
// The world is in process: client-go's fake clientset (given UIDs,
// creation times and Pending phases as an API server gives them, and a
// pods/log endpoint answered from the kubelet stand-in's log store) driven
// by internal/testkit/kubesim, which runs the bot's debug pods for real against
// directories laid out like the Bitnami chart's volume; and the Slack
// emulator (internal/testkit/slackemu). The bot in between is built by the same
// constructors `bot serve` calls: kube.New, recovery.NewRepairer,
// handlers.New, connected over a real WebSocket with slack-go's Socket
// Mode client; and, as with ALERT_CHANNEL set, the health sweep
// (sweep.New with alertnotify.New as its notifier; both speak the
// shared internal/alert types), leading on a Lease in the fake cluster. The sweep
// runs on a fake clock, which the story steps over the resolve grace.
//
// Run plays the story and checks it against the cluster and Slack
// themselves (the alert posted and on record, broker recreated and Ready,
// metadata log in the backup at the volume root, repair Lease done, the
// alert resolved), so a story that only looks right fails.
package demo
