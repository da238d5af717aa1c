// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kafka-chatops/kafkabot/internal/alert"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// watchFault is what a watchBreaker does to new pod watch requests.
type watchFault int32

const (
	// watchPass lets watches through.
	watchPass watchFault = iota
	// watchRefuse fails them as if the API server were unreachable
	// (connection refused): the reflector backs off and tries again.
	watchRefuse
	// watchGoneOnce answers the first watch of each label selector that
	// resumes from a resourceVersion with 410 Gone ("too old resource
	// version"), as when etcd compacted past it: the reflector must start
	// over from the current state. Later ones pass.
	watchGoneOnce
)

// watchBreaker is a client transport wrapper (rest.Config.Wrap) that can
// cut the pod watches in flight and fail new ones, the faults of a
// network partition, an API server restart or an etcd compaction. Other
// requests pass untouched.
type watchBreaker struct {
	fault watchFault // atomic: a watchFault

	mu     sync.Mutex
	active map[int64]*droppableBody
	next   int64
	// cuts counts the calls of cut.
	cuts int
	// expired are the label selectors answered 410 Gone.
	expired map[string]bool

	// opened counts pod watch responses served by the API server;
	// refused and gone count the requests the breaker failed; lists
	// counts pod list requests (plain, or watch-list streams).
	opened, refused, gone, lists atomic.Int64
}

func newWatchBreaker() *watchBreaker {
	return &watchBreaker{active: map[int64]*droppableBody{}, expired: map[string]bool{}}
}

// wrap is the rest.Config transport wrapper.
func (b *watchBreaker) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if !strings.HasSuffix(req.URL.Path, "/pods") {
			return rt.RoundTrip(req)
		}
		q := req.URL.Query()
		if q.Get("watch") != "true" || q.Get("sendInitialEvents") == "true" {
			b.lists.Add(1) // a list, or a watch-list stream
		}
		if q.Get("watch") != "true" {
			return rt.RoundTrip(req)
		}
		// Read before the fault, so that a cut racing with this request is
		// seen below.
		b.mu.Lock()
		cuts := b.cuts
		b.mu.Unlock()
		switch watchFault(atomic.LoadInt32((*int32)(&b.fault))) {
		case watchRefuse:
			b.refused.Add(1)
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		case watchGoneOnce:
			if b.expire(q.Get("labelSelector"), q.Get("resourceVersion")) {
				return goneResponse(req), nil
			}
		}
		ctx, cancel := context.WithCancel(req.Context())
		resp, err := rt.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		body := &droppableBody{ReadCloser: resp.Body, abort: cancel}
		b.mu.Lock()
		id := b.next
		b.next++
		b.active[id] = body
		if b.cuts != cuts { // a cut came while this watch was being opened
			body.drop()
		}
		b.mu.Unlock()
		b.opened.Add(1)
		body.done = func() {
			b.mu.Lock()
			delete(b.active, id)
			b.mu.Unlock()
			cancel()
		}
		resp.Body = body
		return resp, nil
	})
}

// expire reports whether a watch of selector from resourceVersion rv gets
// 410 Gone: the first one of each selector that names a resourceVersion.
func (b *watchBreaker) expire(selector, rv string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rv == "" || b.expired[selector] {
		return false
	}
	b.expired[selector] = true
	b.gone.Add(1)
	return true
}

// wasExpired reports whether watches of selector were answered 410 Gone.
func (b *watchBreaker) wasExpired(selector string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.expired[selector]
}

// set makes new pod watch requests meet fault.
func (b *watchBreaker) set(fault watchFault) { atomic.StoreInt32((*int32)(&b.fault), int32(fault)) }

// cut ends every pod watch in flight, as a dropped connection does, and
// returns how many it cut.
func (b *watchBreaker) cut() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cuts++
	n := len(b.active)
	for id, body := range b.active {
		body.drop()
		delete(b.active, id)
	}
	return n
}

// activeWatches is how many pod watches are in flight.
func (b *watchBreaker) activeWatches() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.active)
}

