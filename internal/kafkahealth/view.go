// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package kafkahealth reads Kafka's own view of a cluster's health over the
// Kafka protocol (franz-go) and decides, with pure functions over what was
// read, whether a broker may be repaired now and whether it came back.
//
// The rules follow Strimzi's KafkaRoller and KafkaQuorumCheck and
// Redpanda's operator: the metadata quorum must have a leader and a
// majority of caught-up voters (lag judged against
// controller.quorum.fetch.timeout.ms), the broker under repair must not be
// the only in-sync replica of a partition that has other replicas, and no
// other broker may be fenced. An unclear picture (a request that failed or
// timed out, a partial answer, no leader reported) defers: it never
// guesses.
package kafkahealth

import "time"

// MetadataTopic is the KRaft metadata log's topic.
const MetadataTopic = "__cluster_metadata"

// DefaultFetchTimeout is controller.quorum.fetch.timeout.ms's default, used
// when the cluster does not report the setting.
const DefaultFetchTimeout = 2 * time.Second

// View is one read of a cluster's health: what the brokers and the
// controller quorum answered. A part that could not be read is nil (or
// empty) and has its reason in Problems.
type View struct {
	// ReadAt is when the read started.
	ReadAt time.Time
	// Quorum is the metadata quorum as DescribeQuorum reported it; nil
	// when it could not be read.
	Quorum *Quorum
	// Brokers are the registered brokers (DescribeCluster), sorted by id.
	Brokers []Broker
	// FencedListed reports whether Brokers includes fenced brokers
	// (DescribeCluster v2, Kafka 4.0+). Before that, only unfenced
	// brokers are listed, so a broker missing from the list is fenced or
	// not registered.
	FencedListed bool
	// Partitions are every partition of every topic (Metadata).
	Partitions []Partition
	// MinISR is min.insync.replicas per topic (DescribeConfigs).
	MinISR map[string]int
	// FetchTimeout is controller.quorum.fetch.timeout.ms as a broker
	// reports it, or DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Problems are the parts of the read that failed or came back
	// partial; any problem makes the decisions defer.
	Problems []string
}

// Quorum is the state of the KRaft metadata quorum.
type Quorum struct {
	// LeaderID is the active controller, or negative when none is known.
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []Replica
	Observers     []Replica
}

// Replica is a voter's or an observer's fetch state, as the quorum leader
// last saw it. Timestamps are the leader's wall clock in milliseconds, -1
// when unknown.
type Replica struct {
	ID                    int32
	LogEndOffset          int64
	LastFetchTimestamp    int64
	LastCaughtUpTimestamp int64
}

// Broker is a registered broker.
type Broker struct {
	ID     int32
	Host   string
	Port   int32
	Fenced bool
}

// Partition is one partition's replica assignment and ISR.
type Partition struct {
	Topic     string
	Partition int32
	// Leader is the leader's id, or -1 when the partition has none.
	Leader   int32
	Replicas []int32
	ISR      []int32
}
