// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package kafkafake is a Kafka cluster that answers, over the real Kafka
// protocol (franz-go's kmsg) on a loopback port, the requests the bot's
// health reads send: ApiVersions, Metadata, DescribeCluster,
// DescribeQuorum and DescribeConfigs. Every broker of the cluster it
// describes is that one listener. Tests give it any picture, healthy or
// hostile (huge lists, names with Slack markup), to drive
// internal/kafkahealth and what the bot shows of it end to end without a
// JVM; the real-Kafka tests of internal/kafkahealth run real brokers.
package kafkafake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-chatops/kafkabot/internal/kafkahealth"
)

// Cluster is the picture the fake answers with.
type Cluster struct {
	// Brokers are the registered brokers' ids; Fenced those of them fenced.
	Brokers []int32
	Fenced  map[int32]bool
	// Leader is the metadata quorum's leader (-1: none); Voters the
	// controllers, all caught up unless in Behind; Observers the brokers
	// that fetch the metadata log (caught up).
	Leader    int32
	Voters    []int32
	Behind    map[int32]bool
	Observers []int32
	// Partitions are every partition; MinISR is min.insync.replicas of
	// every topic.
	Partitions []kafkahealth.Partition
	MinISR     int
}

// Server is a running fake. Close stops it and its connections.
type Server struct {
	l       net.Listener
	cluster Cluster
	host    string
	port    int32
	mu      sync.Mutex
	conns   map[net.Conn]bool
	wg      sync.WaitGroup
}

// Start listens on a free loopback port and answers with c.
func Start(c Cluster) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("kafkafake: %w", err)
	}
	a := l.Addr().(*net.TCPAddr)
	s := &Server{l: l, cluster: c, host: a.IP.String(), port: int32(a.Port), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the fake's host:port, the cluster's bootstrap address.
func (s *Server) Addr() string { return s.l.Addr().String() }

// Close stops listening, closes every connection and waits for them.
func (s *Server) Close() {
	s.l.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			_ = s.serve(c)
		}()
	}
}

// serve answers one connection's requests in order until it closes.
func (s *Server) serve(c net.Conn) error {
	for {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return err
		}
		buf := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		out, err := s.answer(buf)
		if err != nil {
			return err
		}
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}

// answer decodes one request (header v1 or v2) and encodes its response
// with its size prefix.
func (s *Server) answer(buf []byte) ([]byte, error) {
	if len(buf) < 10 {
		return nil, errors.New("short request")
	}
	key, version := int16(binary.BigEndian.Uint16(buf)), int16(binary.BigEndian.Uint16(buf[2:]))
	corr := binary.BigEndian.Uint32(buf[4:])
	off := 10
	if n := int16(binary.BigEndian.Uint16(buf[8:])); n > 0 {
		off += int(n)
	}
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, fmt.Errorf("unknown request key %d", key)
	}
	req.SetVersion(version)
	if req.IsFlexible() {
		tags, n := binary.Uvarint(buf[off:])
		off += n
		for range tags {
			_, n := binary.Uvarint(buf[off:])
			off += n
			size, n := binary.Uvarint(buf[off:])
			off += n + int(size)
		}
	}
	if err := req.ReadFrom(buf[off:]); err != nil {
		return nil, fmt.Errorf("request %d v%d: %w", key, version, err)
	}
	resp, err := s.respond(req)
	if err != nil {
		return nil, err
	}
	resp.SetVersion(version)
	out := binary.BigEndian.AppendUint32(make([]byte, 4, 64), corr)
	if resp.IsFlexible() && key != kmsg.ApiVersions.Int16() {
		out = append(out, 0) // response header v1: no tagged fields
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out, nil
}

// anyBroker is what KRaft brokers report as "the controller" to clients:
// a broker, which forwards controller requests to the quorum's leader.
func (s *Server) anyBroker() int32 {
	if len(s.cluster.Brokers) == 0 {
		return -1
	}
	return s.cluster.Brokers[0]
}

// served are the requests the fake answers.
var served = []kmsg.Key{kmsg.ApiVersions, kmsg.Metadata, kmsg.DescribeCluster, kmsg.DescribeQuorum, kmsg.DescribeConfigs}

