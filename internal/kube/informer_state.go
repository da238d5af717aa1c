// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// ErrStateConflict is returned by StateConfigMap.Write when the ConfigMap
// changed since the resourceVersion the caller read (optimistic concurrency):
// read it again, merge, and retry.
var ErrStateConflict = errors.New("state ConfigMap changed since it was read")

// StateConfigMap is one ConfigMap the bot keeps its own state in (the
// sweep's alert state). Reads come from an informer on that single object,
// so watching it costs no request after the first list; writes carry the
// resourceVersion that was read, so two writers never overwrite each other.
type StateConfigMap struct {
	c         *Client
	namespace string
	name      string
	informer  cache.SharedIndexInformer
}

// NewStateConfigMap returns the state ConfigMap namespace/name. Nothing is
// sent to the API server until Start, Read or Write.
func (c *Client) NewStateConfigMap(namespace, name string) *StateConfigMap {
	lw := restrictedListWatch(c.cs.CoreV1().ConfigMaps(namespace), byName(name))
	inf := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, c.cs),
		&corev1.ConfigMap{}, cache.SharedIndexInformerOptions{ObjectDescription: "state configmap " + name})
	return &StateConfigMap{c: c, namespace: namespace, name: name, informer: inf}
}

// String returns "namespace/name".
func (s *StateConfigMap) String() string { return s.namespace + "/" + s.name }

// Start starts the informer; it stops when ctx ends.
func (s *StateConfigMap) Start(ctx context.Context) { go s.informer.RunWithContext(ctx) }

// OnListError registers f, called with each error of the informer's list
// or watch (forbidden, namespace missing, no answer...) after client-go has
// logged it. Call it before Start.
func (s *StateConfigMap) OnListError(f func(error)) error {
	return s.informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		cache.DefaultWatchErrorHandler(ctx, r, err)
		f(err)
	})
}

// Synced reports whether the informer has listed the ConfigMap once.
func (s *StateConfigMap) Synced() bool { return s.informer.HasSynced() }

// Namespace is the namespace the ConfigMap lives in.
func (s *StateConfigMap) Namespace() string { return s.namespace }

// WaitForCacheSync blocks until the informer has listed once, or ctx ends.
func (s *StateConfigMap) WaitForCacheSync(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return fmt.Errorf("waiting for the cache of ConfigMap %s: %w", s, context.Cause(ctx))
	}
	return nil
}

// Cached returns the informer's copy of the ConfigMap, or nil when it does
// not exist (or the informer has not synced). It costs no request. The
// result must not be modified.
func (s *StateConfigMap) Cached() *corev1.ConfigMap {
	obj, ok, err := s.informer.GetStore().GetByKey(s.namespace + "/" + s.name)
	if err != nil || !ok {
		return nil
	}
	cm, _ := obj.(*corev1.ConfigMap)
	return cm
}

// Read gets the ConfigMap from the API server (one request), for the moments
// that must not act on a stale copy: becoming leader, resolving a conflict.
// It returns nil, nil when the ConfigMap does not exist yet.
func (s *StateConfigMap) Read(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := s.c.cs.CoreV1().ConfigMaps(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s: %w", s, err)
	}
	return cm, nil
}

// Write stores data. resourceVersion is the version the data was based on:
// "" creates the ConfigMap (ErrStateConflict if it already exists), anything
// else updates it only if it is still at that version. It returns the new
// resourceVersion.
func (s *StateConfigMap) Write(ctx context.Context, resourceVersion string, data map[string]string) (string, error) {
	cms := s.c.cs.CoreV1().ConfigMaps(s.namespace)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.name, Namespace: s.namespace, ResourceVersion: resourceVersion,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "kafkabot"},
		},
		Data: data,
	}
	var (
		out *corev1.ConfigMap
		err error
	)
	if resourceVersion == "" {
		out, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	} else {
		out, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	}
	switch {
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err), resourceVersion != "" && apierrors.IsNotFound(err):
		return "", fmt.Errorf("writing ConfigMap %s: %w", s, errors.Join(ErrStateConflict, err))
	case err != nil:
		return "", fmt.Errorf("writing ConfigMap %s: %w", s, err)
	}
	return out.ResourceVersion, nil
}
