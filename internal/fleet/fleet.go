// Package fleet is the list of Kubernetes clusters one bot deployment
// serves (issue 15): the CLUSTERS_FILE format and its validation, and the
// per-cluster circuit breaker that keeps a slow or unreachable cluster
// from costing every command a timeout.
//
// The package is pure (no client-go): building a cluster's Kubernetes
// client from a Spec is the caller's job (internal/serve).
package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec is one cluster of CLUSTERS_FILE.
//
//	clusters:
//	  - name: prod-eu
//	    kubeconfig: /etc/kafkabot/clusters/prod-eu/kubeconfig
//	    context: ""
//	    kafkaNamespaces: [kafka]
//	    approvalChannels: [C0PRODEU]
type Spec struct {
	// Name identifies the cluster in commands (`prod-eu/kafka/broker-0`),
	// message headers, approval tokens and Leases: a DNS-1123 label,
	// unique in the file.
	Name string `json:"name" yaml:"name"`
	// Kubeconfig is the path of a kubeconfig file (usually mounted from a
	// Secret); empty means the in-cluster config (or KUBECONFIG's loading
	// rules outside a pod).
	Kubeconfig string `json:"kubeconfig,omitempty" yaml:"kubeconfig,omitempty"`
	// Context is the kubeconfig context to use; empty means its current one.
	Context string `json:"context,omitempty" yaml:"context,omitempty"`
	// KafkaNamespaces are the namespaces the bot reads and repairs in this
	// cluster; empty (or omitted) means KAFKA_NAMESPACES.
	KafkaNamespaces []string `json:"kafkaNamespaces,omitempty" yaml:"kafkaNamespaces,omitempty"`
	// ApprovalChannels are added to APPROVAL_CHANNELS for this cluster only:
	// an Approve of this cluster's repair counts there too, another
	// cluster's does not.
	ApprovalChannels []string `json:"approvalChannels,omitempty" yaml:"approvalChannels,omitempty"`
	// Kafka lists how to reach this cluster's Kafka clusters over the
	// Kafka protocol, for the repair gates (see KafkaAccess); empty = the
	// gates do not ask Kafka.
	Kafka []KafkaAccess `json:"kafka,omitempty" yaml:"kafka,omitempty"`
}

// File is the whole CLUSTERS_FILE.
type File struct {
	Clusters []Spec `json:"clusters" yaml:"clusters"`
}

// MaxClusters bounds the clusters of one file (each has its own informers
// and connections).
const MaxClusters = 64

// ErrInvalid wraps every validation error of a clusters file.
var ErrInvalid = errors.New("invalid clusters file")

// LoadFile reads and validates a clusters file (YAML or JSON). Errors name
// the file, the entry (by index and name) and the field.
func LoadFile(path string) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CLUSTERS_FILE: %w", err)
	}
	specs, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("CLUSTERS_FILE %s: %w", path, err)
	}
	for i, s := range specs {
		if s.Kubeconfig == "" {
			continue
		}
		if err := readable(s.Kubeconfig); err != nil {
			return nil, fmt.Errorf("CLUSTERS_FILE %s: %w: clusters[%d] (%s): kubeconfig: %w", path, ErrInvalid, i, s.Name, err)
		}
	}
	return specs, nil
}

// readable checks that a kubeconfig file can be read and is not empty.
func readable(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("%s is empty", path)
	}
	return nil
}

// Parse decodes (YAML, of which JSON is a subset) and validates a clusters
// file's content: unknown or miscased fields,
// a missing or malformed name, a duplicate name, a malformed namespace or
// channel, and an empty list are errors.
func Parse(data []byte) ([]Spec, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // field names are case-sensitive too
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(f.Clusters) == 0 {
		return nil, fmt.Errorf("%w: no clusters listed (want `clusters:` with at least one entry)", ErrInvalid)
	}
	if len(f.Clusters) > MaxClusters {
		return nil, fmt.Errorf("%w: %d clusters, at most %d", ErrInvalid, len(f.Clusters), MaxClusters)
	}
	seen := map[string]int{}
	for i := range f.Clusters {
		s := &f.Clusters[i]
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("%w: clusters[%d] (%s): %s: %s", ErrInvalid, i, s.Name, field, fmt.Sprintf(format, args...))
		}
		if err := ValidName(s.Name); err != nil {
			return nil, bad("name", "%v", err)
		}
		if j, dup := seen[s.Name]; dup {
			return nil, bad("name", "duplicate of clusters[%d]", j)
		}
		seen[s.Name] = i
		if s.Kubeconfig != strings.TrimSpace(s.Kubeconfig) {
			return nil, bad("kubeconfig", "surrounding spaces")
		}
		if s.Context != "" && s.Kubeconfig == "" {
			return nil, bad("context", "a context needs a kubeconfig")
		}
		for _, ns := range s.KafkaNamespaces {
			if err := ValidName(ns); err != nil {
				return nil, bad("kafkaNamespaces", "%q: %v", ns, err)
			}
		}
		for _, ch := range s.ApprovalChannels {
			if !validChannel(ch) {
				return nil, bad("approvalChannels", "%q is not a Slack channel ID (C..., G...)", ch)
			}
		}
		if err := ValidateKafka(s.Kafka); err != nil {
			return nil, bad("kafka", "%v", err)
		}
	}
	return f.Clusters, nil
}

// ValidName checks a DNS-1123 label: 1 to 63 lowercase letters, digits and
// '-', starting and ending with a letter or digit.
func ValidName(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case len(s) > 63:
		return fmt.Errorf("%d characters, at most 63", len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%q is not a DNS-1123 label (lowercase letters, digits and '-')", s)
		}
	}
	if s[0] == '-' || s[len(s)-1] == '-' {
		return fmt.Errorf("%q must start and end with a letter or digit", s)
	}
	return nil
}

// validChannel reports whether s looks like a Slack channel ID.
func validChannel(s string) bool {
	if len(s) < 3 || len(s) > 32 || (s[0] != 'C' && s[0] != 'G') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
