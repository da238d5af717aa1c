// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

// SASL mechanisms Settings accepts.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// Settings say how to reach a cluster: its bootstrap addresses and,
// optionally, TLS and SASL.
type Settings struct {
	// Bootstrap are host:port addresses of brokers.
	Bootstrap []string
	// TLS switches TLS on. CACert (PEM) replaces the system roots when
	// set; ServerName overrides the name checked in the certificate.
	TLS        bool
	CACert     []byte
	ServerName string
	// SASLMechanism is empty (no SASL), PLAIN, SCRAM-SHA-256 or
	// SCRAM-SHA-512, with Username and Password.
	SASLMechanism string
	Username      string
	Password      string
	// Timeout bounds each request (and the whole Read, times the parts);
	// zero means 10s.
	Timeout time.Duration
}

// ErrSettings wraps every invalid Settings error.
var ErrSettings = errors.New("invalid Kafka connection settings")

// Validate checks the settings without contacting anything. Errors never
// contain the password.
func (s Settings) Validate() error {
	if len(s.Bootstrap) == 0 {
		return fmt.Errorf("%w: no bootstrap address", ErrSettings)
	}
	for _, a := range s.Bootstrap {
		i := strings.LastIndexByte(a, ':')
		if i <= 0 {
			return fmt.Errorf("%w: bootstrap %q: want host:port", ErrSettings, a)
		}
		if p, err := strconv.Atoi(a[i+1:]); err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("%w: bootstrap %q: bad port", ErrSettings, a)
		}
	}
	switch s.SASLMechanism {
	case "":
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if s.Username == "" || s.Password == "" {
			return fmt.Errorf("%w: SASL %s needs a username and a password", ErrSettings, s.SASLMechanism)
		}
	default:
		return fmt.Errorf("%w: SASL mechanism %q: want %s, %s or %s", ErrSettings, s.SASLMechanism, SASLPlain, SASLScramSHA256, SASLScramSHA512)
	}
	if len(s.CACert) > 0 && !s.TLS {
		return fmt.Errorf("%w: a CA certificate without TLS", ErrSettings)
	}
	return nil
}

func (s Settings) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 10 * time.Second
}

// Client reads a cluster's health. It is safe for concurrent use.
type Client struct {
	cl      *kgo.Client
	adm     *kadm.Client
	timeout time.Duration
}

// Dial builds a client from settings. It does not connect yet: the first
// Read does.
func Dial(s Settings) (*Client, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.Bootstrap...),
		kgo.DialTimeout(s.timeout()),
		kgo.RequestRetries(2),
		kgo.RetryTimeout(s.timeout()),
		kgo.MetadataMinAge(time.Second),
		kgo.WithHooks(requestCounter{}),
	}
	if s.TLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName}
		if len(s.CACert) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(s.CACert) {
				return nil, fmt.Errorf("%w: the CA certificate holds no PEM certificate", ErrSettings)
			}
			cfg.RootCAs = pool
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if m := mechanism(s); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &Client{cl: cl, adm: kadm.NewClient(cl), timeout: s.timeout()}, nil
}

// requestCounter counts every request written to a broker in
// metrics.KafkaRequests, so an operator sees what the bot asks of Kafka.
type requestCounter struct{}

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	metrics.KafkaRequests.WithLabelValues(kmsg.NameForKey(key), outcome).Inc()
}

func mechanism(s Settings) sasl.Mechanism {
	switch s.SASLMechanism {
	case SASLPlain:
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism()
	case SASLScramSHA256:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism()
	case SASLScramSHA512:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism()
	}
	return nil
}

// Close closes the client's connections.
func (c *Client) Close() { c.cl.Close() }

// Read asks the cluster for its quorum, brokers, partitions and settings.
// It never fails as a whole: what could not be read is recorded in the
// View's Problems (and makes the decisions defer).
func (c *Client) Read(ctx context.Context) *View {
	v := &View{ReadAt: time.Now(), MinISR: map[string]int{}, FetchTimeout: DefaultFetchTimeout}
	c.readQuorum(ctx, v)
	c.readBrokers(ctx, v)
	c.readPartitions(ctx, v)
	c.readFetchTimeout(ctx, v)
	return v
}

