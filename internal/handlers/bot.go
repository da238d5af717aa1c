// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package handlers is the bot's Slack interaction logic: the Socket Mode
// event loop, /kafka command parsing, approval decisions and thread
// progress reporting. What it says is rendered by internal/slackview
// (views and words) and sent through internal/slacktransport (the poster,
// the fair job queue). It talks to the cluster, the diagnosis engine and
// the repair executor through the small interfaces below and knows nothing
// of client-go.
package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/diagshare"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// ClusterReader is the bot's read access to the Kafka pods of one
// Kubernetes cluster (*kube.Client satisfies it). Its errors are safe to
// show to the user.
type ClusterReader interface {
	// ResolvePod resolves a possibly short pod name (and optional
	// namespace) to the Kafka pod it means, and returns that pod's status
	// (UID, restart counts) and read, which reads the rest of what its
	// diagnosis needs (claims, events, log tail). Calls close together may
	// share one pod list.
	ResolvePod(ctx context.Context, namespace, name string) (status diagnose.Snapshot, read func(context.Context) (diagnose.Snapshot, error), err error)
	// KafkaPods returns the status of every Kafka pod the bot may read.
	KafkaPods(ctx context.Context) ([]diagnose.Snapshot, error)
}

// Diagnoser turns a snapshot into findings, best first (*diagnose.Engine).
type Diagnoser interface {
	Diagnose(s diagnose.Snapshot) []diagnose.Finding
}

// Repairer runs an approved repair, reporting through rep. It re-checks
// its safety gates, never runs the same ApprovalID twice (across
// replicas), and returns the summary it passed to rep.Finish. If it
// returns without calling Finish, the bot calls Finish with its result.
type Repairer interface {
	Repair(ctx context.Context, req recovery.Request, rep recovery.Reporter) recovery.Summary
}

// Resumer finishes repairs that an earlier process left running.
type Resumer interface {
	Resume(ctx context.Context, newReporter func(channel, threadTS string) recovery.Reporter) error
}

// Options configure a Bot.
type Options struct {
	// AppToken (xapp-…) opens Socket Mode; BotToken (xoxb-…) calls the Web API.
	AppToken string
	BotToken string
	// APIURL is the Web API base URL, ending in "/" (empty: Slack's).
	APIURL string
	// ApprovalSecret signs the approval buttons (at least 32 bytes).
	ApprovalSecret []byte
	// ApprovalTTL is how long Approve stays valid (default 30 minutes).
	ApprovalTTL time.Duration
	// Approvers are the Slack user IDs allowed to approve repairs (of every
	// cluster without its own ClusterOptions.Approvers), silence alerts and
	// end silences.
	Approvers []string
	// AllowSelfApproval lets the person who asked for a diagnosis approve
	// its repair; by default someone else must (FORBID_SELF_APPROVAL).
	AllowSelfApproval bool
	// RequiredApprovals is the number of distinct approvers a repair
	// needs (default 1). With 2, the first Approve is recorded and the
	// message says "1 of 2"; the second starts the repair.
	RequiredApprovals int
	// ApprovalChannels are the channels whose Approve buttons are honoured,
	// besides the alert channel of Alerts (APPROVAL_CHANNELS). An Approve
	// anywhere else (another channel, a DM) is refused.
	ApprovalChannels []string
	// DryRun asks the Repairer to stop before the first write.
	DryRun bool
	// Workers bounds the commands and clicks handled at once (default 8).
	Workers int
	// QueueSize is how many commands and clicks may wait for a worker
	// (default 256; negative: none wait). Only a full queue refuses.
	QueueSize int
	// ShareWindow is how long a finished diagnosis answers new requests
	// for the same pod instance and restart count (default 1 minute;
	// negative: nothing is shared, every request reads the cluster).
	ShareWindow time.Duration

	// Diagnoser turns every cluster's snapshots into findings.
	Diagnoser Diagnoser

	// Logger receives operational and audit logs (default: discard).
	Logger *slog.Logger
	// Clock returns the current time (default time.Now); tests inject one.
	Clock func() time.Time
	// PingInterval is the longest Slack may stay silent before the
	// connection is considered dead (default 30 s, slack-go's).
	PingInterval time.Duration
	// HTTPClient makes the Web API calls (default: a client of its own).
	HTTPClient *http.Client

	// Alerts, when set, is the notifier the health sweep posts through
	// (alertnotify.New); the bot connects it to its poster when Run starts.
	Alerts *alertnotify.Notifier

	// Clusters are the Kubernetes clusters the bot serves, each with its
	// own reader, repairer, decision and escalation records and sweep: at
	// least one. A bot serving one cluster has a list of one, whose name
	// may be empty (its messages then name no cluster).
	Clusters []ClusterOptions
	// LookupTimeout bounds each cluster's part of /kafka status, /kafka
	// silences and a short-name search over several clusters (default
	// DefaultLookupTimeout). A command naming its cluster is bounded by the
	// command's own timeout only.
	LookupTimeout time.Duration
	// BreakerPeriod is how long a cluster that failed or timed out is shown
	// as unreachable, without asking it, by status and short-name searches
	// (default fleet.DefaultBreakerPeriod).
	BreakerPeriod time.Duration
}

