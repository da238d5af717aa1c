// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/config"
)

// SlackScopes are the bot token scopes deploy/slack-app-manifest.yaml asks
// for and `bot doctor` requires: chat:write and commands for the bot,
// channels:read and groups:read for conversations.info, which tells the
// doctor whether the bot is a member of each configured channel.
var SlackScopes = []string{"chat:write", "commands", "channels:read", "groups:read"}

// manifestFix is what to do about a Slack app that lacks a scope.
const manifestFix = "add the scopes of deploy/slack-app-manifest.yaml to the Slack app (OAuth & Permissions) and reinstall it to the workspace; the bot token stays the same"

// slackTimeout bounds each Slack Web API call.
const slackTimeout = 15 * time.Second

// slackAnswer is the part of a Web API answer the doctor reads.
type slackAnswer struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Team    string `json:"team"`
	UserID  string `json:"user_id"`
	User    string `json:"user"`
	Channel struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		IsMember   bool   `json:"is_member"`
		IsArchived bool   `json:"is_archived"`
	} `json:"channel"`
	scopes []string // X-OAuth-Scopes; nil when the header is absent
}

// call posts one Web API method with token and decodes the answer. The
// token is never part of an error.
func call(ctx context.Context, hc *http.Client, apiURL, method, token string, form url.Values) (slackAnswer, error) {
	var a slackAnswer
	ctx, cancel := context.WithTimeout(ctx, slackTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+method, strings.NewReader(form.Encode()))
	if err != nil {
		return a, fmt.Errorf("%s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return a, fmt.Errorf("%s: cannot reach Slack at %s: %w", method, apiURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return a, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return a, fmt.Errorf("%s: Slack answered HTTP %d", method, resp.StatusCode)
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return a, fmt.Errorf("%s: the answer is not Slack's JSON: %w", method, err)
	}
	if h, ok := resp.Header["X-Oauth-Scopes"]; ok {
		a.scopes = []string{}
		for _, s := range strings.Split(strings.Join(h, ","), ",") {
			if s = strings.TrimSpace(s); s != "" {
				a.scopes = append(a.scopes, s)
			}
		}
	}
	return a, nil
}

// checkSlack checks both tokens, the bot token's scopes and the bot's
// membership of every configured channel.
func checkSlack(ctx context.Context, cfg *config.Config, clusters []Cluster, hc *http.Client) []Result {
	if hc == nil {
		hc = http.DefaultClient
	}
	bad := func(msg, fix string) Result { return Result{Area: "slack", Severity: Problem, Message: msg, Fix: fix} }
	var out []Result
	if cfg.SlackAppToken != "" {
		a, err := call(ctx, hc, cfg.SlackAPIURL, "apps.connections.open", cfg.SlackAppToken, url.Values{})
		switch {
		case err != nil:
			out = append(out, bad("SLACK_APP_TOKEN could not be checked: "+err.Error(), "check SLACK_API_URL and the network path to Slack (HTTPS egress)"))
		case !a.OK:
			out = append(out, bad("Slack refuses SLACK_APP_TOKEN for Socket Mode: "+a.Error,
				"generate an app-level token with connections:write (Basic Information -> App-Level Tokens) and put it in the bot's Secret"))
		default:
			out = append(out, Result{Area: "slack", Severity: OK, Message: "SLACK_APP_TOKEN opens Socket Mode connections"})
		}
	}
	if cfg.SlackBotToken == "" {
		return out // the configuration check reported it
	}
	a, err := call(ctx, hc, cfg.SlackAPIURL, "auth.test", cfg.SlackBotToken, url.Values{})
	switch {
	case err != nil:
		return append(out, bad("SLACK_BOT_TOKEN could not be checked: "+err.Error(), "check SLACK_API_URL and the network path to Slack (HTTPS egress)"))
	case !a.OK:
		return append(out, bad("Slack refuses SLACK_BOT_TOKEN: "+a.Error,
			"copy the Bot User OAuth Token (xoxb-...) of the installed app (OAuth & Permissions) into the bot's Secret"))
	}
	out = append(out, Result{Area: "slack", Severity: OK, Message: fmt.Sprintf("SLACK_BOT_TOKEN is the bot %s (%s) of workspace %s", a.User, a.UserID, a.Team)})
	if a.scopes == nil {
		out = append(out, Result{Area: "slack", Severity: Note, Message: "Slack did not report the bot token's scopes (no X-OAuth-Scopes header); they are not checked"})
	} else {
		var missing []string
		for _, s := range SlackScopes {
			if !slices.Contains(a.scopes, s) {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			out = append(out, bad("the bot token lacks the scopes "+strings.Join(missing, ", ")+" (it has "+strings.Join(a.scopes, ", ")+")", manifestFix))
		} else {
			out = append(out, Result{Area: "slack", Severity: OK, Message: "the bot token has every scope of the manifest (" + strings.Join(SlackScopes, ", ") + ")"})
		}
	}
	for _, ch := range configuredChannels(cfg, clusters) {
		out = append(out, checkChannel(ctx, hc, cfg, ch))
	}
	return out
}

// channelUse is a configured channel and the settings that name it.
type channelUse struct {
	id    string
	where []string
}

// configuredChannels lists ALERT_CHANNEL, APPROVAL_CHANNELS and each
// cluster's approvalChannels, once each, in that order.
func configuredChannels(cfg *config.Config, clusters []Cluster) []channelUse {
	var out []channelUse
	add := func(id, where string) {
		for i := range out {
			if out[i].id == id {
				out[i].where = append(out[i].where, where)
				return
			}
		}
		out = append(out, channelUse{id: id, where: []string{where}})
	}
	if cfg.AlertChannel != "" {
		add(cfg.AlertChannel, "ALERT_CHANNEL")
	}
	for _, ch := range cfg.ApprovalChannels {
		add(ch, "APPROVAL_CHANNELS")
	}
	for _, c := range clusters {
		for _, ch := range c.ApprovalChannels {
			add(ch, "CLUSTERS_FILE "+c.Name+" approvalChannels")
		}
	}
	return out
}

// checkChannel says whether the bot is a member of one channel.
func checkChannel(ctx context.Context, hc *http.Client, cfg *config.Config, ch channelUse) Result {
	where := strings.Join(ch.where, ", ")
	a, err := call(ctx, hc, cfg.SlackAPIURL, "conversations.info", cfg.SlackBotToken, url.Values{"channel": {ch.id}})
	bad := func(msg, fix string) Result { return Result{Area: "slack", Severity: Problem, Message: msg, Fix: fix} }
	switch {
	case err != nil:
		return bad("channel "+ch.id+" ("+where+") could not be checked: "+err.Error(), "check the network path to Slack")
	case a.Error == "channel_not_found":
		return bad("channel "+ch.id+" ("+where+") does not exist, or is private and the bot is not in it",
			"check the ID (channel details -> About, at the bottom), or /invite the bot to that private channel")
	case a.Error == "missing_scope":
		return bad("channel "+ch.id+" ("+where+"): the bot's membership cannot be checked without channels:read and groups:read", manifestFix)
	case !a.OK:
		return bad("channel "+ch.id+" ("+where+"): Slack answered "+a.Error, "check the channel ID")
	case a.Channel.IsArchived:
		return bad(fmt.Sprintf("channel #%s (%s, %s) is archived: nothing can be posted there", a.Channel.Name, ch.id, where),
			"unarchive it, or configure another channel")
	case !a.Channel.IsMember:
		return bad(fmt.Sprintf("the bot is not a member of #%s (%s, %s): its posts there fail with not_in_channel", a.Channel.Name, ch.id, where),
			"in Slack, run /invite @<the bot's name> in #"+a.Channel.Name)
	}
	return Result{Area: "slack", Severity: OK, Message: fmt.Sprintf("the bot is a member of #%s (%s, %s)", a.Channel.Name, ch.id, where)}
}
