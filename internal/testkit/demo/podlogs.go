// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
)

// BotClientset is the clientset the bot gets: the demo's fake clientset,
// except that pods/log reads are real REST requests
// (GET /api/v1/namespaces/NS/pods/POD/log?container=…&previous=…&tailLines=…&limitBytes=…),
// built by client-go's own request code and answered in process from the
// kubelet stand-in's log store, cut and refused as a kubelet does.
// client-go's fake answers "fake logs" to every read, which would leave the
// bot's real log-reading code nothing to diagnose.
func (c *Cluster) BotClientset() (kubernetes.Interface, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/{namespace}/pods/{pod}/log", c.servePodLog)
	rc, err := rest.RESTClientFor(&rest.Config{
		Host:    "https://kube-apiserver.demo.invalid",
		APIPath: "/api",
		ContentConfig: rest.ContentConfig{
			GroupVersion:         &corev1.SchemeGroupVersion,
			NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		},
		Transport: inProcess{mux},
	})
	if err != nil {
		return nil, fmt.Errorf("building the in-process pods/log client: %w", err)
	}
	return logServingClientset{Interface: c.Clientset, logs: rc}, nil
}

// inProcess is an http.RoundTripper that calls a handler directly: no
// socket is opened.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// servePodLog answers one pods/log read as the API server relays the
// kubelet's answer: the stored log cut to tailLines then limitBytes, or a
// 400 Status when the container has no such log.
func (c *Cluster) servePodLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), q.Get("container")
	previous := q.Get("previous") == "true"
	tail, err := optionalInt(q.Get("tailLines"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest("tailLines: "+err.Error()))
		return
	}
	limit, err := optionalInt(q.Get("limitBytes"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest("limitBytes: "+err.Error()))
		return
	}
	text, ok := c.Kubelet.Logs().Get(ns, pod, container, previous)
	if !ok && !previous {
		text, ok = c.currentLogAfterRestart(ns, pod)
	}
	if !ok {
		// The kubelet's wording, which the API server passes on as a 400.
		msg := fmt.Sprintf("container %q in pod %q is waiting to start: no log yet", container, pod)
		if previous {
			msg = fmt.Sprintf("previous terminated container %q in pod %q not found", container, pod)
		}
		writeStatus(w, apierrors.NewBadRequest(msg))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, kubesim.Window(text, tail, limit))
}

// optionalInt parses a non-negative integer query value; "" is -1 (unset).
func optionalInt(s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return n, nil
}

// writeStatus writes err as the API server's JSON Status.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(body)
}

// logServingClientset is a clientset whose pods/log reads go to logs.
type logServingClientset struct {
	kubernetes.Interface
	logs rest.Interface
}

// IsWatchListSemanticsUnSupported passes on what the fake clientset tells
// client-go's reflectors: it cannot stream lists, so they list then watch.
func (c logServingClientset) IsWatchListSemanticsUnSupported() bool {
	return true
}

func (c logServingClientset) CoreV1() corev1client.CoreV1Interface {
	return logServingCoreV1{CoreV1Interface: c.Interface.CoreV1(), logs: c.logs}
}

type logServingCoreV1 struct {
	corev1client.CoreV1Interface
	logs rest.Interface
}

func (c logServingCoreV1) Pods(namespace string) corev1client.PodInterface {
	return logServingPods{PodInterface: c.CoreV1Interface.Pods(namespace), namespace: namespace, logs: c.logs}
}

type logServingPods struct {
	corev1client.PodInterface
	namespace string
	logs      rest.Interface
}

// GetLogs builds the request exactly as client-go's typed client does.
func (p logServingPods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	return p.logs.Get().Namespace(p.namespace).Name(name).Resource("pods").SubResource("log").
		VersionedParams(opts, scheme.ParameterCodec)
}
