// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// LogSource says which container instance a Snapshot's log came from.
type LogSource string

// Log sources of an Inspection.
const (
	// LogPrevious is the previous (crashed) instance: what a diagnosis wants.
	LogPrevious LogSource = "previous"
	// LogCurrent is the running or last instance, read because there was
	// no previous one.
	LogCurrent LogSource = "current"
	// LogNone means no log could be read (container never started, or no
	// Kafka container identified).
	LogNone LogSource = "none"
)

// Bounds of what one inspection reads besides the log.
const (
	// inspectEventsListLimit bounds the events list request.
	inspectEventsListLimit = 200
	// inspectMaxEvents is how many of the newest events a Snapshot keeps.
	inspectMaxEvents = 20
	// inspectMaxEventMessage bounds one event line.
	inspectMaxEventMessage = 300
	// inspectReadCapFactor: the log stream is cut after this many times
	// LogTailBytes, whatever the server sends.
	inspectReadCapFactor = 4
)

// Inspection is a Snapshot plus how it was obtained, for people who must
// judge it: where the role and node id came from, which container instance
// the log is from, and what could not be read.
type Inspection struct {
	Snapshot diagnose.Snapshot
	// RoleSource says where Snapshot.Role and Snapshot.NodeID came from.
	RoleSource string
	// LogSource is the container instance the log was read from.
	LogSource LogSource
	// LogBytesReceived is how many bytes the log stream delivered; the
	// Snapshot keeps the last LogTailBytes of them.
	LogBytesReceived int64
	// Notes are plain sentences about gaps: a fallback to the current log,
	// a missing claim, a log cut at the read cap.
	Notes []string
}

// Snapshot reads one Kafka pod for diagnosis: its status, role, node id,
// claims (with PVC phase and access modes), recent events, and the bounded
// tail of the Kafka container's previous log (the current log when there
// is no previous instance; Inspect says which). See Inspect for the cost
// and the errors.
func (c *Client) Snapshot(ctx context.Context, namespace, pod string) (diagnose.Snapshot, error) {
	in, err := c.Inspect(ctx, namespace, pod)
	return in.Snapshot, err
}

// Inspect reads one Kafka pod like Snapshot and also reports how: role
// source, log source and gaps. namespace and pod must be exact (use
// FindPod first).
//
// It costs 4 API requests for a pod with one claim or with several: the
// pod get, one log read, one events list, and one PVC get (one claim) or one
// PVC list of the namespace (several claims). A previous instance whose log
// the kubelet no longer has costs one more log read (the current log).
// The claims, events and log are read at once once the pod is known, so
// the latency is two round trips (the pod, then the three reads), or one
// when FindPod handed the pod over.
//
// Errors: ErrInvalidName, ErrNamespaceNotAllowed (no request made),
// ErrPodNotFound, ErrNotKafkaPod (the bot reads only Kafka pods' logs), and
// wrapped API errors (for example a Forbidden from RBAC) for anything else
// it could not read.
func (c *Client) Inspect(ctx context.Context, namespace, pod string) (Inspection, error) {
	if namespace == "" {
		return Inspection{}, fmt.Errorf("%w: a namespace is required to read pod %s", ErrInvalidName, quoteForUser(pod))
	}
	if err := c.checkTarget(namespace, pod); err != nil {
		return Inspection{}, err
	}
	p, handed := c.handoff.take(namespace, pod)
	if !handed {
		var err error
		p, err = c.cs.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return Inspection{}, fmt.Errorf("%w: pod %s/%s", ErrPodNotFound, namespace, pod)
		}
		if err != nil {
			return Inspection{}, fmt.Errorf("reading pod %s/%s: %w", namespace, pod, err)
		}
	}
	ok, err := c.IsKafka(p)
	if err != nil {
		return Inspection{}, err
	}
	if !ok {
		return Inspection{}, fmt.Errorf("%w: pod %s/%s does not carry the labels of a Kafka pod", ErrNotKafkaPod, namespace, pod)
	}
	return c.inspectPod(ctx, p)
}

