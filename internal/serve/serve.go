// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package serve assembles `bot serve` for one or several Kubernetes
// clusters: per cluster a Kubernetes client, the repair executor behind
// its admission guard, the decision and escalation records and the health
// sweep; one Slack bot over all of them; the Alertmanager receiver routing
// alerts by their cluster label. cmd/bot's serve command is a thin layer
// that reads the environment (and CLUSTERS_FILE) into Options; tests build
// a multi-cluster bot on real API servers the same way, with New.
package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/alertnotify"
	"github.com/kafka-chatops/kafkabot/internal/amreceiver"
	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/doctor"
	"github.com/kafka-chatops/kafkabot/internal/escalation"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/guard"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
)

// Cluster is one Kubernetes cluster the bot serves.
type Cluster struct {
	// Name names it in commands, message headers, tokens and logs
	// (CLUSTERS_FILE's name; CLUSTER_NAME for the single cluster).
	Name string
	// Config reaches its API server with the bot's identity there.
	Config *rest.Config
	// KafkaNamespaces are the namespaces read and repaired there; empty means
	// Settings.KafkaNamespaces (KAFKA_NAMESPACES).
	KafkaNamespaces []string
	// ApprovalChannels are added to APPROVAL_CHANNELS for this cluster.
	ApprovalChannels []string
	// Approvers, when set, replace APPROVERS for this cluster's repairs.
	Approvers []string

	// Kafka are its Kafka clusters' bootstrap addresses for the repair
	// gates (CLUSTERS_FILE's kafka list, or KAFKA_BOOTSTRAP); empty = the
	// gates do not ask Kafka.
	Kafka []fleet.KafkaAccess
}

// Options build a Server.
type Options struct {
	// Settings are the bot's settings (Slack, approvals, repairs, alerts).
	// Its cluster fields (KUBECONFIG, CLUSTER_NAME, CLUSTERS_FILE) are not
	// read: Clusters says which clusters to serve. Required.
	Settings *config.Config
	// Clusters are the clusters served, at least one, names unique (and
	// DNS-1123 labels when there are several).
	Clusters []Cluster
	// Home reaches the bot's own cluster, where the sweep leader Leases
	// live (in Settings.PodNamespace): leadership belongs to the bot
	// deployment. Nil means Clusters[0].Config.
	Home *rest.Config
	// Engine diagnoses; nil means the built-in rules plus RULES_FILE.
	Engine *diagnose.Engine
	// Identity names this replica in Leases (POD_NAME or the host name).
	Identity string
	// UserAgent of the Kubernetes clients (default "kafkabot").
	UserAgent string
	// Logger receives every log (default: discard).
	Logger *slog.Logger
	// StartupTimeout bounds each cluster's admission self-check at start on
	// a bot serving several clusters, where Run runs them in the background
	// (default 30 s; a single cluster's runs in New, unbounded, so the bot
	// starts with its repairs' guard decided).
	StartupTimeout time.Duration
	// LookupTimeout and BreakerPeriod: handlers.Options' (0: defaults).
	LookupTimeout time.Duration
	BreakerPeriod time.Duration
	// Bot, when set, adjusts the Slack bot's options just before it is
	// built (tests: an HTTP client, a ping interval).
	Bot func(*handlers.Options)
	// ResumeRetryBase and ResumeRetryMax bound the back-off of resuming
	// interrupted repairs after a failure, and of the startup admission
	// self-check while the API server does not answer (0: defaults).
	ResumeRetryBase, ResumeRetryMax time.Duration
	// ImageProbeInterval is how often each cluster's debug images are
	// checked against the admission policy (doctor.ProbeImages), so a
	// diagnosis does not offer Approve for a repair the policy would
	// refuse (default DefaultImageProbeInterval).
	ImageProbeInterval time.Duration
}

// DefaultImageProbeInterval is how often `bot serve` asks the admission
// policy about the Kafka pods' debug images.
const DefaultImageProbeInterval = 5 * time.Minute

