// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// leakyRepairer fails with an error that a careless layer below might have
// built from its configuration: the test makes sure none of it holds a
// secret by construction, so a secret found later came from the bot.
type leakyRepairer struct{ err error }

func (r leakyRepairer) Repair(ctx context.Context, _ recovery.Request, rep recovery.Reporter) recovery.Summary {
	rep.Report(ctx, recovery.Progress{Step: "Re-check the safety gates", Status: recovery.StepStarted})
	rep.Report(ctx, recovery.Progress{Step: "Re-check the safety gates", Status: recovery.StepFailed, Detail: r.err.Error()})
	s := recovery.Summary{Outcome: recovery.OutcomeFailed, Text: "stopped: " + r.err.Error()}
	rep.Finish(ctx, s)
	return s
}

// TestFaultSecretsNeverLeak runs a whole scenario through the bot with
// distinctive tokens and approval secret (a diagnosis, a refused click by a
// stranger, an approval whose repair fails with an API error, a
// rate-limited and a 5xx Web API call, a socket drop) and then scans every
// output: the bot's log, every message, thread reply and ephemeral the
// emulator stored, every Web API request form (the token field is redacted
// by the emulator) and the button values' decoded payload. None may hold
// the app token, the bot token or the approval secret.
func TestFaultSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const (
		appToken = "xapp-placeholder-app-token-do-not-leak"
		botToken = "xoxb-fake-4242-bottokenvaluedonotleak"
	)
	secret := []byte("approval-secret-value-do-not-leak-0123456789")
	emu, err := slackemu.New(slackemu.Options{AppToken: appToken, BotToken: botToken})
	if err != nil {
		t.Fatal(err)
	}
	h := startBotOn(t, emu, func(o *Options) {
		o.AppToken, o.BotToken, o.ApprovalSecret = appToken, botToken, secret
		o.Clusters[0].Repairer = leakyRepairer{err: errors.New(`re-reading kafka/foobar-kafka-broker-0: Internal error occurred: etcdserver: leader changed`)}
	})

	m := h.diagnose()
	h.click(m, slackview.ActionApprove, stranger)
	h.ephemeral(channel, stranger, "not allowed to approve")
	h.emu.InjectFault("chat.postMessage", slackemu.Fault{Status: 429, RetryAfter: 1})
	h.emu.InjectFault("chat.update", slackemu.Fault{Status: 503})
	opened := h.emu.ConnectionsOpened()
	h.emu.DropConnections()
	h.waitFor("a reconnection", func() bool { return h.emu.ConnectionsOpened() > opened })
	h.click(m, slackview.ActionApprove, approver)
	h.waitFor("the failed repair's summary", func() bool {
		th := h.emu.Thread(channel, m.TS)
		return len(th) > 0 && strings.Contains(th[len(th)-1].Text, "Repair failed")
	})
	h.slash(requester, channel, "diagnose ../etc/passwd")

	var outputs []string
	outputs = append(outputs, "log:"+h.logs.String())
	for _, msg := range h.emu.Messages(channel) {
		outputs = append(outputs, "message:"+msg.Text+string(msg.Blocks))
		for _, r := range h.emu.Thread(channel, msg.TS) {
			outputs = append(outputs, "thread:"+r.Text+string(r.Blocks))
		}
	}
	for _, u := range []string{requester, approver, stranger} {
		for _, e := range h.emu.Ephemerals(channel, u) {
			outputs = append(outputs, "ephemeral:"+e.Text)
		}
	}
	for _, r := range h.emu.Requests() {
		for k, vs := range r.Form {
			if k == "token" {
				continue
			}
			outputs = append(outputs, fmt.Sprintf("request %s %s=%s", r.Method, k, strings.Join(vs, ",")))
		}
	}
	if len(outputs) < 10 {
		t.Fatalf("only %d outputs collected; the scenario did not run", len(outputs))
	}
	for _, s := range []struct{ name, value string }{
		{"app token", appToken}, {"bot token", botToken}, {"approval secret", string(secret)},
		{"bot token body", "bottokenvaluedonotleak"}, {"app token body", "appleveltokenvaluedonotleak"},
	} {
		for _, out := range outputs {
			if strings.Contains(out, s.value) {
				kind, _, _ := strings.Cut(out, ":")
				t.Errorf("the %s appears in a %s output", s.name, kind)
			}
		}
	}
}

// startBotOn is startBot against a given emulator.
func startBotOn(t *testing.T, emu *slackemu.Server, mutate func(*Options)) *harness {
	t.Helper()
	h := startBot(t, func(o *Options) {
		o.APIURL = emu.APIURL()
		mutate(o)
	})
	h.emu = emu
	t.Cleanup(emu.Close)
	return h
}