// inspectPod reads what a diagnosis needs about p, a Kafka pod already
// read: its status from p, then its claims, events and log tail at once.
// It only reads p.
func (c *Client) inspectPod(ctx context.Context, p *corev1.Pod) (Inspection, error) {
	var in Inspection
	in.Snapshot, in.RoleSource = statusSnapshot(p)
	in.Snapshot.RepairRefusal = c.repairRefusal(p, in.Snapshot.KafkaContainer)
	in.Notes = statusInitNotes(p)
	if err := c.inspectReads(ctx, p, &in); err != nil {
		return Inspection{}, err
	}
	return in, nil
}

// inspectReads reads the claims, the events and the log tail of the
// resolved pod at once: they do not depend on each other, so a diagnosis
// waits for one round trip here instead of three. The first read that
// fails cancels the others; its error is returned (claims, events, log
// in that order when several fail on their own). Notes keep the order of
// a one-by-one read: claims' first, then the log's.
func (c *Client) inspectReads(parent context.Context, p *corev1.Pod, in *Inspection) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		wg         sync.WaitGroup
		errs       [3]error
		claimNotes []string
		events     []string
		log        logRead
	)
	read := func(i int, f func() error) {
		wg.Go(func() {
			if errs[i] = f(); errs[i] != nil {
				cancel()
			}
		})
	}
	claims := in.Snapshot.Claims // only the claims read touches them until Wait
	kafka := in.Snapshot.Kafka()
	container := in.Snapshot.KafkaContainer
	read(0, func() (err error) { claimNotes, err = c.inspectClaims(ctx, p, claims); return err })
	read(1, func() (err error) { events, err = c.inspectEvents(ctx, p); return err })
	read(2, func() (err error) { log, err = c.inspectLog(ctx, p, container, kafka); return err })
	wg.Wait()
	if err := firstCause(parent, errs[:]); err != nil {
		return err
	}
	s := &in.Snapshot
	s.Events = events
	s.Log, s.LogBytes, s.LogTruncated = log.text, len(log.text), log.truncated
	in.LogSource, in.LogBytesReceived = log.source, log.received
	in.Notes = append(append(in.Notes, claimNotes...), log.notes...)
	return nil
}

// firstCause returns the first error of errs that is not only the
// cancellation another read's failure caused (parent itself still live),
// else the first error.
func firstCause(parent context.Context, errs []error) error {
	for _, err := range errs {
		if err != nil && !(errors.Is(err, context.Canceled) && parent.Err() == nil) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// inspectClaims adds access modes and phase to claims (the Snapshot's):
// one get for a single claim, one namespace list for several. It returns
// notes about claims that do not exist.
func (c *Client) inspectClaims(ctx context.Context, pod *corev1.Pod, claims []diagnose.VolumeClaim) ([]string, error) {
	if len(claims) == 0 {
		return nil, nil
	}
	found := map[string]*corev1.PersistentVolumeClaim{}
	pvcs := c.cs.CoreV1().PersistentVolumeClaims(pod.Namespace)
	if len(claims) == 1 {
		pvc, err := pvcs.Get(ctx, claims[0].ClaimName, metav1.GetOptions{})
		switch {
		case err == nil:
			found[pvc.Name] = pvc
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading claim %s/%s of pod %s: %w", pod.Namespace, claims[0].ClaimName, pod.Name, err)
		}
	} else {
		opts := metav1.ListOptions{Limit: findListPageSize}
		for {
			list, err := pvcs.List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing claims in %s for pod %s: %w", pod.Namespace, pod.Name, err)
			}
			for i := range list.Items {
				found[list.Items[i].Name] = &list.Items[i]
			}
			if list.Continue == "" {
				break
			}
			opts.Continue = list.Continue
		}
	}
	var notes []string
	for i := range claims {
		pvc, ok := found[claims[i].ClaimName]
		if !ok {
			notes = append(notes, fmt.Sprintf("claim %s (volume %s) does not exist", claims[i].ClaimName, claims[i].Volume))
			continue
		}
		for _, m := range pvc.Status.AccessModes {
			claims[i].AccessModes = append(claims[i].AccessModes, string(m))
		}
		if len(claims[i].AccessModes) == 0 { // not bound yet: the requested modes
			for _, m := range pvc.Spec.AccessModes {
				claims[i].AccessModes = append(claims[i].AccessModes, string(m))
			}
		}
		claims[i].Phase = string(pvc.Status.Phase)
	}
	return notes, nil
}

// inspectEvents lists the events about this pod instance (by name and UID,
// so events of an earlier pod of the same name are left out) and returns
// the newest, oldest first, as "Warning BackOff: message (x12)".
func (c *Client) inspectEvents(ctx context.Context, pod *corev1.Pod) ([]string, error) {
	sel := fields.Set{
		"involvedObject.kind":      "Pod",
		"involvedObject.namespace": pod.Namespace,
		"involvedObject.name":      pod.Name,
	}
	if pod.UID != "" {
		sel["involvedObject.uid"] = string(pod.UID)
	}
	list, err := c.cs.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: sel.AsSelector().String(),
		Limit:         inspectEventsListLimit,
	})
	if err != nil {
		return nil, fmt.Errorf("listing events of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	var evs []corev1.Event
	for _, e := range list.Items {
		// The server filters already; checking again keeps fakes and
		// caches that ignore field selectors honest.
		o := e.InvolvedObject
		if o.Kind == "Pod" && o.Name == pod.Name && (pod.UID == "" || o.UID == pod.UID) {
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b corev1.Event) int { return inspectEventTime(a).Compare(inspectEventTime(b)) })
	if len(evs) > inspectMaxEvents {
		evs = evs[len(evs)-inspectMaxEvents:]
	}
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, inspectEventLine(e))
	}
	return out, nil
}

