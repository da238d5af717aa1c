// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	fakerest "k8s.io/client-go/rest/fake"
	k8stesting "k8s.io/client-go/testing"
)

// gateHang bounds a gated read's wait. It only stops a test whose reads
// never meet (one-by-one reads); no test asserts a duration.
const gateHang = 5 * time.Second

// readGate holds every gated read until want of them have started, so
// reads made one after another never get through.
type readGate struct {
	mu      sync.Mutex
	want    int
	arrived int
	all     chan struct{}
}

func newReadGate(want int) *readGate { return &readGate{want: want, all: make(chan struct{})} }

var errNotConcurrent = errors.New("the reads were not in flight together")

func (g *readGate) wait(ctx context.Context) error {
	g.mu.Lock()
	g.arrived++
	if g.arrived == g.want {
		close(g.all)
	}
	n := g.arrived
	g.mu.Unlock()
	t := time.NewTimer(gateHang)
	defer t.Stop()
	select {
	case <-g.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: %d of %d started", errNotConcurrent, n, g.want)
	}
}

// gatedClientset passes the claim, event and log reads of a fake
// clientset through gates, outside the fake's lock (which would otherwise
// serialise them). A nil gate lets the read through.
type gatedClientset struct {
	kubernetes.Interface
	claims, events, logs *readGate
	log                  []byte
}

func (g *gatedClientset) CoreV1() corev1client.CoreV1Interface {
	return &gatedCore{CoreV1Interface: g.Interface.CoreV1(), g: g}
}

type gatedCore struct {
	corev1client.CoreV1Interface
	g *gatedClientset
}

func (c *gatedCore) Pods(ns string) corev1client.PodInterface {
	return &gatedPods{PodInterface: c.CoreV1Interface.Pods(ns), g: c.g, ns: ns}
}

func (c *gatedCore) Events(ns string) corev1client.EventInterface {
	return &gatedEvents{EventInterface: c.CoreV1Interface.Events(ns), g: c.g}
}

func (c *gatedCore) PersistentVolumeClaims(ns string) corev1client.PersistentVolumeClaimInterface {
	return &gatedClaims{PersistentVolumeClaimInterface: c.CoreV1Interface.PersistentVolumeClaims(ns), g: c.g}
}

func pass(ctx context.Context, g *readGate) error {
	if g == nil {
		return nil
	}
	return g.wait(ctx)
}

type gatedClaims struct {
	corev1client.PersistentVolumeClaimInterface
	g *gatedClientset
}

func (c *gatedClaims) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.PersistentVolumeClaim, error) {
	if err := pass(ctx, c.g.claims); err != nil {
		return nil, err
	}
	return c.PersistentVolumeClaimInterface.Get(ctx, name, o)
}

type gatedEvents struct {
	corev1client.EventInterface
	g *gatedClientset
}

func (e *gatedEvents) List(ctx context.Context, o metav1.ListOptions) (*corev1.EventList, error) {
	if err := pass(ctx, e.g.events); err != nil {
		return nil, err
	}
	return e.EventInterface.List(ctx, o)
}

type gatedPods struct {
	corev1client.PodInterface
	g  *gatedClientset
	ns string
}

// GetLogs serves g.log through client-go's REST stream path, after the gate.
func (p *gatedPods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	client := &fakerest.RESTClient{
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         corev1.SchemeGroupVersion,
		VersionedAPIPath:     fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log", p.ns, name),
		Client: fakerest.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			if err := pass(req.Context(), p.g.logs); err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": []string{"text/plain"}},
				Body: io.NopCloser(bytes.NewReader(p.g.log))}, nil
		}),
	}
	return client.Request()
}

// TestInspectReadsAtOnce holds the claim, event and log reads until all
// three are in flight: Inspect reading them one after another would never
// get the first one through. The result must equal a one-by-one read's.
func TestInspectReadsAtOnce(t *testing.T) {
	crash := inspReadCrashLog(t)
	gate := newReadGate(3)
	cs := &gatedClientset{Interface: fake.NewClientset(inspSeedObjects()...), claims: gate, events: gate, logs: gate, log: crash}
	opts := Options{Namespaces: []string{"kafka"}, LogTailBytes: 64 << 10, LogTailLines: 500}
	got, err := New(cs, opts).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}

	// The same pod through the plain fake, whose lock serialises every read.
	plain := fake.NewClientset(inspSeedObjects()...)
	(&inspLogServer{previous: crash}).install(plain)
	want, err := New(plain, opts).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatalf("Inspect on the plain fake: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("concurrent Inspect = %+v\nwant the one-by-one result %+v", got, want)
	}
	if got.Snapshot.Claims[0].Phase != "Bound" || len(got.Snapshot.Events) == 0 || got.LogSource != LogPrevious || got.Snapshot.LogBytes == 0 {
		t.Errorf("snapshot lacks what the three reads bring: claims %+v, %d events, log %s of %d bytes",
			got.Snapshot.Claims, len(got.Snapshot.Events), got.LogSource, got.Snapshot.LogBytes)
	}
}

// TestInspectFailedReadCancelsTheOthers: events are forbidden while the
// claim and log reads hang until cancelled. Inspect must cancel them and
// return the events' Forbidden error, not a cancellation (and not the
// hang guard's error, which it would get if nothing cancelled them).
func TestInspectFailedReadCancelsTheOthers(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New(`cannot list resource "events"`))
	base := fake.NewClientset(inspSeedObjects()...)
	base.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
	never := newReadGate(99) // never opens: only cancellation (or the hang guard) ends these reads
	cs := &gatedClientset{Interface: base, claims: never, logs: never, log: []byte("x\n")}
	_, err := New(cs, Options{Namespaces: []string{"kafka"}}).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if !apierrors.IsForbidden(err) {
		t.Fatalf("Inspect error = %v, want the events' Forbidden", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, errNotConcurrent) {
		t.Errorf("error %v should be the failed read's alone", err)
	}
}

// TestInspectCallerCancelled: when the caller's context ends, the error
// says so (a cancellation, not something made up).
func TestInspectCallerCancelled(t *testing.T) {
	never := newReadGate(99)
	cs := &gatedClientset{Interface: fake.NewClientset(inspSeedObjects()...), claims: never, events: never, logs: never, log: []byte("x\n")}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			never.mu.Lock()
			n := never.arrived
			never.mu.Unlock()
			if n == 3 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := New(cs, Options{Namespaces: []string{"kafka"}}).Inspect(ctx, "kafka", "foobar-kafka-broker-0")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Inspect error = %v, want a cancellation", err)
	}
}