func (c *Client) part(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

func (v *View) problem(format string, args ...any) {
	v.Problems = append(v.Problems, fmt.Sprintf(format, args...))
}

// readQuorum sends DescribeQuorum; brokers forward it to the active
// controller.
func (c *Client) readQuorum(ctx context.Context, v *View) {
	ctx, cancel := c.part(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = MetadataTopic
	p := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		v.problem("quorum: DescribeQuorum failed: %v", err)
		return
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		v.problem("quorum: DescribeQuorum: %v", err)
		return
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != MetadataTopic || p.Partition != 0 {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				v.problem("quorum: DescribeQuorum %s-0: %v", MetadataTopic, err)
				return
			}
			v.Quorum = &Quorum{
				LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark,
				Voters: replicas(p.CurrentVoters), Observers: replicas(p.Observers),
			}
			return
		}
	}
	v.problem("quorum: DescribeQuorum answered without %s-0", MetadataTopic)
}

func replicas(in []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) []Replica {
	out := make([]Replica, 0, len(in))
	for _, r := range in {
		out = append(out, Replica{ID: r.ReplicaID, LogEndOffset: r.LogEndOffset,
			LastFetchTimestamp: r.LastFetchTimestamp, LastCaughtUpTimestamp: r.LastCaughtUpTimestamp})
	}
	slices.SortFunc(out, func(a, b Replica) int { return int(a.ID) - int(b.ID) })
	return out
}

// readBrokers sends DescribeCluster, asking for fenced brokers too (v2+).
func (c *Client) readBrokers(ctx context.Context, v *View) {
	ctx, cancel := c.part(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		v.problem("brokers: DescribeCluster failed: %v", err)
		return
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		v.problem("brokers: DescribeCluster: %v", err)
		return
	}
	v.FencedListed = resp.Version >= 2
	for _, b := range resp.Brokers {
		v.Brokers = append(v.Brokers, Broker{ID: b.NodeID, Host: b.Host, Port: b.Port, Fenced: b.IsFenced})
	}
	slices.SortFunc(v.Brokers, func(a, b Broker) int { return int(a.ID) - int(b.ID) })
}

// readPartitions reads every partition (Metadata) and every topic's
// min.insync.replicas (DescribeConfigs).
func (c *Client) readPartitions(ctx context.Context, v *View) {
	ctx, cancel := c.part(ctx)
	defer cancel()
	md, err := c.adm.Metadata(ctx)
	if err != nil {
		v.problem("partitions: Metadata failed: %v", err)
		return
	}
	var topics []string
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			v.problem("partitions: topic %s: %v", t.Topic, t.Err)
			continue
		}
		topics = append(topics, t.Topic)
		for _, p := range t.Partitions.Sorted() {
			if p.Err != nil && !errors.Is(p.Err, kerr.LeaderNotAvailable) && !errors.Is(p.Err, kerr.ReplicaNotAvailable) {
				v.problem("partitions: %s-%d: %v", t.Topic, p.Partition, p.Err)
				continue
			}
			v.Partitions = append(v.Partitions, Partition{Topic: t.Topic, Partition: p.Partition, Leader: p.Leader,
				Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR)})
		}
	}
	if len(topics) == 0 {
		return
	}
	rcs, err := c.adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		v.problem("partitions: DescribeConfigs failed: %v", err)
		return
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			v.problem("partitions: configs of %s: %v", rc.Name, rc.Err)
			continue
		}
		for _, cfg := range rc.Configs {
			if cfg.Key != "min.insync.replicas" || cfg.Value == nil {
				continue
			}
			n, err := strconv.Atoi(*cfg.Value)
			if err != nil {
				v.problem("partitions: %s min.insync.replicas %q: %v", rc.Name, *cfg.Value, err)
				continue
			}
			v.MinISR[rc.Name] = n
		}
	}
}

// readFetchTimeout reads controller.quorum.fetch.timeout.ms from the
// brokers' configuration; a cluster that does not report it keeps the
// default.
func (c *Client) readFetchTimeout(ctx context.Context, v *View) {
	ctx, cancel := c.part(ctx)
	defer cancel()
	rcs, err := c.adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		v.problem("settings: DescribeConfigs of the brokers failed: %v", err)
		return
	}
	for _, rc := range rcs {
		for _, cfg := range rc.Configs {
			if cfg.Key != "controller.quorum.fetch.timeout.ms" || cfg.Value == nil {
				continue
			}
			if ms, err := strconv.Atoi(*cfg.Value); err == nil && ms > 0 {
				v.FetchTimeout = time.Duration(ms) * time.Millisecond
				return
			}
		}
	}
}
