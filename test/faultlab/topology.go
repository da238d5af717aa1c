// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package faultlab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// startTimeout bounds a node's start (JVM start, log loading, metadata).
const startTimeout = 90 * time.Second

// combinedProps is a one-node KRaft cluster (node 1, broker and
// controller) with its log dir at dir.
func combinedProps(dir string) *Props {
	return NewProps(
		"process.roles", "broker,controller",
		"node.id", "1",
		"controller.quorum.voters", "1@"+controllerAddr,
		"listeners", "PLAINTEXT://"+brokerAddr+",CONTROLLER://"+controllerAddr,
		"advertised.listeners", "PLAINTEXT://"+brokerAddr,
		"controller.listener.names", "CONTROLLER",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs", dir,
		"offsets.topic.replication.factor", "1",
		"transaction.state.log.replication.factor", "1",
		"transaction.state.log.min.isr", "1",
	)
}

// controllerProps is the controller (node 1) of a two-node KRaft cluster.
func controllerProps(dir string) *Props {
	return NewProps(
		"process.roles", "controller",
		"node.id", "1",
		"controller.quorum.voters", "1@"+controllerAddr,
		"listeners", "CONTROLLER://"+controllerAddr,
		"controller.listener.names", "CONTROLLER",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs", dir,
	)
}

// brokerProps is the broker-only node 2 of a two-node KRaft cluster.
func brokerProps(dir string) *Props {
	return NewProps(
		"process.roles", "broker",
		"node.id", "2",
		"controller.quorum.voters", "1@"+controllerAddr,
		"listeners", "PLAINTEXT://"+brokerAddr,
		"advertised.listeners", "PLAINTEXT://"+brokerAddr,
		"controller.listener.names", "CONTROLLER",
		"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs", dir,
		"offsets.topic.replication.factor", "1",
		"transaction.state.log.replication.factor", "1",
		"transaction.state.log.min.isr", "1",
	)
}

// zkBrokerProps is a ZooKeeper-mode broker with id and log dir dir.
func zkBrokerProps(id, dir string) *Props {
	return NewProps(
		"broker.id", id,
		"zookeeper.connect", zkAddr,
		"zookeeper.connection.timeout.ms", "6000",
		"listeners", "PLAINTEXT://"+brokerAddr,
		"advertised.listeners", "PLAINTEXT://"+brokerAddr,
		"log.dirs", dir,
		"offsets.topic.replication.factor", "1",
		"transaction.state.log.replication.factor", "1",
		"transaction.state.log.min.isr", "1",
	)
}

// formattedCombined formats a one-node KRaft cluster's log dir data/ and
// returns its properties (not started).
func (s *Session) formattedCombined() (*Props, error) {
	props := combinedProps(s.Path("data"))
	if err := s.Format("server", props, clusterID); err != nil {
		return nil, err
	}
	return props, nil
}

// startController formats (unless already formatted) and starts the
// controller of a two-node cluster with its log dir at controller-data/,
// and waits for it.
func (s *Session) startController(format bool) (*Proc, error) {
	props := controllerProps(s.Path("controller-data"))
	if format {
		if err := s.Format("controller", props, clusterID); err != nil {
			return nil, err
		}
	}
	p, err := s.StartKafka("controller", JVM{Heap: "-Xmx128m"}, props)
	if err != nil {
		return nil, err
	}
	return p, s.Started(p, startTimeout)
}

