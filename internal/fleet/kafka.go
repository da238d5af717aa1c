// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package fleet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KafkaAccess is how the bot reaches one Kafka cluster over the Kafka
// protocol, to read its own view of health (metadata quorum, fenced
// brokers, ISR) in the repair gates. Without one, nothing changes: the
// gates run as before and the thread says the quorum was not checked.
//
//	kafka:
//	  - namespace: kafka
//	    cluster: my-cluster          # the pods' cluster label; empty = any
//	    bootstrap: [my-cluster-kafka-bootstrap.kafka:9093]
//	    tls: true
//	    saslMechanism: SCRAM-SHA-512
//	    secret: {name: kafkabot-kafka, usernameKey: username, passwordKey: password, caKey: ca.crt}
type KafkaAccess struct {
	// Namespace is the Kafka cluster's namespace.
	Namespace string `json:"namespace" yaml:"namespace"`
	// Cluster is the value of the pods' cluster label (as the bot groups
	// them); empty matches every Kafka cluster of Namespace.
	Cluster string `json:"cluster,omitempty" yaml:"cluster,omitempty"`
	// Bootstrap are host:port addresses of brokers.
	Bootstrap []string `json:"bootstrap" yaml:"bootstrap"`
	// TLS switches TLS on; ServerName overrides the name the certificate
	// is checked against.
	TLS        bool   `json:"tls,omitempty" yaml:"tls,omitempty"`
	ServerName string `json:"serverName,omitempty" yaml:"serverName,omitempty"`
	// SASLMechanism is empty (none), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	SASLMechanism string `json:"saslMechanism,omitempty" yaml:"saslMechanism,omitempty"`
	// Secret names the Secret holding the SASL credentials and the CA
	// certificate: a Secret of the bot's own namespace, mounted in the bot's
	// pod under /etc/kafkabot/kafka/<name> (the bot reads no Secret through
	// the API).
	Secret *SecretKeys `json:"secret,omitempty" yaml:"secret,omitempty"`
}

// SecretKeys names a Secret and the keys of its values.
type SecretKeys struct {
	Name string `json:"name" yaml:"name"`
	// UsernameKey and PasswordKey default to "username" and "password".
	UsernameKey string `json:"usernameKey,omitempty" yaml:"usernameKey,omitempty"`
	PasswordKey string `json:"passwordKey,omitempty" yaml:"passwordKey,omitempty"`
	// CAKey defaults to "ca.crt"; a Secret without that key means the
	// system roots.
	CAKey string `json:"caKey,omitempty" yaml:"caKey,omitempty"`
}

// Default keys of a Kafka access Secret.
const (
	DefaultUsernameKey = "username"
	DefaultPasswordKey = "password"
	DefaultCAKey       = "ca.crt"
)

// WithDefaults returns the keys with the defaults filled in.
func (k SecretKeys) WithDefaults() SecretKeys {
	if k.UsernameKey == "" {
		k.UsernameKey = DefaultUsernameKey
	}
	if k.PasswordKey == "" {
		k.PasswordKey = DefaultPasswordKey
	}
	if k.CAKey == "" {
		k.CAKey = DefaultCAKey
	}
	return k
}

// Matches reports whether the access is for a Kafka cluster of namespace
// with the given cluster label value.
func (a KafkaAccess) Matches(namespace, cluster string) bool {
	return a.Namespace == namespace && (a.Cluster == "" || a.Cluster == cluster)
}

// FindKafka returns the access for a namespace and cluster label: an exact
// cluster match first, then one for the whole namespace.
func FindKafka(all []KafkaAccess, namespace, cluster string) (KafkaAccess, bool) {
	for _, a := range all {
		if a.Namespace == namespace && a.Cluster != "" && a.Cluster == cluster {
			return a, true
		}
	}
	for _, a := range all {
		if a.Namespace == namespace && a.Cluster == "" {
			return a, true
		}
	}
	return KafkaAccess{}, false
}