// inspectEventTime is when an event last happened.
func inspectEventTime(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func inspectEventLine(e corev1.Event) string {
	msg := strings.Join(strings.Fields(e.Message), " ")
	if len(msg) > inspectMaxEventMessage {
		msg = strings.ToValidUTF8(msg[:inspectMaxEventMessage], "") + "…"
	}
	line := fmt.Sprintf("%s %s: %s", e.Type, e.Reason, msg)
	count := e.Count
	if e.Series != nil && e.Series.Count > count {
		count = e.Series.Count
	}
	if count > 1 {
		line += fmt.Sprintf(" (x%d)", count)
	}
	return line
}

// logRead is what inspectLog read: the kept tail and how it was obtained.
type logRead struct {
	source    LogSource
	received  int64
	text      string
	truncated bool
	notes     []string
}

// inspectLog reads the log tail of container (k is its status, nil when
// the pod has no container recognisable as Kafka): the previous instance
// when the pod has restarted and its current instance has not ended, else
// (or when the kubelet no longer has it) the current one.
//
// The request asks for TailLines lines and at most a read cap of
// inspectReadCapFactor×LogTailBytes, and the stream is cut at that cap
// whatever the server does; the Snapshot keeps the last LogTailBytes. The
// cap is above LogTailBytes on purpose: the kubelet applies limitBytes
// from the start of the tail window, so asking for exactly LogTailBytes
// would drop the newest lines (the crash) whenever the window is larger.
func (c *Client) inspectLog(ctx context.Context, pod *corev1.Pod, container string, k *diagnose.ContainerState) (logRead, error) {
	out := logRead{source: LogNone}
	if container == "" || k == nil {
		out.notes = append(out.notes, "no log read: the pod has no container recognisable as Kafka")
		return out, nil
	}
	// The crashed instance: the previous one while the container waits
	// (CrashLoopBackOff) or runs again, but the current one while it is
	// still reported Terminated (then "previous" is the run before it).
	source := LogCurrent
	if k.Terminated == nil && (k.LastTerminated != nil || k.RestartCount > 0) {
		source = LogPrevious
	}
	stream, err := c.inspectOpenLog(ctx, pod, container, source == LogPrevious)
	if source == LogPrevious && inspectNoLog(err) {
		out.notes = append(out.notes, fmt.Sprintf(
			"the previous instance's log of container %s is gone (%s); read the current instance's log instead",
			container, inspectStatusMessage(err)))
		source = LogCurrent
		stream, err = c.inspectOpenLog(ctx, pod, container, false)
	}
	if inspectNoLog(err) {
		out.notes = append(out.notes, fmt.Sprintf("no log read from container %s: %s", container, inspectStatusMessage(err)))
		return out, nil
	}
	if err != nil {
		return logRead{}, fmt.Errorf("reading %s log of %s/%s container %s: %w", source, pod.Namespace, pod.Name, container, err)
	}
	defer stream.Close()
	if source == LogCurrent && k.RestartCount == 0 && k.LastTerminated == nil {
		out.notes = append(out.notes, fmt.Sprintf("container %s has not restarted: read the current instance's log", container))
	}
	tail, err := readLogTail(stream, c.opts.LogTailBytes, c.inspectReadCap())
	if err != nil {
		return logRead{}, fmt.Errorf("reading %s log of %s/%s container %s: %w", source, pod.Namespace, pod.Name, container, err)
	}
	out.source, out.received, out.text = source, tail.received, string(tail.text)
	out.truncated = tail.cutOlder || tail.hitCap
	if tail.hitCap {
		out.notes = append(out.notes, fmt.Sprintf(
			"stopped reading the log after %d bytes (the read cap): its newest lines may be missing", tail.received))
	}
	return out, nil
}

func (c *Client) inspectReadCap() int64 { return inspectReadCapFactor * c.opts.LogTailBytes }

// inspectOpenLog opens one bounded log stream. It asks for one byte more
// than the read cap, so that readLogTail can tell a tail window larger than
// the cap (newest lines cut by the server) from one that fits exactly.
func (c *Client) inspectOpenLog(ctx context.Context, pod *corev1.Pod, container string, previous bool) (io.ReadCloser, error) {
	limit, lines := c.inspectReadCap()+1, c.opts.LogTailLines
	return c.cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container:  container,
		Previous:   previous,
		TailLines:  &lines,
		LimitBytes: &limit,
	}).Stream(ctx)
}