// Bounds of the bot's in-memory state and timings.
const (
	seenEnvelopes    = 4096
	ackTimeout       = 2 * time.Second
	commandTimeout   = 90 * time.Second
	defaultWorkers   = 8
	defaultQueueSize = 256
	defaultTTL       = 30 * time.Minute
)

// Bot is the Slack bot. Create it with New and start it with Run.
type Bot struct {
	opts      Options
	log       *slog.Logger
	clock     func() time.Time
	sm        *socketmode.Client
	transport *http.Transport // closed when Run returns; nil with a caller's client
	poster    *slacktransport.Poster
	approvers map[string]bool

	connected atomic.Bool
	started   atomic.Bool

	queue  *slacktransport.JobQueue        // the worker pool and the fair queue in front of it
	shared *diagshare.Sharer[slashRequest] // diagnoses running or recently finished, by pod
	wg     sync.WaitGroup
	seen   *slacktransport.LRU[string, struct{}]
	// clusters are the clusters served, in order and by name.
	clusters *fleet.Members[*member]
	// runCtx is Run's context, for jobs that are owed to a request but
	// were not started by one (set before any job runs).
	runCtx context.Context
	// workspaceURL is the Slack workspace's URL, for message links
	// (auth.test's, else Slack's generic one).
	workspaceURL string
	// messages are the live copies of messages this process posted or saw
	// clicked (alerts, diagnoses), by channel/ts.
	messages *slacktransport.Messages
}