// Server is one replica of the bot: the Slack bot, every cluster's sweep
// and the Alertmanager receiver.
type Server struct {
	bot            *handlers.Bot
	clusters       []*served
	receiver       *amreceiver.Receiver
	log            *slog.Logger
	multi          bool
	startupTimeout time.Duration
	// the debug-image probe (probeImages)
	imageProbeInterval time.Duration
	allowRoot          bool
	debugImage         string
}

// served is one cluster as the Server runs it.
type served struct {
	name       string
	namespaces []string // checked by the startup self-check
	client     *kube.Client
	guard      *guard.Guard
	sweeper    *sweep.Sweeper // nil without ALERT_CHANNEL
	// checked is closed once the startup self-check has run (multi-cluster
	// bots run it in Run, in the background).
	checked chan struct{}
}

// DefaultStartupTimeout bounds a cluster's startup self-check on a bot
// serving several clusters.
const DefaultStartupTimeout = 30 * time.Second

// LeaderLeaseName is the sweep leader Lease of cluster name, in the home
// cluster: `kafkabot-leader` for a single cluster (the name deployments
// serving one cluster already hold), `kafkabot-leader-<name>` for each of
// several.
func LeaderLeaseName(name string, multi bool) string {
	if !multi {
		return sweep.DefaultLeaseName
	}
	return sweep.DefaultLeaseName + "-" + name
}

