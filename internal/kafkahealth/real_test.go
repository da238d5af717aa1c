// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kafkahealth

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

const testTopic = "orders"

// ready is a view where the quorum has a leader and every broker of c is
// registered and unfenced.
func ready(c *cluster) func(*View) bool {
	return func(v *View) bool {
		if len(v.Problems) > 0 || v.Quorum == nil || v.Quorum.LeaderID < 0 || len(v.Brokers) != len(c.brokers) {
			return false
		}
		return !slices.ContainsFunc(v.Brokers, func(b Broker) bool { return b.Fenced })
	}
}

// createTopic creates testTopic (3 partitions, replication factor rf,
// min.insync.replicas minISR) and waits until every partition has its
// full ISR.
func createTopic(t *testing.T, c *cluster, cl *Client, rf int16, minISR string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cl.adm.CreateTopic(ctx, 3, rf, map[string]*string{"min.insync.replicas": &minISR}, testTopic)
	if err != nil || resp.Err != nil {
		t.Fatalf("creating %s: %v %v", testTopic, err, resp.Err)
	}
	waitFor(t, cl, 60*time.Second, "full ISR of "+testTopic, func(v *View) bool {
		n := 0
		for _, p := range v.Partitions {
			if p.Topic == testTopic && len(p.ISR) == int(rf) {
				n++
			}
		}
		return n == 3 && v.MinISR[testTopic] > 0
	})
}

func expect(t *testing.T, d Decision, want Verdict, contains ...string) {
	t.Helper()
	if d.Verdict != want {
		t.Errorf("verdict %v, want %v: %s", d.Verdict, want, d.Line)
	}
	for _, s := range contains {
		if !strings.Contains(d.Line, s) {
			t.Errorf("line %q does not say %q", d.Line, s)
		}
	}
}

// TestKafkaRealCluster runs the decisions against a real KRaft cluster (3
// controllers, 3 brokers) of the newest pinned Kafka: healthy, a broker
// stopped, two brokers stopped, both restarted, and the quorum without a
// majority. The steps share one cluster and run in order.
func TestKafkaRealCluster(t *testing.T) {
	c := startCluster(t, "4.4.0", 3, 3)
	cl := c.client(t)
	v := waitFor(t, cl, 3*time.Minute, "quorum leader and 3 unfenced brokers", ready(c))
	t.Logf("ready: %s", describe(v))
	createTopic(t, c, cl, 3, "2")
	b1, b2, b3 := c.brokers[0], c.brokers[1], c.brokers[2]

	ok := t.Run("healthy", func(t *testing.T) {
		quorumReads := testutil.ToFloat64(metrics.KafkaRequests.WithLabelValues("DescribeQuorum", "ok"))
		v := cl.Read(context.Background())
		if got := testutil.ToFloat64(metrics.KafkaRequests.WithLabelValues("DescribeQuorum", "ok")) - quorumReads; got != 1 {
			t.Errorf("kafkabot_kafka_requests_total{request=DescribeQuorum,outcome=ok} rose by %v in one Read, want 1", got)
		}
		if !v.FencedListed {
			t.Errorf("Kafka 4.4 answered DescribeCluster below v2: fenced brokers not listed")
		}
		if v.MinISR[testTopic] != 2 {
			t.Errorf("min.insync.replicas of %s read as %d, want 2", testTopic, v.MinISR[testTopic])
		}
		expect(t, BeforeMove(v, b1.id), Pass, "quorum: leader ", "3/3 voters caught up", "brokers: no other fenced", "no partition relies on broker 101 alone")
		v = waitFor(t, cl, 30*time.Second, "broker 101 caught up", func(v *View) bool { return AfterRestart(v, b1.id, 0).Verdict == Pass })
		expect(t, AfterRestart(v, b1.id, 0), Pass, "broker 101: registered, unfenced", "observer lag 0", "no partition under min.insync.replicas because of broker 101")
		t.Logf("healthy: before move: %s", BeforeMove(v, b1.id).Line)
		t.Logf("healthy: after restart: %s", AfterRestart(v, b1.id, 0).Line)
	})
	if !ok {
		return
	}

	ok = t.Run("broker stopped", func(t *testing.T) {
		c.stop(b3)
		v := waitFor(t, cl, time.Minute, "broker 103 fenced", func(v *View) bool {
			i := slices.IndexFunc(v.Brokers, func(b Broker) bool { return b.ID == b3.id })
			return len(v.Problems) == 0 && i >= 0 && v.Brokers[i].Fenced
		})
		t.Logf("broker 103 stopped: %s", describe(v))
		expect(t, BeforeMove(v, b3.id), Pass, "brokers: no other fenced", "no partition relies on broker 103 alone")
		expect(t, BeforeMove(v, b1.id), Fail, "brokers: 103 fenced too")
		expect(t, AfterRestart(v, b3.id, 0), Fail, "broker 103: registered, fenced")
		t.Logf("broker 103 stopped: before move of 101: %s", BeforeMove(v, b1.id).Line)
		t.Logf("broker 103 stopped: after restart of 103: %s", AfterRestart(v, b3.id, 0).Line)
	})
	if !ok {
		return
	}

	ok = t.Run("only in-sync replica", func(t *testing.T) {
		c.stop(b2)
		v := waitFor(t, cl, time.Minute, "ISR of "+testTopic+" down to broker 101", func(v *View) bool {
			n := 0
			for _, p := range v.Partitions {
				if p.Topic == testTopic && slices.Equal(p.ISR, []int32{b1.id}) {
					n++
				}
			}
			// The partition leader may shrink the ISR (replica.lag.time.max.ms)
			// before the controller fences the broker (broker.session.timeout.ms):
			// wait for both.
			i := slices.IndexFunc(v.Brokers, func(b Broker) bool { return b.ID == b2.id })
			return len(v.Problems) == 0 && n == 3 && i >= 0 && v.Brokers[i].Fenced
		})
		t.Logf("brokers 102, 103 stopped: %s", describe(v))
		expect(t, BeforeMove(v, b1.id), Fail, "broker 101 is the only in-sync replica of ", testTopic+"-0")
		expect(t, AfterRestart(v, b2.id, 0), Fail, "broker 102: registered, fenced", "under min.insync.replicas without broker 102: ", testTopic+"-0 (ISR 1 < 2)")
		t.Logf("only ISR: before move of 101: %s", BeforeMove(v, b1.id).Line)
		t.Logf("only ISR: after restart of 102: %s", AfterRestart(v, b2.id, 0).Line)
	})
	if !ok {
		return
	}

	ok = t.Run("restarted broker catches up", func(t *testing.T) {
		c.start(b2)
		start := time.Now()
		// A JVM start on a loaded 2-core machine takes minutes.
		v := waitFor(t, cl, 4*time.Minute, "broker 102 back", func(v *View) bool { return AfterRestart(v, b2.id, 0).Verdict == Pass })
		t.Logf("restart to caught up and back in the ISR: %v; %s", time.Since(start).Round(time.Second), AfterRestart(v, b2.id, 0).Line)
		expect(t, AfterRestart(v, b2.id, 0), Pass, "broker 102: registered, unfenced", "observer lag 0", "no partition under min.insync.replicas because of broker 102")
		expect(t, BeforeMove(v, b1.id), Fail, "brokers: 103 fenced too", "no partition relies on broker 101 alone")
	})
	if !ok {
		return
	}

	t.Run("quorum without a majority defers", func(t *testing.T) {
		v := cl.Read(context.Background())
		if v.Quorum == nil {
			t.Fatalf("no quorum read: %s", describe(v))
		}
		// Stop the leader and one follower: one voter of three is left.
		leader := v.Quorum.LeaderID
		var stopped []int32
		for _, n := range c.controllers {
			if n.id == leader {
				c.stop(n)
				stopped = append(stopped, n.id)
			}
		}
		for _, n := range c.controllers {
			if n.id != leader && len(stopped) < 2 {
				c.stop(n)
				stopped = append(stopped, n.id)
			}
		}
		if len(stopped) != 2 {
			t.Fatalf("leader %d is not one of the controllers; stopped %v", leader, stopped)
		}
		start := time.Now()
		v = waitFor(t, cl, 90*time.Second, "a deferral", func(v *View) bool { return BeforeMove(v, b1.id).Verdict == Defer })
		t.Logf("controllers %v stopped (leader was %d): deferred after %v: %s; view: %s",
			stopped, leader, time.Since(start).Round(time.Second), BeforeMove(v, b1.id).Line, describe(v))
		expect(t, AfterRestart(v, b1.id, 0), Defer)
	})
}