// startZooKeeper starts the ZooKeeper server that ships in Kafka 3.x's
// libs, with its data in zk-data/, and waits until it serves.
func (s *Session) startZooKeeper() (*Proc, error) {
	cfg, err := s.WriteFile("zookeeper.properties", fmt.Sprintf(
		"dataDir=%s\nclientPort=2181\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n", s.Path("zk-data")))
	if err != nil {
		return nil, err
	}
	p, err := s.Start("zookeeper", JVM{Heap: "-Xmx64m"}, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	if err != nil {
		return nil, err
	}
	if _, err := p.WaitLog(startTimeout, "binding to port", "PrepRequestProcessor (sid:0) started"); err != nil {
		return nil, fmt.Errorf("zookeeper: %w: %s", err, tailOf(p.LogPath, 6))
	}
	s.Step("wait until zookeeper listens on %s", zkAddr)
	return p, nil
}

// seedCache holds, per Kafka version, a two-node KRaft cluster's data
// (controller-data/ and broker-data/) after a topic was created and
// written to, and the steps that made it.
type seedCache struct {
	mu    sync.Mutex
	root  string
	dirs  map[string]string
	steps map[string][]string
}

// seedTopic is the topic the seed creates and writes.
const seedTopic = "orders"

// seeded copies the version's seed data into the work directory (making
// the seed the first time) and records the seed's steps.
func (s *Session) seeded() error {
	c := s.seeds
	c.mu.Lock()
	defer c.mu.Unlock()
	dir, ok := c.dirs[s.Kafka.Version]
	if !ok {
		var steps []string
		var err error
		dir, steps, err = makeSeed(s.Kafka, c.root)
		if err != nil {
			return fmt.Errorf("seed for %s: %w", s.Kafka.Version, err)
		}
		c.dirs[s.Kafka.Version], c.steps[s.Kafka.Version] = dir, steps
	}
	for _, st := range c.steps[s.Kafka.Version] {
		s.Step("seed: %s", st)
	}
	for _, d := range []string{"controller-data", "broker-data"} {
		if err := copyTree(filepath.Join(dir, d), s.Path(d)); err != nil {
			return err
		}
	}
	s.Step("copy the seed's controller-data/ and broker-data/ into %s", s.Dir)
	return nil
}

// makeSeed runs a controller and a broker, creates a topic with one
// partition, writes 2000 records of 100 bytes and stops both cleanly.
func makeSeed(in Install, root string) (string, []string, error) {
	dir := filepath.Join(root, "seed-"+in.Version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	sb, err := NewSandbox()
	if err != nil {
		return "", nil, err
	}
	s := &Session{Kafka: in, Dir: dir, sb: sb}
	defer s.Close()
	if _, err := s.startController(true); err != nil {
		return "", nil, err
	}
	// Snapshots every second (of new records), so the broker's metadata
	// log has a snapshot a recipe can damage.
	props := brokerProps(s.Path("broker-data")).Set("metadata.log.max.snapshot.interval.ms", "1000")
	if err := s.Format("broker", props, clusterID); err != nil {
		return "", nil, err
	}
	broker, err := s.StartKafka("broker", JVM{}, props)
	if err != nil {
		return "", nil, err
	}
	if err := s.Started(broker, startTimeout); err != nil {
		return "", nil, err
	}
	if err := s.Tool("create-topic", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", brokerAddr,
		"--create", "--topic", seedTopic, "--partitions", "1", "--replication-factor", "1"); err != nil {
		return "", nil, err
	}
	if err := s.Tool("produce", "org.apache.kafka.tools.ProducerPerformance", "--topic", seedTopic,
		"--num-records", "2000", "--record-size", "100", "--throughput", "-1",
		"--producer-props", "bootstrap.servers="+brokerAddr, "acks=all"); err != nil {
		return "", nil, err
	}
	snapshots := func() []string {
		m, _ := filepath.Glob(s.Path("broker-data/__cluster_metadata-0/*.checkpoint"))
		return m
	}
	for deadline := time.Now().Add(30 * time.Second); len(snapshots()) == 0 && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
	}
	if len(snapshots()) == 0 {
		return "", nil, fmt.Errorf("seed broker wrote no metadata snapshot in 30s")
	}
	s.Step("wait until the broker has written a metadata snapshot (__cluster_metadata-0/*.checkpoint)")
	broker.Stop(60 * time.Second)
	s.Step("stop broker with SIGTERM (clean shutdown)")
	if !strings.Contains(tailOf(broker.LogPath, 200), "shut down completed") {
		return "", nil, fmt.Errorf("seed broker did not shut down cleanly: %s", tailOf(broker.LogPath, 5))
	}
	s.procs[0].Stop(60 * time.Second)
	s.Step("stop controller with SIGTERM (clean shutdown)")
	return dir, s.Steps(), nil
}
