// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// Labels that tie a repair's objects (debug pod, Lease) to the bot and to
// the repair. recovery.DebugPod sets the same keys on the debug pod.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByBot   = "kafkabot"
	LabelRepairID  = "kafkabot/repair-id"
	LabelBroker    = "kafkabot/broker"
	LabelCluster   = "kafkabot/cluster"
)

// apiBackoff bounds the retries of a transient API error: four attempts
// within about two seconds.
var apiBackoff = wait.Backoff{Steps: 4, Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1}

// IsTransient reports whether err is worth retrying: throttling, server
// errors and timeouts. Conflicts are not included; callers that can
// re-read and retry a conflict say so explicitly.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// withRetry runs call, repeating it after a transient error within
// apiBackoff, and returns its last result. Only for calls that are safe to
// repeat (reads, updates guarded by a resourceVersion, deletes).
func withRetry[T any](call func() (T, error)) (T, error) {
	var out T
	err := retry.OnError(apiBackoff, IsTransient, func() error {
		var err error
		out, err = call()
		return err
	})
	return out, err
}

// mayHaveSucceeded reports whether a failed create may still have been
// applied by the server (the request reached it but the answer was lost).
func mayHaveSucceeded(err error) bool {
	if apierrors.IsTooManyRequests(err) {
		return false // rejected before it was processed
	}
	return IsTransient(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF)
}

// FetchPod reads one pod, retrying transient errors.
func (c *Client) FetchPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod, err := withRetry(func() (*corev1.Pod, error) {
		return c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	})
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// ListPodsByLabel lists the pods of a namespace matching a label selector,
// retrying transient errors.
func (c *Client) ListPodsByLabel(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	list, err := withRetry(func() (*corev1.PodList, error) {
		return c.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	})
	if err != nil {
		return nil, fmt.Errorf("listing pods %q in %s: %w", selector, namespace, err)
	}
	return list.Items, nil
}

// CreateRepairPod creates a pod the bot owns. It never blindly retries a
// create: when the answer is lost (timeout, 5xx) it reads the pod back and
// accepts it only when it carries the same kafkabot/repair-id label. An
// existing pod of the same repair is returned as is (idempotent re-run).
func (c *Client) CreateRepairPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	created, err := c.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) && !mayHaveSucceeded(err) {
		return nil, fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	existing, getErr := c.FetchPod(ctx, pod.Namespace, pod.Name)
	if getErr != nil {
		return nil, fmt.Errorf("creating pod %s/%s: %w (and checking whether it exists: %v)", pod.Namespace, pod.Name, err, getErr)
	}
	if want := pod.Labels[LabelRepairID]; want == "" || existing.Labels[LabelRepairID] != want {
		return nil, fmt.Errorf("creating pod %s/%s: a pod of that name exists and belongs to repair %q: %w",
			pod.Namespace, pod.Name, existing.Labels[LabelRepairID], err)
	}
	return existing, nil
}

// AnnotatePod sets one annotation on the pod namespace/name, only while it
// has the given UID: the merge patch carries the UID, which the API server
// will not change, so a pod recreated under the same name is refused. Used
// for the repair's go signal, the bot's only write to a running debug pod.
func (c *Client) AnnotatePod(ctx context.Context, namespace, name string, uid types.UID, key, value string) (*corev1.Pod, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         uid,
		"annotations": map[string]string{key: value},
	}})
	if err != nil {
		return nil, fmt.Errorf("annotating pod %s/%s: %w", namespace, name, err)
	}
	pod, err := withRetry(func() (*corev1.Pod, error) {
		return c.cs.CoreV1().Pods(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	})
	if err != nil {
		return nil, fmt.Errorf("annotating pod %s/%s: %w", namespace, name, err)
	}
	if pod.UID != uid {
		return nil, fmt.Errorf("annotating pod %s/%s: it is another pod now (UID %s, want %s)", namespace, name, pod.UID, uid)
	}
	return pod, nil
}

// DeletePodUID deletes a pod only if it still has the given UID (so a pod
// recreated in the meantime is left alone). A pod that is already gone, or
// was replaced, counts as deleted. Transient errors are retried.
func (c *Client) DeletePodUID(ctx context.Context, namespace, name string, uid types.UID) error {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := retry.OnError(apiBackoff, IsTransient, func() error {
		return c.cs.CoreV1().Pods(namespace).Delete(ctx, name, opts)
	})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err) && uid != "":
		// The UID precondition failed, so the pod with that UID should be
		// gone; make sure before counting it as deleted.
		cur, getErr := c.FetchPod(ctx, namespace, name)
		if apierrors.IsNotFound(getErr) || (getErr == nil && cur.UID != uid) {
			return nil
		}
		if getErr != nil {
			return fmt.Errorf("deleting pod %s/%s: %w (and reading it back: %v)", namespace, name, err, getErr)
		}
		return fmt.Errorf("deleting pod %s/%s: %w", namespace, name, err)
	default:
		return fmt.Errorf("deleting pod %s/%s: %w", namespace, name, err)
	}
}

// LogReader reads the bounded log of one container. *Client is the real
// implementation; tests substitute one because client-go's fake clientset
// answers every log request with "fake logs".
type LogReader interface {
	ReadContainerLog(ctx context.Context, namespace, pod, container string, previous bool) (string, error)
}

var _ LogReader = (*Client)(nil)

// ReadContainerLog reads the tail of a container's log, bounded by the
// client's LogTailBytes and LogTailLines. previous selects the previous
// instance of the container.
func (c *Client) ReadContainerLog(ctx context.Context, namespace, pod, container string, previous bool) (string, error) {
	limit, lines := c.opts.LogTailBytes, c.opts.LogTailLines
	req := c.cs.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, Previous: previous, LimitBytes: &limit, TailLines: &lines,
	})
	stream, err := req.Stream(ctx)
	if err != nil {
		return "", fmt.Errorf("reading logs of %s/%s container %s: %w", namespace, pod, container, err)
	}
	defer stream.Close()
	b, err := io.ReadAll(io.LimitReader(stream, limit))
	if err != nil {
		return "", fmt.Errorf("reading logs of %s/%s container %s: %w", namespace, pod, container, err)
	}
	return string(b), nil
}
