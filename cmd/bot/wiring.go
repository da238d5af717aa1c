// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/serve"
)

// kubeClientFor builds the bot's client on rc, scoped and limited by cfg.
func kubeClientFor(cfg *config.Config, rc *rest.Config, userAgent string) (*kube.Client, error) {
	rc.UserAgent = userAgent
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	return kube.New(cs, kube.Options{
		Namespaces:   cfg.KafkaNamespaces,
		LogTailBytes: cfg.LogTailBytes,
		LogTailLines: cfg.LogTailLines,
		Selector:     cfg.KafkaSelector,
		// The diagnosis runs the repair's root-broker check too.
		AllowRootBroker: cfg.AllowRootBroker,
	}), nil
}

// clusterFlags are kubectl's connection and namespace flags, on every
// subcommand that talks to a cluster.
type clusterFlags struct {
	kubeconfig    string
	context       string
	namespace     string
	allNamespaces bool
}

// add registers the flags on fs (a command's flags, or its persistent
// flags when its subcommands share them).
func (f *clusterFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster config)")
	fs.StringVar(&f.context, "context", "", "the kubeconfig context to use (default: its current-context)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the Kafka namespace (default: the context's namespace, else every namespace in KAFKA_NAMESPACES)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "every namespace in KAFKA_NAMESPACES (or every one the bot may read), whatever the context says")
}

// validate checks the flags before anything is loaded.
func (f *clusterFlags) validate() error {
	if f.allNamespaces && f.namespace != "" {
		return usagef("-n/--namespace and -A/--all-namespaces exclude each other")
	}
	if f.namespace != "" {
		if err := kube.ValidateTarget(f.namespace, "x"); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// target is where a cluster subcommand looks, and why there.
type target struct {
	// namespace is the namespace to look in; "" means every namespace in
	// scope (KAFKA_NAMESPACES, or every one the bot may read).
	namespace string
	// fromContext is set when namespace came from the kubeconfig context
	// rather than -n: messages then say so.
	fromContext string
}

// resolve applies kubectl's rule: -n, else the kubeconfig context's
// namespace, else (where kubectl would use "default", which holds no
// Kafka) every namespace in scope; -A is every namespace in scope. scope
// is KAFKA_NAMESPACES: a context namespace outside it (often "default")
// could never match, so it is passed over for the whole scope; -n outside
// it is refused by the lookup, as asked.
func (f *clusterFlags) resolve(conn kube.Connection, scope []string) target {
	switch {
	case f.allNamespaces:
		return target{}
	case f.namespace != "":
		return target{namespace: f.namespace}
	case conn.Namespace != "" && (len(scope) == 0 || slices.Contains(scope, conn.Namespace)):
		return target{namespace: conn.Namespace, fromContext: conn.Context}
	}
	return target{}
}

// explain adds to err where the namespace came from, when it came from
// the kubeconfig context and the lookup found nothing there.
func (t target) explain(err error) error {
	if err == nil || t.fromContext == "" {
		return err
	}
	return fmt.Errorf("%w (namespace %s is the kubeconfig context %s's; -n NAMESPACE or -A looks elsewhere)", err, t.namespace, t.fromContext)
}

// clusterTools loads what the cluster subcommands need: the configuration,
// the diagnosis engine, a Kubernetes client connected as flags say, and
// the namespace to look in.
func clusterTools(userAgent string, flags *clusterFlags) (*config.Config, *diagnose.Engine, *kube.Client, target, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, nil, nil, target{}, err
	}
	engine, err := serve.LoadEngine(cfg)
	if err != nil {
		return nil, nil, nil, target{}, err
	}
	conn, err := kube.LoadConnection(cfg.Kubeconfig, kube.ConfigFlags{Kubeconfig: flags.kubeconfig, Context: flags.context})
	if err != nil {
		return nil, nil, nil, target{}, err
	}
	client, err := kubeClientFor(cfg, conn.REST, userAgent)
	if err != nil {
		return nil, nil, nil, target{}, err
	}
	return cfg, engine, client, flags.resolve(conn, cfg.KafkaNamespaces), nil
}
