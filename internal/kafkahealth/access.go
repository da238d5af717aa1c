// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/logging"
)

// SecretReader reads a Secret's data (in `bot serve`, from its mount in
// the bot's pod; the namespace is the Kafka access entry's, for context).
type SecretReader func(ctx context.Context, namespace, name string) (map[string][]byte, error)

// Gate answers the repair gates for one Kubernetes cluster: it finds the
// Kafka access of a broker's namespace and cluster label, reads the
// Secret it names, reads the cluster once and decides.
type Gate struct {
	// Access are the configured Kafka connections (fleet.KafkaAccess).
	Access []fleet.KafkaAccess
	// ReadSecret reads the Secret of an access that names one.
	ReadSecret SecretReader
	// MaxObserverLag is how many metadata records behind the quorum
	// leader a restarted broker may be and count as caught up.
	MaxObserverLag int64
}

// BeforeMove decides whether the broker with node id nodeID of the Kafka
// cluster (namespace, cluster label) may be repaired now. configured is
// false when no access matches: nothing was asked.
func (g *Gate) BeforeMove(ctx context.Context, namespace, cluster, nodeID string) (d Decision, configured bool) {
	return g.decide(ctx, namespace, cluster, nodeID, func(v *View, id int32) Decision { return BeforeMove(v, id) })
}

// AfterRestart decides, on one read, whether the broker came back.
func (g *Gate) AfterRestart(ctx context.Context, namespace, cluster, nodeID string) (d Decision, configured bool) {
	return g.decide(ctx, namespace, cluster, nodeID, func(v *View, id int32) Decision { return AfterRestart(v, id, g.MaxObserverLag) })
}

func (g *Gate) decide(ctx context.Context, namespace, cluster, nodeID string, rule func(*View, int32) Decision) (Decision, bool) {
	a, ok := fleet.FindKafka(g.Access, namespace, cluster)
	if !ok {
		return Decision{}, false
	}
	id, err := strconv.ParseInt(nodeID, 10, 32)
	if err != nil {
		return Decision{Verdict: Defer, Line: fmt.Sprintf("the broker's node.id is not known (%q), so Kafka's view cannot be matched to it", nodeID)}, true
	}
	s, err := g.settings(ctx, a)
	if err != nil {
		return Decision{Verdict: Defer, Line: err.Error()}, true
	}
	cl, err := Dial(s)
	if err != nil {
		return Decision{Verdict: Defer, Line: redact(err.Error(), s.Password)}, true
	}
	defer cl.Close()
	d := rule(cl.Read(ctx), int32(id))
	d.Line = redact(d.Line, s.Password)
	return d, true
}

// redact hides the SASL password in a decision's line: the line quotes
// brokers' answers, and a hostile or broken broker may echo it.
func redact(line, password string) string {
	if password == "" {
		return line
	}
	return strings.ReplaceAll(line, password, logging.Redacted)
}

// settings builds the connection settings of an access, reading its
// Secret. Errors name the Secret and key, never a value.
func (g *Gate) settings(ctx context.Context, a fleet.KafkaAccess) (Settings, error) {
	s := Settings{Bootstrap: a.Bootstrap, TLS: a.TLS, ServerName: a.ServerName, SASLMechanism: a.SASLMechanism}
	if a.Secret == nil {
		return s, nil
	}
	if g.ReadSecret == nil {
		return s, fmt.Errorf("the Secret %s: no reader for it", a.Secret.Name)
	}
	data, err := g.ReadSecret(ctx, a.Namespace, a.Secret.Name)
	if err != nil {
		return s, fmt.Errorf("reading Secret %s: %w", a.Secret.Name, err)
	}
	keys := a.Secret.WithDefaults()
	if a.SASLMechanism != "" {
		for _, k := range []string{keys.UsernameKey, keys.PasswordKey} {
			if len(data[k]) == 0 {
				return s, fmt.Errorf("the Secret %s has no key %q", a.Secret.Name, k)
			}
		}
		s.Username, s.Password = string(data[keys.UsernameKey]), string(data[keys.PasswordKey])
	}
	if a.TLS {
		s.CACert = data[keys.CAKey]
	}
	return s, nil
}