// New checks opts and builds a Bot; it does not connect.
func New(opts Options) (*Bot, error) {
	switch {
	case opts.AppToken == "":
		return nil, errors.New("handlers: no Slack app-level token")
	case opts.BotToken == "":
		return nil, errors.New("handlers: no Slack bot token")
	case len(opts.ApprovalSecret) < approval.MinSecretLength:
		return nil, fmt.Errorf("handlers: approval secret shorter than %d bytes", approval.MinSecretLength)
	case opts.Diagnoser == nil:
		return nil, errors.New("handlers: no Diagnoser")
	}
	if opts.ApprovalTTL <= 0 {
		opts.ApprovalTTL = defaultTTL
	}
	if opts.Workers <= 0 {
		opts.Workers = defaultWorkers
	}
	switch {
	case opts.QueueSize == 0:
		opts.QueueSize = defaultQueueSize
	case opts.QueueSize < 0:
		opts.QueueSize = 0
	}
	if opts.ShareWindow == 0 {
		opts.ShareWindow = diagshare.DefaultWindow
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.LookupTimeout <= 0 {
		opts.LookupTimeout = DefaultLookupTimeout
	}
	b := &Bot{
		opts:         opts,
		log:          opts.Logger,
		clock:        opts.Clock,
		approvers:    map[string]bool{},
		shared:       diagshare.New[slashRequest](opts.ShareWindow, opts.Clock),
		runCtx:       context.Background(),
		workspaceURL: "https://slack.com/",
		seen:         slacktransport.NewLRU[string, struct{}](seenEnvelopes),
		messages:     slacktransport.NewMessages(messageCacheSize),
	}
	if err := b.setupClusters(&opts); err != nil {
		return nil, err
	}
	b.queue = slacktransport.NewJobQueue(opts.Workers, opts.QueueSize, b.wg.Go)
	if opts.Alerts != nil {
		if err := opts.Alerts.Bind(alertSide{b}); err != nil {
			return nil, err
		}
	}
	for _, a := range opts.Approvers {
		b.approvers[a] = true
	}
	if opts.RequiredApprovals <= 0 {
		b.opts.RequiredApprovals = 1
	}
	hc := opts.HTTPClient
	if hc == nil {
		b.transport = http.DefaultTransport.(*http.Transport).Clone()
		hc = &http.Client{Transport: b.transport, Timeout: 30 * time.Second}
	}
	apiOpts := []slack.Option{slack.OptionAppLevelToken(opts.AppToken), slack.OptionHTTPClient(hc)}
	if opts.APIURL != "" {
		apiOpts = append(apiOpts, slack.OptionAPIURL(opts.APIURL))
	}
	var smOpts []socketmode.Option
	if opts.PingInterval > 0 {
		smOpts = append(smOpts, socketmode.OptionPingInterval(opts.PingInterval))
	}
	b.sm = socketmode.New(slack.New(opts.BotToken, apiOpts...), smOpts...)
	return b, nil
}

// Connected reports whether the Socket Mode connection is up (for /readyz).
func (b *Bot) Connected() bool { return b.connected.Load() }

// ErrFatalConnection wraps the error that made slack-go give up for good
// (revoked or invalid tokens): the process should exit rather than run deaf.
var ErrFatalConnection = errors.New("slack socket mode connection failed for good")

// Run connects to Slack and serves until ctx ends (returning nil) or the
// connection fails for good (returning an error wrapping
// ErrFatalConnection). It waits for running jobs and repairs to stop.
func (b *Bot) Run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return errors.New("handlers: Run called twice")
	}
	if err := b.checkBotToken(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.runCtx = ctx
	b.poster = slacktransport.NewPoster(ctx, b.sm, b.log, &b.wg)
	if b.opts.Alerts != nil {
		b.opts.Alerts.Start(b.poster)
	}
	for _, m := range b.clusters.All() {
		if m.Resumer == nil {
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			newReporter := func(channel, threadTS string) recovery.Reporter { return b.resumeReporter(m, channel, threadTS) }
			if err := m.Resumer.Resume(ctx, newReporter); err != nil && ctx.Err() == nil {
				b.log.Error("resuming interrupted repairs failed", "cluster", m.Name, "error", err)
			}
		}()
	}

	runErr := make(chan error, 1)
	go func() { runErr <- b.sm.RunContext(ctx) }()

	var err error
loop:
	for {
		select {
		case evt := <-b.sm.Events:
			b.handleEvent(ctx, evt)
		case err = <-runErr:
			break loop
		}
	}
	b.setConnected(false)
	cancel()
	if b.opts.Alerts != nil {
		b.opts.Alerts.Stop()
	}
	b.wg.Wait()
	if b.transport != nil {
		b.transport.CloseIdleConnections()
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		b.log.Info("slack bot stopped")
		return nil
	}
	b.log.Error("slack connection failed for good; stopping", "error", err)
	if refusedToken(slacktransport.ErrorCode(err) + err.Error()) {
		return fmt.Errorf("%w: Slack refused the app-level token (SLACK_APP_TOKEN): %w", ErrFatalConnection, err)
	}
	return fmt.Errorf("%w: %w", ErrFatalConnection, err)
}

// refusedToken reports whether a Slack error code (or message) says a
// token is not valid for good.
func refusedToken(code string) bool {
	for _, c := range []string{"invalid_auth", "not_authed", "token_revoked", "account_inactive"} {
		if strings.Contains(code, c) {
			return true
		}
	}
	return false
}

// checkBotToken asks Slack whose the bot token is (auth.test), so that a
// refused SLACK_BOT_TOKEN stops the bot at start instead of leaving it
// connected but unable to answer. Other failures (Slack unreachable) are
// only logged: the Socket Mode loop retries the connection anyway.
func (b *Bot) checkBotToken(ctx context.Context) error {
	who, err := b.sm.AuthTestContext(ctx)
	switch {
	case err == nil:
		if u := who.URL; strings.HasPrefix(u, "https://") {
			b.workspaceURL = strings.TrimSuffix(u, "/") + "/"
		}
		return nil
	case refusedToken(slacktransport.ErrorCode(err)):
		b.log.Error("slack refused the bot token (SLACK_BOT_TOKEN); stopping", "slack_error", slacktransport.ErrorCode(err))
		return fmt.Errorf("%w: Slack refused the bot token (SLACK_BOT_TOKEN): %s", ErrFatalConnection, slacktransport.ErrorCode(err))
	default:
		b.log.Warn("could not check the bot token with auth.test; continuing", "error", err)
		return nil
	}
}

