// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// listWatchable is a typed client of one resource in one namespace, such as
// CoreV1().Pods(ns) or CoreV1().ConfigMaps(ns).
type listWatchable[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// restrictedListWatch lists and watches through client with restrict
// applied to every request's options (a field or label selector).
func restrictedListWatch[L runtime.Object](client listWatchable[L], restrict func(*metav1.ListOptions)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			restrict(&o)
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			restrict(&o)
			return client.Watch(ctx, o)
		},
	}
}

// byName restricts a list or watch to the object called name.
func byName(name string) func(*metav1.ListOptions) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return func(o *metav1.ListOptions) { o.FieldSelector = sel }
}