// inspectNoLog reports whether err means "this log does not exist"
// (previous instance gone, container waiting to start) rather than a
// failure to read it. The API server answers those with 400 Bad Request.
func inspectNoLog(err error) bool {
	return err != nil && (apierrors.IsBadRequest(err) || apierrors.IsNotFound(err))
}

func inspectStatusMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}

// logTail is the end of a log stream.
type logTail struct {
	text     []byte
	received int64
	cutOlder bool // older output was dropped to keep the last `keep` bytes
	hitCap   bool // the stream had more than the read cap; reading stopped
}

// readLogTail reads r up to limit bytes and keeps the last keep bytes.
// When it drops older output it also drops the partial first line, so the
// kept text starts on a line boundary. It holds at most 2×keep bytes.
func readLogTail(r io.Reader, keep, limit int64) (logTail, error) {
	var t logTail
	buf := make([]byte, 0, min(keep, 64<<10))
	chunk := make([]byte, 32<<10)
	lr := io.LimitReader(r, limit+1) // one byte more tells "over the cap" from "exactly the cap"
	for {
		n, err := lr.Read(chunk)
		if n > 0 {
			t.received += int64(n)
			buf = append(buf, chunk[:n]...)
			if int64(len(buf)) > 2*keep {
				buf = append(buf[:0], buf[int64(len(buf))-keep:]...)
				t.cutOlder = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return logTail{}, err
		}
	}
	if t.received > limit {
		t.hitCap = true
		t.received = limit
		buf = buf[:len(buf)-1]
	}
	if int64(len(buf)) > keep {
		buf = buf[int64(len(buf))-keep:]
		t.cutOlder = true
	}
	if t.cutOlder {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 && i < len(buf)-1 {
			buf = buf[i+1:]
		}
	}
	t.text = buf
	return t, nil
}