// handleEvent runs on the event loop: it must never block on Slack or
// Kubernetes. Requests are acked here, then handed to the worker pool.
func (b *Bot) handleEvent(ctx context.Context, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		b.setConnected(false)
		b.log.Debug("connecting to slack")
	case socketmode.EventTypeConnectionError:
		b.setConnected(false)
		attrs := []any{}
		if e, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
			attrs = append(attrs, "error", e.ErrorObj, "attempt", e.Attempt, "backoff", e.Backoff)
		}
		b.log.Warn("slack connection failed; retrying", attrs...)
	case socketmode.EventTypeInvalidAuth:
		b.setConnected(false)
		b.log.Error("slack refused the app-level token (SLACK_APP_TOKEN)")
	case socketmode.EventTypeConnected:
		b.setConnected(true)
		if e, ok := evt.Data.(*socketmode.ConnectedEvent); ok && e.ConnectionCount > 0 {
			metrics.SocketModeReconnects.Inc()
		}
		b.log.Info("connected to slack")
	case socketmode.EventTypeHello:
		b.setConnected(true)
	case socketmode.EventTypeSlashCommand:
		cmd, _ := evt.Data.(slack.SlashCommand)
		if evt.Request != nil {
			b.onSlashCommand(ctx, *evt.Request, cmd)
		}
	case socketmode.EventTypeInteractive:
		cb, _ := evt.Data.(slack.InteractionCallback)
		if evt.Request != nil {
			b.onInteraction(ctx, *evt.Request, cb)
		}
	case socketmode.EventTypeEventsAPI:
		if evt.Request != nil {
			b.ack(ctx, *evt.Request, nil)
		}
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage, socketmode.EventTypeErrorWriteFailed:
		b.log.Warn("slack socket mode problem", "event", string(evt.Type), "detail", fmt.Sprint(evt.Data))
	}
}

func (b *Bot) setConnected(up bool) {
	b.connected.Store(up)
	if up {
		metrics.SocketModeConnected.Set(1)
	} else {
		metrics.SocketModeConnected.Set(0)
	}
}

// ack acknowledges an envelope, with an optional immediate response.
func (b *Bot) ack(ctx context.Context, req socketmode.Request, payload any) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if err := b.sm.AckCtx(ctx, req.EnvelopeID, payload); err != nil {
		b.log.Error("acknowledging a slack envelope failed", "envelope_id", req.EnvelopeID, "type", req.Type, "error", err)
		return
	}
	metrics.AckLatency.Observe(time.Since(start).Seconds())
}

// firstDelivery records an envelope ID and reports whether it is new.
func (b *Bot) firstDelivery(req socketmode.Request) bool {
	_, added := b.seen.AddIfAbsent(req.EnvelopeID, struct{}{})
	if !added {
		b.log.Info("ignoring a redelivered slack envelope", "envelope_id", req.EnvelopeID,
			"retry_attempt", req.RetryAttempt, "retry_reason", req.RetryReason)
	}
	return added
}

// reserve takes a place in the worker queue without waiting; it fails
// only when the queue is full. A reserved place must be used by start.
func (b *Bot) reserve() bool {
	_, ok := b.queue.Admit()
	return ok
}

// start runs job in a reserved place with a bounded context, ahead of the
// waiting commands (clicks and alert commands: decisions should not wait
// behind diagnoses). The timeout counts from when the job starts.
func (b *Bot) start(ctx context.Context, job func(ctx context.Context)) {
	b.queue.RunUrgent(func() {
		ctx, cancel := context.WithTimeout(ctx, commandTimeout)
		defer cancel()
		job(ctx)
	})
}

// enqueue runs job for requester in a reserved place, in the requesters'
// round-robin order, with a bounded context counted from its start.
func (b *Bot) enqueue(ctx context.Context, requester string, job func(ctx context.Context)) {
	b.queue.Run(requester, func() {
		ctx, cancel := context.WithTimeout(ctx, commandTimeout)
		defer cancel()
		job(ctx)
	})
}

// isApprover reports whether user may approve repairs.
func (b *Bot) isApprover(user string) bool { return b.approvers[user] }

// approverList is for messages: the approvers (APPROVERS) as mentions.
func (b *Bot) approverList() string { return slackview.ApproverList(b.opts.Approvers) }
