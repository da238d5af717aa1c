// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package fleet is the list of Kubernetes clusters one bot deployment
// serves: the CLUSTERS_FILE format and its validation, the per-cluster
// circuit breaker that keeps a slow or unreachable cluster from costing
// every command a timeout, and the fan-out (Call, Each) that asks the
// clusters through their breakers, each within a timeout.
//
// The package is pure (no client-go): building a cluster's Kubernetes
// client from a Spec is the caller's job (internal/serve).
package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
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
//	    approvers: [U0PRODLEAD, U0PRODSRE]
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
	// Approvers, when set, are the Slack user IDs who may approve this
	// cluster's repairs (and clear its escalations), instead of APPROVERS:
	// a production cluster can be limited to a few people. Omitted means
	// APPROVERS.
	Approvers []string `json:"approvers,omitempty" yaml:"approvers,omitempty"`

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
	var problems []string
	for i, s := range specs {
		if s.Kubeconfig == "" {
			continue
		}
		if err := readable(s.Kubeconfig); err != nil {
			problems = append(problems, fmt.Sprintf("clusters[%d] (%s): kubeconfig: %v", i, s.Name, err))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("CLUSTERS_FILE %s: %w", path, invalid(problems))
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
// file's content: unknown or miscased fields, a value of the wrong shape
// (a list where text belongs...), a missing or malformed name, a duplicate
// name, a malformed namespace or channel, and an empty list are errors.
// It reports every problem at once, each with its line and its entry, in
// words (never Go type names), wrapped in ErrInvalid.
func Parse(data []byte) ([]Spec, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%w: not valid YAML or JSON: %s", ErrInvalid, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if problems := checkShape(&root); len(problems) > 0 {
		return nil, invalid(problems)
	}
	var f File
	if err := root.Decode(&f); err != nil {
		// checkShape admits only what decodes; keep the error honest anyway.
		return nil, fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(f.Clusters) == 0 {
		return nil, fmt.Errorf("%w: no clusters listed (want `clusters:` with at least one entry)", ErrInvalid)
	}
	if len(f.Clusters) > MaxClusters {
		return nil, fmt.Errorf("%w: %d clusters, at most %d", ErrInvalid, len(f.Clusters), MaxClusters)
	}
	var problems []string
	seen := map[string]int{}
	for i := range f.Clusters {
		s := &f.Clusters[i]
		bad := func(field, format string, args ...any) {
			problems = append(problems, fmt.Sprintf("clusters[%d] (%s): %s: %s", i, s.Name, field, fmt.Sprintf(format, args...)))
		}
		if err := ValidName(s.Name); err != nil {
			bad("name", "%v", err)
		} else if j, dup := seen[s.Name]; dup {
			bad("name", "duplicate of clusters[%d]", j)
		} else {
			seen[s.Name] = i
		}
		if s.Kubeconfig != strings.TrimSpace(s.Kubeconfig) {
			bad("kubeconfig", "surrounding spaces")
		}
		if s.Context != "" && s.Kubeconfig == "" {
			bad("context", "a context needs a kubeconfig")
		}
		for _, ns := range s.KafkaNamespaces {
			if err := ValidName(ns); err != nil {
				bad("kafkaNamespaces", "%q: %v", ns, err)
			}
		}
		for _, ch := range s.ApprovalChannels {
			if !validChannel(ch) {
				bad("approvalChannels", "%q is not a Slack channel ID (C..., G...)", ch)
			}
		}
		users := map[string]bool{}
		for _, u := range s.Approvers {
			if !validUser(u) {
				bad("approvers", "%q is not a Slack user ID (U..., W...)", u)
			} else if users[u] {
				bad("approvers", "%q is listed twice", u)
			}
			users[u] = true
		}
		if err := ValidateKafka(s.Kafka); err != nil {
			bad("kafka", "%v", err)
		}
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	return f.Clusters, nil
}

// invalid is one ErrInvalid listing every problem.
func invalid(problems []string) error {
	if len(problems) == 1 {
		return fmt.Errorf("%w: %s", ErrInvalid, problems[0])
	}
	return fmt.Errorf("%w: %d problems:\n  - %s", ErrInvalid, len(problems), strings.Join(problems, "\n  - "))
}

// specFields are the fields of a cluster entry, and whether each is a
// list (else text).
var specFields = map[string]bool{"name": false, "kubeconfig": false, "context": false, "kafkaNamespaces": true, "approvalChannels": true, "approvers": true}

// checkShape checks the document's structure before it is decoded: a
// mapping with `clusters:`, a list of mappings with known fields, text
// where text belongs and lists of text where lists do. Each problem names
// its line, the entry and the field, and what was wanted.
func checkShape(root *yaml.Node) []string {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.DocumentNode {
		return []string{"the file is empty (want `clusters:` with at least one entry)"}
	}
	if doc.Kind != yaml.MappingNode {
		return []string{fmt.Sprintf("line %d: want a mapping with the key `clusters:` at the top, got %s", doc.Line, shape(doc))}
	}
	var problems []string
	for k := 0; k+1 < len(doc.Content); k += 2 {
		key, val := doc.Content[k], doc.Content[k+1]
		if key.Value != "clusters" {
			problems = append(problems, fmt.Sprintf("line %d: unknown field %q at the top (the only one is `clusters`)", key.Line, key.Value))
			continue
		}
		if val.Tag == "!!null" {
			continue // Parse says "no clusters listed"
		}
		if val.Kind != yaml.SequenceNode {
			problems = append(problems, fmt.Sprintf("line %d: clusters: want a list of clusters (`- name: ...` entries), got %s", val.Line, shape(val)))
			continue
		}
		for i, entry := range val.Content {
			problems = append(problems, checkEntry(i, entry)...)
		}
	}
	return problems
}

// checkEntry checks one cluster entry's shape.
func checkEntry(i int, entry *yaml.Node) []string {
	if entry.Kind != yaml.MappingNode {
		return []string{fmt.Sprintf("line %d: clusters[%d]: want a cluster (name, kubeconfig, context, kafkaNamespaces, approvalChannels, approvers, kafka), got %s", entry.Line, i, shape(entry))}
	}
	name := ""
	for k := 0; k+1 < len(entry.Content); k += 2 {
		if entry.Content[k].Value == "name" && entry.Content[k+1].Kind == yaml.ScalarNode {
			name = entry.Content[k+1].Value
		}
	}
	var problems []string
	for k := 0; k+1 < len(entry.Content); k += 2 {
		key, val := entry.Content[k], entry.Content[k+1]
		at := fmt.Sprintf("line %d: clusters[%d] (%s): %s", key.Line, i, name, key.Value)
		isList, known := specFields[key.Value]
		switch {
		case key.Value == "kafka":
			// A list of mappings (KafkaAccess): their field names here, their
			// values when decoded (ValidateKafka).
			if val.Tag != "!!null" && val.Kind != yaml.SequenceNode {
				problems = append(problems, fmt.Sprintf("%s: want a list of Kafka access entries (`- namespace: ...`), got %s", at, shape(val)))
				break
			}
			for j, item := range val.Content {
				problems = append(problems, checkFields(fmt.Sprintf("%s[%d]", at, j), item, kafkaFields)...)
				for f := 0; f+1 < len(item.Content); f += 2 {
					if item.Content[f].Value == "secret" {
						problems = append(problems, checkFields(fmt.Sprintf("%s[%d].secret", at, j), item.Content[f+1], secretFields)...)
					}
				}
			}
		case !known:
			problems = append(problems, fmt.Sprintf("%s: unknown field%s (fields: name, kubeconfig, context, kafkaNamespaces, approvalChannels, approvers, kafka)", at, caseHint(key.Value)))
		case val.Tag == "!!null":
		case !isList && val.Kind != yaml.ScalarNode:
			problems = append(problems, fmt.Sprintf("%s: want text, got %s", at, shape(val)))
		case isList && val.Kind != yaml.SequenceNode:
			problems = append(problems, fmt.Sprintf("%s: want a list such as [a, b], got %s", at, shape(val)))
		case isList:
			for j, item := range val.Content {
				if item.Kind != yaml.ScalarNode {
					problems = append(problems, fmt.Sprintf("%s[%d]: want text, got %s", at, j, shape(item)))
				}
			}
		}
	}
	return problems
}

// kafkaFields and secretFields are the fields of a kafka entry and of its
// secret (KafkaAccess, SecretKeys).
var (
	kafkaFields  = []string{"namespace", "cluster", "bootstrap", "tls", "serverName", "saslMechanism", "secret"}
	secretFields = []string{"name", "usernameKey", "passwordKey", "caKey"}
)

// checkFields checks that node is a mapping whose keys are all in fields.
func checkFields(at string, node *yaml.Node, fields []string) []string {
	if node.Kind != yaml.MappingNode {
		return []string{fmt.Sprintf("%s: want a mapping (%s), got %s", at, strings.Join(fields, ", "), shape(node))}
	}
	var problems []string
	for k := 0; k+1 < len(node.Content); k += 2 {
		if name := node.Content[k].Value; !slices.Contains(fields, name) {
			problems = append(problems, fmt.Sprintf("%s: unknown field %q (fields: %s)", at, name, strings.Join(fields, ", ")))
		}
	}
	return problems
}

// caseHint suggests the field a miscased one meant.
func caseHint(field string) string {
	for known := range specFields {
		if strings.EqualFold(known, field) {
			return fmt.Sprintf(" (did you mean %s? field names are case-sensitive)", known)
		}
	}
	return ""
}

// shape describes a YAML node in words.
func shape(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
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
func validChannel(s string) bool { return slackID(s, "CG") }

// validUser reports whether s looks like a Slack user ID.
func validUser(s string) bool { return slackID(s, "UW") }

// slackID reports whether s looks like a Slack ID whose first letter is
// one of prefixes: 3 to 32 uppercase letters and digits.
func slackID(s, prefixes string) bool {
	if len(s) < 3 || len(s) > 32 || !strings.ContainsRune(prefixes, rune(s[0])) {
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