// New builds the server: it checks the options and builds every cluster's
// clients. With one cluster it runs the admission self-check itself; with
// several, Run does, in the background, so one slow cluster does not hold
// the others. It connects to nothing else.
func New(ctx context.Context, opts Options) (*Server, error) {
	cfg := opts.Settings
	switch {
	case cfg == nil:
		return nil, errors.New("serve: no Settings")
	case len(opts.Clusters) == 0:
		return nil, errors.New("serve: no clusters")
	}
	multi := len(opts.Clusters) > 1
	seen := map[string]bool{}
	for i, c := range opts.Clusters {
		if c.Config == nil {
			return nil, fmt.Errorf("serve: cluster %d (%s) has no REST config", i, c.Name)
		}
		if multi {
			if err := fleet.ValidName(c.Name); err != nil {
				return nil, fmt.Errorf("serve: cluster %d: name: %w", i, err)
			}
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("serve: cluster %q is listed twice", c.Name)
		}
		seen[c.Name] = true
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	engine := opts.Engine
	if engine == nil {
		var err error
		if engine, err = LoadEngine(cfg); err != nil {
			return nil, err
		}
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "kafkabot"
	}
	home := opts.Home
	if home == nil {
		home = opts.Clusters[0].Config
	}
	homeCS, err := clientset(home, opts.UserAgent)
	if err != nil {
		return nil, fmt.Errorf("home cluster: %w", err)
	}

	s := &Server{log: log, multi: multi}
	var alerts *alertnotify.Notifier
	if cfg.AlertChannel != "" {
		alerts = alertnotify.New(cfg.AlertChannel)
	}
	var members []handlers.ClusterOptions
	sinks := map[string]amreceiver.Cluster{}
	for _, c := range opts.Clusters {
		clog := log
		if multi {
			clog = log.With("cluster", c.Name)
		}
		cs, err := clientset(c.Config, opts.UserAgent)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		namespaces := c.KafkaNamespaces
		if len(namespaces) == 0 {
			namespaces = cfg.KafkaNamespaces
		}
		client := kube.New(cs, kube.Options{
			Namespaces: namespaces, LogTailBytes: cfg.LogTailBytes, LogTailLines: cfg.LogTailLines, Selector: cfg.KafkaSelector,
			AllowRootBroker: cfg.AllowRootBroker, DebugImage: cfg.DebugImage,
		})
		kafka := kafkaGate(c.Kafka, KafkaSecretsDir)
		repairer := recovery.NewRepairer(client, engine, recovery.RepairOptions{
			DebugImage: cfg.DebugImage,
			RecordKey:  []byte(cfg.ApprovalSecret),
			// The record MAC covers the cluster: a Lease copied from
			// another served cluster does not verify here.
			ClusterName: c.Name,
			Settle:      cfg.RepairSettle,
			Timeout:     cfg.RepairTimeout,
			DryRun:      cfg.DryRun,
			Identity:    opts.Identity,
			Logger:      clog,
			Gates: recovery.GateOptions{AllowNoVisibleController: cfg.RepairWithoutVisibleController,
				Kafka: kafka, KafkaCatchUpTimeout: cfg.KafkaCatchUpTimeout},

			AllowRootBroker: cfg.AllowRootBroker,
		})
		// Repairs write with this process's token only where deploy/'s
		// admission policy holds in that cluster (internal/guard).
		sc := &served{name: c.Name, namespaces: namespacesOf(c, cfg), client: client,
			guard: guard.New(client, repairer, repairer, cfg.AcceptNoPolicy, clog), checked: make(chan struct{})}
		member := handlers.ClusterOptions{
			Name: c.Name, Reader: client, Repairer: sc.guard, Resumer: sc.guard, RepairNotice: sc.guard.Notice,
			Decisions: client.Decisions([]byte(cfg.ApprovalSecret)), Escalations: escalation.NewSlack(client), ApprovalChannels: c.ApprovalChannels,
			Approvers: c.Approvers,
		}
		if kafka != nil {
			// The card shows, before Approve, what the gate will ask.
			member.KafkaView = cardKafkaView(kafka, cardKafkaTimeout, clog)
		}
		sc.guard.SetCluster(c.Name)
		if opts.ResumeRetryBase > 0 {
			sc.guard.SetRetry(opts.ResumeRetryBase, cmp.Or(opts.ResumeRetryMax, opts.ResumeRetryBase))
		}
		if multi {
			member.Reader = classified{client}
			// Interrupted repairs resume only after this cluster's
			// self-check (which Run starts), as with one cluster.
			member.Resumer = afterCheck{sc}
		}
		member.Resumer = retryingResumer{inner: member.Resumer, cluster: c.Name, log: clog,
			base: cmp.Or(opts.ResumeRetryBase, DefaultResumeRetryBase), max: cmp.Or(opts.ResumeRetryMax, DefaultResumeRetryMax)}
		if alerts != nil {
			notifier := alerts.ForCluster(c.Name)
			sc.sweeper, err = sweep.New(sweep.Options{
				Client:           client,
				Engine:           engine,
				Notifier:         notifier,
				Schedule:         cfg.SweepSchedule,
				RepeatInterval:   cfg.RepeatInterval,
				ResolveGrace:     cfg.ResolveGrace,
				GroupThreshold:   cfg.GroupThreshold,
				GroupWait:        cfg.GroupWait,
				RestartThreshold: cfg.RestartAlerts,
				RestartWindow:    cfg.RestartWindow,
				Summary:          sweep.SummaryMode(cfg.SweepSummary),
				StateNamespace:   cfg.PodNamespace,
				LeaderElection:   cfg.LeaderElection,
				LeaseName:        LeaderLeaseName(c.Name, multi),
				LeaseClient:      homeCS.CoordinationV1(),
				Identity:         opts.Identity,
				Logger:           clog,
			})
			if err != nil {
				return nil, fmt.Errorf("health sweep of cluster %s: %w", c.Name, err)
			}
			member.Silencer, member.Sweeper = sc.sweeper, sc.sweeper
			sweeper := sc.sweeper
			metrics.TrackSweep(c.Name, func() bool { return sweeper.NotRunning() == "" }, sweeper.Leading)
			member.RepairNotice = statusNotice(sc.guard.Notice, sc.sweeper.NotRunning)
			sinks[c.Name] = amreceiver.Cluster{Sink: sc.sweeper, Channels: c.ApprovalChannels}
		}
		s.clusters = append(s.clusters, sc)
		members = append(members, member)
	}
	if !multi {
		// The only cluster's check runs before the bot is built.
		s.clusters[0].guard.Startup(ctx, s.clusters[0].namespaces)
		close(s.clusters[0].checked)
	}
	s.imageProbeInterval = cmp.Or(opts.ImageProbeInterval, DefaultImageProbeInterval)
	s.allowRoot, s.debugImage = cfg.AllowRootBroker, cfg.DebugImage
	s.startupTimeout = opts.StartupTimeout
	if s.startupTimeout <= 0 {
		s.startupTimeout = DefaultStartupTimeout
	}

	botOpts := handlers.Options{
		AppToken:          cfg.SlackAppToken,
		BotToken:          cfg.SlackBotToken,
		APIURL:            cfg.SlackAPIURL,
		ApprovalSecret:    []byte(cfg.ApprovalSecret),
		ApprovalTTL:       cfg.ApprovalTTL,
		Approvers:         cfg.Approvers,
		AllowSelfApproval: !cfg.ForbidSelfApproval,
		RequiredApprovals: cfg.RequiredApprovals,
		ApprovalChannels:  cfg.ApprovalChannels,
		DryRun:            cfg.DryRun,
		Workers:           cfg.Workers,
		QueueSize:         noneIfZero(cfg.QueueSize),
		ShareWindow:       noneIfZero(cfg.ShareWindow),
		Diagnoser:         engine,
		Logger:            log,
		Alerts:            alerts,
		LookupTimeout:     opts.LookupTimeout,
		BreakerPeriod:     opts.BreakerPeriod,
		Clusters:          members,
	}
	if !multi && len(members[0].Approvers) > 0 {
		// The only cluster's own approvers replace APPROVERS for the
		// bot's cluster-less decisions too (silences).
		botOpts.Approvers = members[0].Approvers
	}
	if opts.Bot != nil {
		opts.Bot(&botOpts)
	}
	if s.bot, err = handlers.New(botOpts); err != nil {
		return nil, err
	}
	if s.receiver, err = newReceiver(cfg, s, sinks, log); err != nil {
		return nil, err
	}
	return s, nil
}

// The Slack side and the sweep speak the same alert model (internal/alert),
// so each serves the other as it is.
var (
	_ sweep.Notifier        = (*alertnotify.Notifier)(nil)
	_ handlers.Silencer     = (*sweep.Sweeper)(nil)
	_ handlers.SweepTrigger = (*sweep.Sweeper)(nil)
	_ amreceiver.Sink       = (*sweep.Sweeper)(nil)
)

// statusNotice is the line /kafka status shows under a cluster: whether its
// repairs can run (repairs) and, when its health sweep cannot run, why
// (sweepNotRunning).
func statusNotice(repairs, sweepNotRunning func() string) func() string {
	return func() string {
		var lines []string
		if r := repairs(); r != "" {
			lines = append(lines, r)
		}
		if why := sweepNotRunning(); why != "" {
			lines = append(lines, "🛑 The health sweep is not running: "+why+". "+
				"No alerts come from this cluster until it can; the bot's log says what to install.")
		}
		return strings.Join(lines, "\n")
	}
}

// startupChecks runs, on a multi-cluster bot, every cluster's admission
// self-check at once, each within startupTimeout, in the background: a
// hanging cluster neither delays the start nor the other clusters. Until
// a cluster's check has run, its interrupted repairs wait (afterCheck) and
// each approval is checked on its own, as always (guard.Repair).
func (s *Server) startupChecks(ctx context.Context, wg *sync.WaitGroup) {
	if !s.multi {
		return
	}
	for _, sc := range s.clusters {
		wg.Go(func() {
			defer close(sc.checked)
			cctx, cancel := context.WithTimeout(ctx, s.startupTimeout)
			defer cancel()
			sc.guard.Startup(cctx, sc.namespaces)
		})
	}
}

// probeImages asks the admission policy about every Kafka namespace's
// debug images at once and then every imageProbeInterval until ctx ends,
// recording the verdicts in the cluster's client: a diagnosis of a broker
// whose image the allow-list does not name then offers no Approve.
func (s *Server) probeImages(ctx context.Context, sc *served) {
	warned := map[string]bool{} // namespace/repository, warned about once
	for {
		for _, ns := range sc.namespaces {
			pctx, cancel := context.WithTimeout(ctx, time.Minute)
			verdicts, err := doctor.ProbeImages(pctx, sc.client, s.debugImage, s.allowRoot, ns)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("debug-image check: listing the Kafka pods failed; retrying later", "cluster", sc.name, "namespace", ns, "error", err)
				}
				continue
			}
			for _, v := range verdicts {
				key := ns + "/" + v.Repository
				if v.OutsideAllowList && !warned[key] {
					warned[key] = true
					s.log.Warn("debug-image check: a broker's image is not in the debug-image allow-list; its diagnosis offers no Approve until it is",
						"cluster", sc.name, "namespace", ns, "pod", v.Pod, "repository", v.Repository,
						"fix", "add it to the bot namespace's annotation kafkabot.io/debug-image-repositories (the chart's admissionPolicy.debugImageRepositories)")
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.imageProbeInterval):
		}
	}
}

