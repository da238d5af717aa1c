package main

import (
	"fmt"

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