// TestKafka37RealCluster is the quick check on a 3.x line (3.7.2: one
// controller, two brokers). DescribeCluster there is below v2 and lists
// only unfenced brokers, so a stopped broker is "not registered or
// fenced".
func TestKafka37RealCluster(t *testing.T) {
	c := startCluster(t, "3.7.2", 1, 2)
	cl := c.client(t)
	v := waitFor(t, cl, 3*time.Minute, "quorum leader and 2 brokers", ready(c))
	t.Logf("ready: %s", describe(v))
	if v.FencedListed {
		t.Errorf("Kafka 3.7.2 answered DescribeCluster v2 (fenced brokers listed): the fallback is not exercised")
	}
	createTopic(t, c, cl, 2, "1")
	b1, b2 := c.brokers[0], c.brokers[1]
	v = cl.Read(context.Background())
	expect(t, BeforeMove(v, b1.id), Pass, "quorum: leader 1, 1/1 voters caught up", "brokers: no other fenced")
	v = waitFor(t, cl, 30*time.Second, "broker 101 caught up", func(v *View) bool { return AfterRestart(v, b1.id, 0).Verdict == Pass })
	t.Logf("3.7.2 healthy: %s / %s", BeforeMove(v, b1.id).Line, AfterRestart(v, b1.id, 0).Line)

	c.stop(b2)
	v = waitFor(t, cl, time.Minute, "broker 102 gone from the unfenced list", func(v *View) bool {
		return len(v.Problems) == 0 && len(v.Brokers) == 1
	})
	t.Logf("3.7.2 broker 102 stopped: %s", describe(v))
	expect(t, BeforeMove(v, b1.id), Fail, "brokers: 102 not registered or fenced too")
	expect(t, AfterRestart(v, b2.id, 0), Fail, "broker 102: not registered or fenced")
	t.Logf("3.7.2 broker 102 stopped: before move of 101: %s; after restart of 102: %s", BeforeMove(v, b1.id).Line, AfterRestart(v, b2.id, 0).Line)
}
