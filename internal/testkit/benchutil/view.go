// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package benchutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	fakerest "k8s.io/client-go/rest/fake"
	k8stesting "k8s.io/client-go/testing"
)

// LogServer serves the container log of one pods/log request. It returns
// ErrNoLog (possibly wrapped) when the container has no such log; the
// request then fails with 400 Bad Request, as the API server answers.
type LogServer func(namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)

// ErrNoLog is what a LogServer returns for a log that does not exist.
var ErrNoLog = fmt.Errorf("no such container log")

// ViewOptions configure a View.
type ViewOptions struct {
	// Delay is slept before every request to the pods (log streams
	// included), events and persistentvolumeclaims APIs: every request of
	// a diagnosis. Requests to other resources are counted, not delayed.
	Delay time.Duration
	// Logs serves container logs; nil serves every log as empty.
	Logs LogServer
	// Before, when set, is called after Delay and before each of those
	// requests with its resource ("pods", "pods/log", "events",
	// "persistentvolumeclaims"); an error fails the request. Tests use it
	// to hold or fail chosen reads.
	Before func(ctx context.Context, resource string) error
}

// View is the bot's clientset over a world's objects. It keeps its own
// request log (Actions, Requests), so only the bot's requests are counted,
// and it meters the bytes the bot receives.
type View struct {
	*fake.Clientset
	opts        ViewOptions
	objectBytes atomic.Int64
	logBytes    atomic.Int64
	delayed     atomic.Int64
}

// NewView returns the bot's clientset over the objects of tracker (a
// world's Tracker(), or a tracker filled directly for big clusters).
func NewView(tracker k8stesting.ObjectTracker, opts ViewOptions) *View {
	v := &View{Clientset: &fake.Clientset{}, opts: opts}
	objects := fakeapi.Reaction(tracker)
	v.AddReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "log" {
			return true, &runtime.Unknown{}, nil // the stream itself is served by GetLogs below
		}
		handled, ret, err := objects(a)
		if err == nil && ret != nil {
			if b, jerr := json.Marshal(ret); jerr == nil {
				v.objectBytes.Add(int64(len(b)))
			}
		}
		return handled, ret, err
	})
	v.AddWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := a.(k8stesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := tracker.Watch(a.GetResource(), a.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, w, nil
	})
	return v
}

// Stats are the requests a View served and the bytes it returned.
type Stats struct {
	// Requests counts every request, watches and log streams included.
	Requests int
	// ByKind counts requests by "verb resource[/subresource]".
	ByKind map[string]int
	// ObjectBytes is the JSON size of the objects returned by gets, lists,
	// creates and updates (an estimate of what a JSON client receives;
	// watch events are not counted).
	ObjectBytes int64
	// LogBytes is what the bot read from log streams.
	LogBytes int64
	// Delayed counts the requests that slept Delay.
	Delayed int64
}

// Stats returns what the View served since it was made or last Reset.
func (v *View) Stats() Stats {
	s := Stats{ByKind: map[string]int{}, ObjectBytes: v.objectBytes.Load(), LogBytes: v.logBytes.Load(), Delayed: v.delayed.Load()}
	for _, a := range v.Actions() {
		k := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			k += "/" + sub
		}
		s.ByKind[k]++
		s.Requests++
	}
	return s
}

// Reset forgets the requests and bytes counted so far.
func (v *View) Reset() {
	v.ClearActions()
	v.objectBytes.Store(0)
	v.logBytes.Store(0)
	v.delayed.Store(0)
}

// wait sleeps Delay (or until ctx ends), counting a delayed request, then
// asks the Before hook about a request to resource.
func (v *View) wait(ctx context.Context, resource string) error {
	if v.opts.Delay > 0 {
		v.delayed.Add(1)
		t := time.NewTimer(v.opts.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	if v.opts.Before != nil {
		return v.opts.Before(ctx, resource)
	}
	return nil
}

// CoreV1 returns the core client whose pods, events and claims requests
// are delayed and whose log streams are served by the LogServer.
func (v *View) CoreV1() corev1client.CoreV1Interface {
	return &coreV1{CoreV1Interface: v.Clientset.CoreV1(), v: v}
}

type coreV1 struct {
	corev1client.CoreV1Interface
	v *View
}

func (c *coreV1) Pods(ns string) corev1client.PodInterface {
	return &pods{PodInterface: c.CoreV1Interface.Pods(ns), v: c.v, ns: ns}
}

func (c *coreV1) Events(ns string) corev1client.EventInterface {
	return &events{EventInterface: c.CoreV1Interface.Events(ns), v: c.v}
}

func (c *coreV1) PersistentVolumeClaims(ns string) corev1client.PersistentVolumeClaimInterface {
	return &claims{PersistentVolumeClaimInterface: c.CoreV1Interface.PersistentVolumeClaims(ns), v: c.v}
}

// pods delays (and hooks) every pods request; GetLogs streams from the LogServer.
type pods struct {
	corev1client.PodInterface
	v  *View
	ns string
}

func (p *pods) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.Pod, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.Get(ctx, name, o)
}

func (p *pods) List(ctx context.Context, o metav1.ListOptions) (*corev1.PodList, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.List(ctx, o)
}

func (p *pods) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.Watch(ctx, o)
}

