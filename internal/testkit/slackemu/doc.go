// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package slackemu is a local emulator of Slack's Socket Mode and of the parts of the Slack Web API that the
// /kafka bot uses. The real slack-go socketmode client connects to it over a real WebSocket, so tests and
// `bot demo` exercise the same wire protocol the bot meets in production.
//
// A Server listens on 127.0.0.1 (a random port) and serves at once:
//
//	emu, _ := slackemu.New(slackemu.Options{AppToken: "xapp-1-test", BotToken: "xoxb-test"})
//	defer emu.Close()
//	api := slack.New("xoxb-test", slack.OptionAPIURL(emu.APIURL()), slack.OptionAppLevelToken("xapp-1-test"))
//	client := socketmode.New(api)
//
// # What is faithful
//
// The shapes and behaviours below follow Slack's documentation, real captures and the official SDKs' test
// suites (see testdata/SOURCES.md):
//
//   - apps.connections.open takes the app-level token only from "Authorization: Bearer", answers
//     {"ok":true,"url":"ws://…/link/?ticket=…"}, and fails with not_authed / invalid_auth like Slack (slack-go
//     treats invalid_auth as fatal, so RunContext returns it). Using the bot token there, or the app token on a
//     bot method, gives not_allowed_token_type.
//   - The WebSocket accepts any Origin, sends hello first (num_connections, debug_info{host, build_number,
//     approximate_connection_time}, connection_info{app_id}), then WebSocket ping frames every PingInterval
//     (slack-go reconnects after 30 s without a server ping). More than 10 concurrent connections: the extra
//     one gets a disconnect with reason too_many_websockets.
//   - Envelopes are {"envelope_id","payload","type","accepts_response_payload"} with fresh UUIDs; redeliveries
//     carry retry_attempt and retry_reason "timeout". Slash-command payloads have the key set of a real Socket
//     Mode capture (including is_enterprise_install as the string "false"); block_actions payloads embed the
//     message as currently stored, with the action's block_id taken from that message.
//   - Acks {"envelope_id", "payload"?} are recorded with their latency; a missing or late ack (after
//     AckDeadline, 3 s by default) is recorded as a failure. An ack payload of a slash command is shown like
//     Slack shows it: response_type "in_channel" posts to the channel, anything else is an ephemeral message
//     for the invoking user. Ack payloads of interactive envelopes are ignored, as Slack ignores them.
//   - The Web API reads form-encoded requests with the bot token in the "token" form field (or a JSON body with
//     a Bearer token), and answers errors as HTTP 200 {"ok":false,"error":"…"}. Rate limiting is HTTP 429 with
//     an integer Retry-After header (slack-go turns it into *slack.RateLimitedError). Message ts values look
//     like "1503435956.000247" and increase strictly.
//   - chat.postMessage (threads, reply_broadcast, text truncated at 40 000 characters), chat.update (text and
//     blocks replaced, blocks kept when the field is absent, "[]" clears them; message_not_found,
//     cant_update_message, msg_too_long over 4 000 characters), chat.postEphemeral, conversations.info,
//     auth.test; every other method answers unknown_method.
//   - Block Kit is validated against the documented limits (50 blocks, section text 3000, fields 10×2000,
//     header plain_text 150, context 10 elements, actions 25 elements, button text 75 / value 2000 / action_id
//     255 / url 3000, block_id 255, confirm dialog 100/300/30/30, text object types and properties). Violations
//     answer invalid_blocks with "errors" and response_metadata.messages ("[ERROR] … [json-pointer:/blocks/…]"),
//     the shape of real Slack answers; a blocks field that is not a JSON array answers invalid_blocks_format.
//   - response_url (slash commands and clicks) points at the emulator and accepts the documented JSON body
//     (text, blocks, response_type, replace_original, delete_original), up to 5 times.
//
// # What is simplified
//
//   - Envelopes go to the most recently opened connection that has not been sent a disconnect. When no such
//     connection is open they are queued and delivered, in order, on the next connection. Real Slack would
//     deliver to another connection or retry later; queueing keeps tests deterministic.
//   - An envelope whose ack is missing is not redelivered unless Options.RedeliverUnacked is set (Slack
//     retries events_api envelopes; tests call Redeliver explicitly instead).
//   - After a disconnect message the emulator leaves closing the socket to the client, as slack-go does at
//     once; only the connection over the cap is closed by the emulator.
//   - Channels: any id starting with C, G or D exists unless marked with SetChannelMissing; the bot is a member
//     unless SetNotInChannel was called. There are no users, workspaces or permissions beyond that.
//   - Rate limits are not computed from traffic; they are injected with InjectFault, which can also make any
//     method fail with a Slack error code or a 5xx status.
//   - Total block payload size (msg_blocks_too_long) and rich_text/input/image block internals are not
//     checked beyond their type; only the blocks the bot renders are validated in depth.
package slackemu