// afterCheck resumes a cluster's interrupted repairs once its startup
// self-check has run (guard.Resume reads its result).
type afterCheck struct{ sc *served }

// Resume waits for the check, then resumes through the guard.
func (a afterCheck) Resume(ctx context.Context, newReporter func(channel, threadTS string) recovery.Reporter) error {
	select {
	case <-a.sc.checked:
	case <-ctx.Done():
		return nil
	}
	return a.sc.guard.Resume(ctx, newReporter)
}

func namespacesOf(c Cluster, cfg *config.Config) []string {
	if len(c.KafkaNamespaces) > 0 {
		return c.KafkaNamespaces
	}
	return cfg.KafkaNamespaces
}

// newReceiver returns the Alertmanager webhook receiver, or nil when
// ALERTMANAGER_TOKEN is not set. On a multi-cluster bot it routes each
// alert by its cluster label to that cluster's sweep.
func newReceiver(cfg *config.Config, s *Server, sinks map[string]amreceiver.Cluster, log *slog.Logger) (*amreceiver.Receiver, error) {
	if cfg.AlertmanagerToken == "" {
		return nil, nil
	}
	if cfg.AlertChannel == "" {
		return nil, fmt.Errorf("ALERTMANAGER_TOKEN: the Alertmanager receiver needs ALERT_CHANNEL")
	}
	o := amreceiver.Options{
		Token:          cfg.AlertmanagerToken,
		DefaultChannel: cfg.AlertChannel,
		Channels:       cfg.ApprovalChannels,
		Logger:         log,
	}
	if s.multi {
		o.Clusters = sinks
	} else {
		o.Sink, o.ClusterName = s.clusters[0].sweeper, s.clusters[0].name
		o.Channels = append(append([]string(nil), cfg.ApprovalChannels...), sinks[s.clusters[0].name].Channels...)
	}
	r, err := amreceiver.New(o)
	if err != nil {
		return nil, fmt.Errorf("ALERTMANAGER_TOKEN: %w", err)
	}
	return r, nil
}

