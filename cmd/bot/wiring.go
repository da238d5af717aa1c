package main

import (
	"flag"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// newKubeClient builds the bot's Kubernetes client from the configuration:
// KUBECONFIG's loading rules (or the in-cluster config), scoped to
// KAFKA_NAMESPACES with the configured log limits.
func newKubeClient(cfg *config.Config, userAgent string) (*kube.Client, error) {
	rc, err := kube.RESTConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
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

// loadEngine returns the built-in diagnosis engine, plus the rules of
// RULES_FILE when one is configured.
func loadEngine(cfg *config.Config) (*diagnose.Engine, error) {
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

// parseOneArg parses fs's flags, which may stand before or after the one
// positional argument the subcommand takes (what names it, e.g. "POD"),
// and returns that argument.
func parseOneArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(positional) {
	case 0:
		return "", fmt.Errorf("missing %s", what)
	case 1:
		return positional[0], nil
	}
	return "", fmt.Errorf("one %s expected, got %d: %s", what, len(positional), strings.Join(positional, " "))
}

// clusterTools loads what the cluster subcommands (diagnose, repair) need:
// the configuration, the diagnosis engine and a Kubernetes client.
func clusterTools(userAgent string) (*config.Config, *diagnose.Engine, *kube.Client, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	engine, err := loadEngine(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	client, err := newKubeClient(cfg, userAgent)
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, engine, client, nil
}