// goneResponse is the API server's answer to a watch from a compacted
// resourceVersion.
func goneResponse(req *http.Request) *http.Response {
	status, _ := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Reason: metav1.StatusReasonExpired, Code: http.StatusGone,
		Message: "too old resource version: 1 (2)",
	})
	return &http.Response{
		StatusCode: http.StatusGone, Status: "410 Gone", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": []string{"application/json"}},
		Body:    io.NopCloser(strings.NewReader(string(status))),
		Request: req, ContentLength: int64(len(status)),
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// droppableBody is a watch response body whose connection the test can
// drop: a read in progress or to come then fails with io.ErrUnexpectedEOF,
// what a reset connection gives the watch decoder. done runs once, when
// the body is closed.
type droppableBody struct {
	io.ReadCloser
	abort   context.CancelFunc // ends the request, unblocking a read
	dropped atomic.Bool
	once    sync.Once
	done    func()
}

func (b *droppableBody) drop() {
	b.dropped.Store(true)
	b.abort()
}

func (b *droppableBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.dropped.Load() {
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *droppableBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// queuedPods drains the pod informer's workqueue as the sweep's worker
// does, and remembers each key with the cached pod's detection when it was
// handled.
type queuedPods struct {
	mu   sync.Mutex
	seen []queuedPod
}

type queuedPod struct {
	key       kube.PodKey
	detection sweep.Detection
}

func (q *queuedPods) drain(inf *kube.PodInformer, det *sweep.Detector) {
	queue := inf.Queue()
	for {
		k, shutdown := queue.Get()
		if shutdown {
			return
		}
		var d sweep.Detection
		if pod, ok := inf.Get(k); ok {
			d = det.Observe(pod, time.Now())
		}
		q.mu.Lock()
		q.seen = append(q.seen, queuedPod{key: k, detection: d})
		q.mu.Unlock()
		queue.Forget(k)
		queue.Done(k)
	}
}

// detected reports whether key was queued and detected with reason.
func (q *queuedPods) detected(key kube.PodKey, reason alert.Reason) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, s := range q.seen {
		if s.key == key && s.detection.Reason == reason {
			return true
		}
	}
	return false
}

// bitnamiSelector is the built-in selector the test's broker matches.
const bitnamiSelector = "app.kubernetes.io/name=kafka"

// watchFaultSeq keeps namespaces unique under -count=N.
var watchFaultSeq atomic.Int64

// TestInformerResyncsAfterWatchDrop: the sweep's pod informer, as the bot's
// ServiceAccount on the real API server, loses its watch, and a broker
// enters CrashLoopBackOff while no watch is open (the connection dropped
// as by a reset, new watches refused). When the API server can be reached
// again the informer catches up, from its last resourceVersion or, when
// that has expired (410 Gone), from scratch, so the crash is queued and the
// sweep's detector sees CrashLoopBackOff in the cache: no crash is missed.
// The informer then watches live again: the broker's recovery arrives
// through it too.
func TestInformerResyncsAfterWatchDrop(t *testing.T) {
	cases := []struct {
		name string
		// resume is the fault the breaker switches to when the outage ends.
		resume watchFault
		// expired: the first watch after the outage is answered 410 Gone.
		expired bool
	}{
		{name: "dropped-and-refused-then-back", resume: watchPass},
		{name: "dropped-and-refused-then-resource-version-expired", resume: watchGoneOnce, expired: true},
	}
	env := testenv.Start(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			ns := env.KafkaNamespace(t, fmt.Sprintf("kafka-watchdrop-%d", watchFaultSeq.Add(1)), nil)
			k := startKubelet(t, env, ns)
			const pod = "kafka-broker-7"
			key := kube.PodKey{Namespace: ns, Name: pod}
			if _, err := env.Clientset.CoreV1().Pods(ns).Create(ctx, watchDropBroker(pod), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, "the broker to be scheduled", func(ctx context.Context) (bool, error) {
				p, err := env.Clientset.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
				return err == nil && p.Spec.NodeName == k.NodeName(), err
			})
			if err := k.Ready(ctx, ns, pod); err != nil {
				t.Fatal(err)
			}

			// The informer, as the bot, through the breaker.
			breaker := newWatchBreaker()
			cfg := rest.CopyConfig(env.BotConfig())
			cfg.Wrap(breaker.wrap)
			botCS, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			inf, err := kube.New(botCS, kube.Options{Namespaces: []string{ns}}).NewPodInformer(kube.PodInformerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(context.Background())
			inf.Start(runCtx)
			queued := &queuedPods{}
			det := sweep.NewDetector(sweep.DefaultRestartThreshold, sweep.DefaultRestartWindow)
			drained := make(chan struct{})
			go func() { defer close(drained); queued.drain(inf, det) }()
			t.Cleanup(func() { stop(); <-drained })
			if err := inf.WaitForCacheSync(ctx); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, "the informer to cache the Ready broker and watch", func(context.Context) (bool, error) {
				p, ok := inf.Get(key)
				return ok && kube.PodReady(p) && breaker.activeWatches() > 0, nil
			})

			// The outage: the watch is cut and new ones are refused while
			// the broker starts crash-looping.
			breaker.set(watchRefuse)
			if n := breaker.cut(); n == 0 {
				t.Fatal("no pod watch was in flight to cut")
			}
			refusedAtCrash := breaker.refused.Load()
			if err := k.CrashLoop(ctx, ns, pod, metadataCrash); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, "the informer to retry its watch during the outage", func(context.Context) (bool, error) {
				return breaker.refused.Load() > refusedAtCrash, nil
			})
			if p, _ := inf.Get(key); p == nil || !kube.PodReady(p) || queued.detected(key, alert.ReasonCrashLoop) {
				t.Fatal("the informer saw the crash although no watch was open: the outage did not cut it off")
			}

			// The API server is back: the crash is not missed.
			openedBefore, listsBefore := breaker.opened.Load(), breaker.lists.Load()
			breaker.set(tc.resume)
			testenv.WaitFor(t, "the crash to be queued and detected after the outage", func(context.Context) (bool, error) {
				return queued.detected(key, alert.ReasonCrashLoop), nil
			})
			if breaker.opened.Load() <= openedBefore {
				t.Errorf("the crash was detected without a new watch (%d watches opened in all)", breaker.opened.Load())
			}
			// (The broker matches the Bitnami selector; its informer is the one
			// that must have caught up.)
			if got := breaker.wasExpired(bitnamiSelector); got != tc.expired {
				t.Errorf("the Bitnami pod watch was answered 410 Gone: %v, want %v", got, tc.expired)
			}
			// (client-go's reflector streams the state again after any
			// dropped watch, from its last resourceVersion, as a watch-list;
			// after a 410 it must start over from the current state.)
			if breaker.lists.Load() == listsBefore {
				t.Errorf("the informer caught up without listing again (%d lists in all)", breaker.lists.Load())
			}

			// And it watches live again: the recovery arrives too.
			testenv.WaitFor(t, "a pod watch to be open again", func(context.Context) (bool, error) {
				return breaker.activeWatches() > 0, nil
			})
			if err := k.Ready(ctx, ns, pod); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, "the informer to see the broker Ready again", func(context.Context) (bool, error) {
				p, ok := inf.Get(key)
				return ok && kube.PodReady(p), nil
			})
			t.Logf("pod watches opened %d, refused %d, answered 410 %d; pod lists %d",
				breaker.opened.Load(), breaker.refused.Load(), breaker.gone.Load(), breaker.lists.Load())
		})
	}
}

// watchDropBroker is a Bitnami-labelled broker pod of a StatefulSet.
func watchDropBroker(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "kafka",
				"app.kubernetes.io/component": "broker",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kafka-broker",
				UID: "00000000-0000-0000-0000-000000000007", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "kafka", Image: "bitnami/kafka:3.7.0",
				Env: []corev1.EnvVar{{Name: "KAFKA_CFG_PROCESS_ROLES", Value: "broker"}, {Name: "KAFKA_CFG_NODE_ID", Value: "7"}},
			}},
		},
	}
}