// Bot is the Slack bot (for /readyz).
func (s *Server) Bot() *handlers.Bot { return s.bot }

// Receiver is the Alertmanager webhook handler, nil when it is off.
func (s *Server) Receiver() http.Handler {
	if s.receiver == nil {
		return nil
	}
	return s.receiver
}

// Run serves until ctx ends (nil) or Slack refuses the bot for good. Each
// cluster's sweep runs in its own goroutine. With one cluster, a sweep
// that fails for good stops the process (it exits non-zero and Kubernetes
// restarts it, rather than serve commands while alerting nobody). With
// several, it is logged as an error and that cluster's sweep stays down
// until the next restart, while the bot keeps serving every cluster and
// the other sweeps go on: one cluster must never take the others down.
func (s *Server) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	s.startupChecks(ctx, &wg)
	for _, sc := range s.clusters {
		wg.Go(func() { s.probeImages(ctx, sc) })
	}
	var sweepErr error
	var once sync.Once
	for _, sc := range s.clusters {
		if sc.sweeper == nil {
			continue
		}
		sctx := ctx
		if s.multi {
			// client-go's own lines about this sweep (an informer that
			// cannot list, leader election) name the cluster too.
			sctx = logging.KlogContext(ctx, s.log.With("cluster", sc.name))
		}
		wg.Go(func() {
			err := sc.sweeper.Run(sctx)
			if err == nil || ctx.Err() != nil {
				return
			}
			if !s.multi {
				s.log.Error("the health sweep failed for good; stopping the bot so that it restarts", "error", err)
				once.Do(func() { sweepErr = fmt.Errorf("health sweep: %w", err) })
				stop()
				return
			}
			s.log.Error("the health sweep of this cluster failed for good; the bot keeps serving every cluster and the other sweeps, and this one sweeps again after a restart",
				"cluster", sc.name, "error", err)
		})
	}
	runErr := s.bot.Run(ctx)
	stop()
	wg.Wait()
	if runErr == nil {
		runErr = sweepErr
	}
	return runErr
}