func (p *pods) Create(ctx context.Context, pod *corev1.Pod, o metav1.CreateOptions) (*corev1.Pod, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.Create(ctx, pod, o)
}

func (p *pods) Update(ctx context.Context, pod *corev1.Pod, o metav1.UpdateOptions) (*corev1.Pod, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.Update(ctx, pod, o)
}

func (p *pods) UpdateStatus(ctx context.Context, pod *corev1.Pod, o metav1.UpdateOptions) (*corev1.Pod, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.UpdateStatus(ctx, pod, o)
}

func (p *pods) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return err
	}
	return p.PodInterface.Delete(ctx, name, o)
}

func (p *pods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*corev1.Pod, error) {
	if err := p.v.wait(ctx, "pods"); err != nil {
		return nil, err
	}
	return p.PodInterface.Patch(ctx, name, pt, data, o, sub...)
}

// GetLogs records the request like the fake does, then returns a request
// whose stream comes from the LogServer through client-go's REST client,
// so status errors and stream handling are the real ones.
func (p *pods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	_ = p.PodInterface.GetLogs(name, opts) // records the request in the View's log
	o := opts.DeepCopy()
	client := &fakerest.RESTClient{
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         corev1.SchemeGroupVersion,
		VersionedAPIPath:     fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log", p.ns, name),
		Client: fakerest.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			if err := p.v.wait(req.Context(), "pods/log"); err != nil {
				return nil, err
			}
			return p.v.serveLog(p.ns, name, o)
		}),
	}
	return client.Request()
}

func (v *View) serveLog(ns, pod string, opts *corev1.PodLogOptions) (*http.Response, error) {
	var body io.ReadCloser = io.NopCloser(strings.NewReader(""))
	if v.opts.Logs != nil {
		b, err := v.opts.Logs(ns, pod, opts)
		if err != nil {
			status := metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest,
				Message: fmt.Sprintf("container %q in pod %q: %v", opts.Container, pod, err),
			}
			data, _ := json.Marshal(status)
			return &http.Response{
				StatusCode: http.StatusBadRequest,
				Header:     http.Header{"Content-Type": []string{"application/json"}},
				Body:       io.NopCloser(strings.NewReader(string(data))),
			}, nil
		}
		body = b
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"text/plain"}},
		Body:       &countingBody{ReadCloser: body, n: &v.logBytes},
	}, nil
}

// countingBody counts the bytes read from a log stream.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// events delays (and hooks) every events request.
type events struct {
	corev1client.EventInterface
	v *View
}

func (e *events) List(ctx context.Context, o metav1.ListOptions) (*corev1.EventList, error) {
	if err := e.v.wait(ctx, "events"); err != nil {
		return nil, err
	}
	return e.EventInterface.List(ctx, o)
}

func (e *events) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.Event, error) {
	if err := e.v.wait(ctx, "events"); err != nil {
		return nil, err
	}
	return e.EventInterface.Get(ctx, name, o)
}

func (e *events) Create(ctx context.Context, ev *corev1.Event, o metav1.CreateOptions) (*corev1.Event, error) {
	if err := e.v.wait(ctx, "events"); err != nil {
		return nil, err
	}
	return e.EventInterface.Create(ctx, ev, o)
}

// claims delays (and hooks) every persistentvolumeclaims request.
type claims struct {
	corev1client.PersistentVolumeClaimInterface
	v *View
}

func (c *claims) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.PersistentVolumeClaim, error) {
	if err := c.v.wait(ctx, "persistentvolumeclaims"); err != nil {
		return nil, err
	}
	return c.PersistentVolumeClaimInterface.Get(ctx, name, o)
}

func (c *claims) List(ctx context.Context, o metav1.ListOptions) (*corev1.PersistentVolumeClaimList, error) {
	if err := c.v.wait(ctx, "persistentvolumeclaims"); err != nil {
		return nil, err
	}
	return c.PersistentVolumeClaimInterface.List(ctx, o)
}
