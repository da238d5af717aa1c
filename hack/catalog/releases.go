// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

// kafkaRelease is one Kafka release to read: its version and the Scala
// artifact that exists for it on Maven Central.
type kafkaRelease struct {
	Version  string
	Artifact string
}

// kafkaReleases is the last patch of every Kafka release line from 0.10 to
// 4.x, checked against Maven Central's maven-metadata.xml of kafka_2.11,
// kafka_2.12 and kafka_2.13 (2026-12-02). kafka_2.13 exists from 2.4.0,
// kafka_2.12 from 0.10.1.1 to 3.9.2, kafka_2.11 up to 2.4.1. The Scala build
// does not change Kafka's messages: kafka_2.11 is read up to 2.3.1 (it is the
// one Scala build every one of those lines has), kafka_2.13 from 2.4.
//
// From 4.2 on only the first release of a line has -sources jars on Maven
// Central (4.2.0 and 4.3.0 do; 4.2.2, 4.3.2 and 4.4.0 do not, checked
// 2026-12-02): 4.2.0 and 4.3.0 are read from their sources, so the messages
// new in those lines are in the catalogue, and the later patches from their
// class files against them. 4.4.0 has no -sources jar at all.
var kafkaReleases = []kafkaRelease{
	{"0.10.0.1", "kafka_2.11"},
	{"0.10.1.1", "kafka_2.11"},
	{"0.10.2.2", "kafka_2.11"},
	{"0.11.0.3", "kafka_2.11"},
	{"1.0.2", "kafka_2.11"},
	{"1.1.1", "kafka_2.11"},
	{"2.0.1", "kafka_2.11"},
	{"2.1.1", "kafka_2.11"},
	{"2.2.2", "kafka_2.11"},
	{"2.3.1", "kafka_2.11"},
	{"2.4.1", "kafka_2.13"},
	{"2.5.1", "kafka_2.13"},
	{"2.6.3", "kafka_2.13"},
	{"2.7.2", "kafka_2.13"},
	{"2.8.2", "kafka_2.13"},
	{"3.0.2", "kafka_2.13"},
	{"3.1.2", "kafka_2.13"},
	{"3.2.3", "kafka_2.13"},
	{"3.3.2", "kafka_2.13"},
	{"3.4.1", "kafka_2.13"},
	{"3.5.2", "kafka_2.13"},
	{"3.6.2", "kafka_2.13"},
	{"3.7.2", "kafka_2.13"},
	{"3.8.1", "kafka_2.13"},
	{"3.9.2", "kafka_2.13"},
	{"4.0.2", "kafka_2.13"},
	{"4.1.2", "kafka_2.13"},
	{"4.2.0", "kafka_2.13"},
	{"4.2.2", "kafka_2.13"},
	{"4.3.0", "kafka_2.13"},
	{"4.3.2", "kafka_2.13"},
	{"4.4.0", "kafka_2.13"},
}

// zookeeperReleases is the last patch of each ZooKeeper line from 3.4 to 3.9
// (maven-metadata.xml of org.apache.zookeeper:zookeeper, 2026-12-02; the
// parent POMs of 3.8.7 and 3.9.6 are missing on Central, so 3.8.6 and 3.9.4;
// a version Maven cannot resolve is reported as missing). The versions Kafka
// releases depend on are read as well, with those releases.
var zookeeperReleases = []string{"3.4.14", "3.5.10", "3.6.4", "3.7.2", "3.8.6", "3.9.4"}

func findRelease(v string) (kafkaRelease, bool) {
	for _, r := range kafkaReleases {
		if r.Version == v {
			return r, true
		}
	}
	return kafkaRelease{}, false
}