// ValidateKafka checks Kafka access entries: namespaces, addresses,
// mechanisms, Secret names, and no two entries for the same cluster.
func ValidateKafka(all []KafkaAccess) error {
	seen := map[string]int{}
	for i, a := range all {
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("kafka[%d] (%s/%s): %s: %s", i, a.Namespace, a.Cluster, field, fmt.Sprintf(format, args...))
		}
		if err := ValidName(a.Namespace); err != nil {
			return bad("namespace", "%v", err)
		}
		if len(a.Cluster) > 63 || strings.ContainsAny(a.Cluster, " \t\r\n/=") {
			return bad("cluster", "%q is not a label value", a.Cluster)
		}
		key := a.Namespace + "/" + a.Cluster
		if j, dup := seen[key]; dup {
			return bad("cluster", "duplicate of kafka[%d]", j)
		}
		seen[key] = i
		if len(a.Bootstrap) == 0 {
			return bad("bootstrap", "no address")
		}
		for _, addr := range a.Bootstrap {
			if err := validHostPort(addr); err != nil {
				return bad("bootstrap", "%v", err)
			}
		}
		switch a.SASLMechanism {
		case "":
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
			if a.Secret == nil {
				return bad("secret", "SASL %s needs a Secret with the username and password", a.SASLMechanism)
			}
		default:
			return bad("saslMechanism", "%q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", a.SASLMechanism)
		}
		if a.Secret != nil {
			if err := validSubdomain(a.Secret.Name); err != nil {
				return bad("secret.name", "%v", err)
			}
			if a.SASLMechanism == "" && !a.TLS {
				return bad("secret", "a Secret without SASL or TLS is never read")
			}
		}
		if a.ServerName != "" && !a.TLS {
			return bad("serverName", "needs tls: true")
		}
	}
	return nil
}

func validHostPort(s string) error {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || strings.ContainsAny(s, " \t/") {
		return fmt.Errorf("%q: want host:port", s)
	}
	if p, err := strconv.Atoi(s[i+1:]); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("%q: bad port", s)
	}
	return nil
}

// validSubdomain checks a DNS-1123 subdomain (a Secret's name).
func validSubdomain(s string) error {
	if s == "" || len(s) > 253 {
		return errors.New("want 1 to 253 characters")
	}
	for _, part := range strings.Split(s, ".") {
		if err := ValidName(part); err != nil {
			return err
		}
	}
	return nil
}

// ParseKafkaBootstrap reads the single-cluster setting KAFKA_BOOTSTRAP:
// entries separated by ';', each `namespace[/cluster]=host:port[,host:port...]`,
// e.g. "kafka=kafka-headless.kafka:9092;orders/orders-kafka=b0:9093,b1:9093".
// tls, mechanism and secret (KAFKA_TLS, KAFKA_SASL_MECHANISM,
// KAFKA_SECRET, with the default keys) apply to every entry. An empty
// setting is no entry.
func ParseKafkaBootstrap(setting string, tls bool, mechanism, secret string) ([]KafkaAccess, error) {
	var out []KafkaAccess
	for _, entry := range strings.Split(setting, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		target, addrs, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want namespace[/cluster]=host:port[,host:port]", entry)
		}
		ns, cluster, _ := strings.Cut(strings.TrimSpace(target), "/")
		a := KafkaAccess{Namespace: ns, Cluster: cluster, TLS: tls, SASLMechanism: mechanism}
		for _, addr := range strings.Split(addrs, ",") {
			if addr = strings.TrimSpace(addr); addr != "" {
				a.Bootstrap = append(a.Bootstrap, addr)
			}
		}
		if secret != "" {
			a.Secret = &SecretKeys{Name: secret}
		}
		out = append(out, a)
	}
	if len(out) == 0 && (mechanism != "" || secret != "" || tls) {
		return nil, errors.New("TLS, SASL or a Secret without any bootstrap address")
	}
	if err := ValidateKafka(out); err != nil {
		return nil, err
	}
	return out, nil
}
