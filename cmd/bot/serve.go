package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

const serveUsage = "usage: bot serve   (configured by environment variables; see the README)"

// httpShutdownTimeout bounds the graceful stop of the health/metrics server.
const httpShutdownTimeout = 5 * time.Second

// newRepairer builds the repair executor that `bot serve` runs approved
// repairs with. It is the hook where the repair workflow is wired in; while
// it is nil, an approval says in the thread that execution is not
// available in this build, and nothing is changed.
// (*recovery.Repairer satisfies handlers.Repairer: recovery.NewRepairer(
// cluster, engine, recovery.RepairOptions{...}) from cfg fits here.)
var newRepairer func(cfg *config.Config, cluster *kube.Client, engine *diagnose.Engine, log *slog.Logger) (handlers.Repairer, error)

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

	rc, err := kube.RESTConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	rc.UserAgent = "kafkabot"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("creating Kubernetes client: %w", err)
	}
	cluster := kube.New(cs, kube.Options{
		Namespaces:   cfg.KafkaNamespaces,
		LogTailBytes: cfg.LogTailBytes,
		LogTailLines: cfg.LogTailLines,
		Selector:     cfg.KafkaSelector,
	})
	engine, err := serveEngine(cfg)
	if err != nil {
		return err
	}
	var repairer handlers.Repairer
	if newRepairer != nil {
		if repairer, err = newRepairer(cfg, cluster, engine, log); err != nil {
			return fmt.Errorf("setting up the repair executor: %w", err)
		}
	} else {
		log.Warn("this build has no repair executor: approvals will post the plan and change nothing")
	}

	bot, err := handlers.New(handlers.Options{
		AppToken:           cfg.SlackAppToken,
		BotToken:           cfg.SlackBotToken,
		APIURL:             cfg.SlackAPIURL,
		ApprovalSecret:     []byte(cfg.ApprovalSecret),
		ApprovalTTL:        cfg.ApprovalTTL,
		Approvers:          cfg.Approvers,
		ForbidSelfApproval: cfg.ForbidSelfApproval,
		DryRun:             cfg.DryRun,
		Workers:            cfg.Workers,
		Cluster:            cluster,
		Diagnoser:          engine,
		Repairer:           repairer,
		Logger:             log,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP_ADDR %s: %w", cfg.HTTPAddr, err)
	}
	srv := &http.Server{Handler: probeMux(bot), ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- srv.Serve(ln) }()
	log.Info("serving", "http_addr", ln.Addr().String(), "slack_api_url", cfg.SlackAPIURL,
		"approvers", len(cfg.Approvers), "workers", cfg.Workers, "dry_run", cfg.DryRun)

	runErr := bot.Run(ctx)

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

// serveEngine builds the diagnosis engine: the built-in rules plus
// RULES_FILE's when set.
func serveEngine(cfg *config.Config) (*diagnose.Engine, error) {
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