// RESTConfig loads a kubeconfig file with an optional context; an empty
// path means the in-cluster config, else KUBECONFIG's loading rules
// (kube.RESTConfig).
func RESTConfig(kubeconfig, context, fallback string) (*rest.Config, error) {
	if kubeconfig == "" {
		return kube.RESTConfig(fallback)
	}
	return restConfigFile(kubeconfig, context)
}

// LoadEngine returns the built-in diagnosis engine, plus the rules of
// RULES_FILE when one is configured.
func LoadEngine(cfg *config.Config) (*diagnose.Engine, error) {
	if cfg.RulesFile == "" {
		return diagnose.Default(), nil
	}
	extra, err := diagnose.LoadRulesFile(cfg.RulesFile)
	if err != nil {
		return nil, fmt.Errorf("RULES_FILE: %w", err)
	}
	e, err := diagnose.NewEngine(extra...)
	if err != nil {
		return nil, fmt.Errorf("RULES_FILE %s: %w", cfg.RulesFile, err)
	}
	return e, nil
}

func clientset(rc *rest.Config, userAgent string) (kubernetes.Interface, error) {
	rc = rest.CopyConfig(rc)
	if rc.UserAgent == "" {
		rc.UserAgent = userAgent
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	return cs, nil
}

// noneIfZero maps a setting's 0 ("none") to the handlers' negative
// "none" (their 0 means "the default").
func noneIfZero[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// classified is a cluster's reader on a multi-cluster bot: its ResolvePod
// errors say whether the cluster answered (no such pod, several) or could
// not be checked, as handlers.ClusterOptions asks.
type classified struct{ *kube.Client }

// ResolvePod is kube.Client's, with "no such pod" and "several pods"
// wrapped in handlers' errors.
func (c classified) ResolvePod(ctx context.Context, namespace, name string) (diagnose.Snapshot, func(context.Context) (diagnose.Snapshot, error), error) {
	status, read, err := c.Client.ResolvePod(ctx, namespace, name)
	switch {
	case err == nil:
		return status, read, nil
	case errors.Is(err, kube.ErrAmbiguous):
		return status, read, fmt.Errorf("%w: %w", handlers.ErrAmbiguousPod, err)
	case errors.Is(err, kube.ErrPodNotFound), errors.Is(err, kube.ErrNotKafkaPod),
		errors.Is(err, kube.ErrNamespaceNotAllowed), errors.Is(err, kube.ErrInvalidName):
		return status, read, fmt.Errorf("%w: %w", handlers.ErrNoSuchPod, err)
	}
	return status, read, err
}
