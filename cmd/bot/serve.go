// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/serve"
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
	cfg, err := config.LoadServe()
	if err != nil {
		return err
	}
	level, err := config.ParseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	log := logging.New(stderr, cfg.LogFormat, level, logging.NewRedactor(cfg.Secrets()...))

	clusters, home, err := servedClusters(cfg)
	if err != nil {
		return err
	}
	startupLogging(log, cfg, clusters)
	server, err := serve.New(ctx, serve.Options{
		Settings: cfg, Clusters: clusters, Home: home, Identity: replicaIdentity(), UserAgent: "kafkabot", Logger: log,
	})
	if err != nil {
		return err
	}
	bot, receiver := server.Bot(), server.Receiver()
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
	log.Info("serving", "http_addr", ln.Addr().String(), "slack_api_url", cfg.SlackAPIURL, "clusters", len(clusters),
		"approvers", len(cfg.Approvers), "workers", cfg.Workers, "queue_size", cfg.QueueSize,
		"diagnosis_share_window", cfg.ShareWindow, "dry_run", cfg.DryRun, "alertmanager_receiver", receiver != nil)

	runErr := server.Run(ctx)

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

// servedClusters are the clusters `bot serve` serves: CLUSTERS_FILE's,
// or, without it, one named CLUSTER_NAME from KUBECONFIG (or the in-cluster
// config) with KAFKA_NAMESPACES. home is the bot's
// own cluster, which holds the sweep leader Leases: the in-cluster config
// when running in a pod, else nil (the first cluster).
func servedClusters(cfg *config.Config) (clusters []serve.Cluster, home *rest.Config, err error) {
	if cfg.ClustersFile == "" {
		rc, err := kube.RESTConfig(cfg.Kubeconfig)
		if err != nil {
			return nil, nil, err
		}
		kafka, err := cfg.KafkaAccess()
		if err != nil {
			return nil, nil, err
		}
		return []serve.Cluster{{Name: cfg.ClusterName, Config: rc, KafkaNamespaces: cfg.KafkaNamespaces, Kafka: kafka}}, nil, nil
	}
	specs, err := fleet.LoadFile(cfg.ClustersFile)
	if err != nil {
		return nil, nil, err
	}
	for i, sp := range specs {
		rc, err := serve.RESTConfig(sp.Kubeconfig, sp.Context, cfg.Kubeconfig)
		if err != nil {
			return nil, nil, fmt.Errorf("CLUSTERS_FILE %s: clusters[%d] (%s): kubeconfig: %w", cfg.ClustersFile, i, sp.Name, err)
		}
		clusters = append(clusters, serve.Cluster{Name: sp.Name, Config: rc, KafkaNamespaces: sp.KafkaNamespaces, ApprovalChannels: sp.ApprovalChannels,
			Approvers: sp.Approvers, Kafka: sp.Kafka})
	}
	if rc, err := rest.InClusterConfig(); err == nil {
		home = rc
	}
	return clusters, home, nil
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