func (s *Server) respond(req kmsg.Request) (kmsg.Response, error) {
	c := s.cluster
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := kmsg.NewPtrApiVersionsResponse()
		for _, k := range served {
			v := kmsg.NewApiVersionsResponseApiKey()
			v.ApiKey, v.MaxVersion = k.Int16(), kmsg.RequestForKey(k.Int16()).MaxVersion()
			resp.ApiKeys = append(resp.ApiKeys, v)
		}
		return resp, nil
	case *kmsg.MetadataRequest:
		resp := kmsg.NewPtrMetadataResponse()
		resp.ControllerID = s.anyBroker()
		for _, id := range c.Brokers {
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID, b.Host, b.Port = id, s.host, s.port
			resp.Brokers = append(resp.Brokers, b)
		}
		topics := map[string]int{}
		for _, p := range c.Partitions {
			i, ok := topics[p.Topic]
			if !ok {
				t := kmsg.NewMetadataResponseTopic()
				t.Topic = kmsg.StringPtr(p.Topic)
				resp.Topics = append(resp.Topics, t)
				i = len(resp.Topics) - 1
				topics[p.Topic] = i
			}
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.Replicas, mp.ISR = p.Partition, p.Leader, p.Replicas, p.ISR
			resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, mp)
		}
		if r.Topics != nil { // only the topics asked for
			var asked []kmsg.MetadataResponseTopic
			for _, t := range r.Topics {
				if t.Topic != nil {
					if i, ok := topics[*t.Topic]; ok {
						asked = append(asked, resp.Topics[i])
					}
				}
			}
			resp.Topics = asked
		}
		return resp, nil
	case *kmsg.DescribeClusterRequest:
		resp := kmsg.NewPtrDescribeClusterResponse()
		resp.ControllerID = s.anyBroker()
		for _, id := range c.Brokers {
			b := kmsg.NewDescribeClusterResponseBroker()
			b.NodeID, b.Host, b.Port, b.IsFenced = id, s.host, s.port, c.Fenced[id]
			resp.Brokers = append(resp.Brokers, b)
		}
		return resp, nil
	case *kmsg.DescribeQuorumRequest:
		now := time.Now().UnixMilli()
		state := func(id int32, behind bool) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
			r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, 500, now, now
			if behind {
				r.LogEndOffset, r.LastCaughtUpTimestamp = 100, now-60_000
			}
			return r
		}
		p := kmsg.NewDescribeQuorumResponseTopicPartition()
		p.LeaderID, p.LeaderEpoch, p.HighWatermark = c.Leader, 5, 500
		for _, id := range c.Voters {
			p.CurrentVoters = append(p.CurrentVoters, state(id, c.Behind[id]))
		}
		for _, id := range c.Observers {
			p.Observers = append(p.Observers, state(id, false))
		}
		t := kmsg.NewDescribeQuorumResponseTopic()
		t.Topic, t.Partitions = "__cluster_metadata", []kmsg.DescribeQuorumResponseTopicPartition{p}
		resp := kmsg.NewPtrDescribeQuorumResponse()
		resp.Topics = []kmsg.DescribeQuorumResponseTopic{t}
		return resp, nil
	case *kmsg.DescribeConfigsRequest:
		resp := kmsg.NewPtrDescribeConfigsResponse()
		for _, rr := range r.Resources {
			res := kmsg.NewDescribeConfigsResponseResource()
			res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
			cfg := kmsg.NewDescribeConfigsResponseResourceConfig()
			switch rr.ResourceType {
			case kmsg.ConfigResourceTypeTopic:
				cfg.Name, cfg.Value = "min.insync.replicas", kmsg.StringPtr(strconv.Itoa(c.MinISR))
			default:
				cfg.Name, cfg.Value = "controller.quorum.fetch.timeout.ms", kmsg.StringPtr("2000")
			}
			res.Configs = []kmsg.DescribeConfigsResponseResourceConfig{cfg}
			resp.Resources = append(resp.Resources, res)
		}
		return resp, nil
	}
	return nil, fmt.Errorf("kafkafake does not answer %T", req)
}
