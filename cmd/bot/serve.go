package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/alerting"
	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/escalation"
	"github.com/kafka-chatops/kafkabot/internal/guard"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
)

const serveUsage = "usage: bot serve   (configured by environment variables: bot serve --help lists them)"

// httpShutdownTimeout bounds the graceful stop of the health/metrics server.
const httpShutdownTimeout = 5 * time.Second

// replicaIdentity names this replica as a repair Lease holder: the pod
// name inside Kubernetes (POD_NAME from the downward API), else the host.
func replicaIdentity() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	host, err := os.Hostname()
	if err != nil {
		return "kafkabot"
	}
	return host
}

// runServe is `bot serve`: connect to Slack over Socket Mode and serve
// /kafka commands and approvals, with /healthz, /readyz and /metrics on
// HTTP_ADDR. It returns nil when ctx ends and an error when the
// configuration is wrong or Slack refuses the bot for good (so the process
// exits non-zero instead of running deaf).
func runServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(stdout, serveUsage)
			return nil
		}
		return fmt.Errorf("%w: unexpected argument %q\n%s", errUsage, args[0], serveUsage)
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if err := cfg.ValidateServe(); err != nil {
		return err
	}
	level, err := config.ParseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	log := logging.New(stderr, cfg.LogFormat, level, logging.NewRedactor(cfg.Secrets()...))
	startupLogging(log, cfg)

	cluster, err := newKubeClient(cfg, "kafkabot")
	if err != nil {
		return err
	}
	engine, err := loadEngine(cfg)
	if err != nil {
		return err
	}
	repairer := recovery.NewRepairer(cluster, engine, recovery.RepairOptions{
		DebugImage: cfg.DebugImage,
		RecordKey:  []byte(cfg.ApprovalSecret),
		Settle:     cfg.RepairSettle,
		Timeout:    cfg.RepairTimeout,
		DryRun:     cfg.DryRun,
		Identity:   replicaIdentity(),
		Logger:     log,
		Gates:      recovery.GateOptions{AllowNoVisibleController: cfg.RepairWithoutVisibleController},

		AllowRootBroker: cfg.AllowRootBroker,
	})
	// Repairs write with this process's token only where deploy/'s admission
	// policy holds (internal/guard); the startup result is logged now.
	guarded := guard.New(cluster, repairer, repairer, cfg.AcceptNoPolicy, log)
	guarded.Startup(ctx, cfg.KafkaNamespaces)

	// With ALERT_CHANNEL set the health sweep runs beside the bot and
	// alerts through it; Slack users silence its alerts and sweep on demand.
	var alerts *handlers.AlertNotifier
	var sweeper *sweep.Sweeper
	if cfg.AlertChannel != "" {
		alerts = handlers.NewAlertNotifier(cfg.AlertChannel)
		if sweeper, err = newSweeper(cfg, cluster, engine, alerts, log); err != nil {
			return err
		}
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
		Decisions:         cluster.Decisions(),
		Escalations:       escalation.NewSlack(cluster),
		DryRun:            cfg.DryRun,
		Workers:           cfg.Workers,
		ClusterName:       cfg.ClusterName,
		QueueSize:         noneIfZero(cfg.QueueSize),
		ShareWindow:       noneIfZero(cfg.ShareWindow),
		Cluster:           cluster,
		Diagnoser:         engine,
		Repairer:          guarded,
		Resumer:           guarded,
		RepairNotice:      guarded.Notice,
		Logger:            log,
		Alerts:            alerts,
	}
	if sweeper != nil {
		botOpts.Silencer, botOpts.Sweeper = alerting.NewControl(sweeper), alerting.NewControl(sweeper)
	}
	bot, err := handlers.New(botOpts)
	if err != nil {
		return err
	}

	receiver, err := newAlertmanagerReceiver(cfg, sweeper, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP_ADDR %s: %w", cfg.HTTPAddr, err)
	}
	mux := probeMux(bot)
	if receiver != nil {
		mux.Handle("POST "+alertmanagerPath, receiver)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(ln) }()
	log.Info("serving", "http_addr", ln.Addr().String(), "slack_api_url", cfg.SlackAPIURL,
		"approvers", len(cfg.Approvers), "workers", cfg.Workers, "queue_size", cfg.QueueSize,
		"diagnosis_share_window", cfg.ShareWindow, "dry_run", cfg.DryRun, "alertmanager_receiver", receiver != nil)

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	sweepDone := runSweep(runCtx, stopRun, sweeper, log)
	runErr := bot.Run(runCtx)
	stopRun()
	if err := <-sweepDone; err != nil && runErr == nil {
		runErr = err
	}

	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("stopping the HTTP server", "error", err)
	}
	if err := <-httpErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("HTTP server failed", "error", err)
	}
	return runErr
}

// noneIfZero maps a setting's 0 ("none") to the handlers' negative
// "none" (their 0 means "the default").
func noneIfZero[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// runSweep runs the health sweep (when there is one) until ctx ends. A
// sweep that fails for good stops the whole process (stop cancels the bot
// too) so that it exits non-zero and Kubernetes restarts it, rather than
// serving commands while alerting nobody. The channel yields the sweep's
// error once it has stopped (nil when it stopped with ctx).
func runSweep(ctx context.Context, stop context.CancelFunc, s *sweep.Sweeper, log *slog.Logger) <-chan error {
	done := make(chan error, 1)
	if s == nil {
		done <- nil
		return done
	}
	go func() {
		err := s.Run(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("the health sweep failed for good; stopping the bot so that it restarts", "error", err)
			stop()
			done <- fmt.Errorf("health sweep: %w", err)
			return
		}
		done <- nil
	}()
	return done
}

// probeMux serves the liveness, readiness and metrics endpoints.
// /healthz is ok while the process runs; /readyz only while the Socket
// Mode connection is up, so a deaf bot is taken out of rotation.
func probeMux(bot *handlers.Bot) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !bot.Connected() {
			http.Error(w, "slack socket mode is not connected", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /metrics", metrics.Handler())
	return mux
}
